package dev.webtensor;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The generated op methods match the loaded library's manifest. */
class GeneratedTest {
    static String camel(String s) {
        StringBuilder b = new StringBuilder();
        boolean up = false;
        for (char c : s.toCharArray()) {
            if (c == '_') {
                up = b.length() > 0;
            } else {
                b.append(up ? Character.toUpperCase(c) : c);
                up = false;
            }
        }
        return b.toString();
    }

    @Test
    void everyPublicOpHasAStaticFunction() throws Exception {
        Set<String> statics = Arrays.stream(Ops.class.getMethods()).filter(m -> Modifier.isStatic(m.getModifiers()))
                .map(Method::getName).collect(Collectors.toSet());
        int n = 0;
        for (JsonNode op : Safetensors.JSON.readTree(Webtensor.manifestJson()).get("ops")) {
            String name = op.get("name").asText();
            if (op.path("internal").asBoolean() || name.startsWith("_")) {
                continue;
            }
            n++;
            assertTrue(statics.contains(camel(name)), "no Ops." + camel(name) + " for op " + name);
        }
        assertTrue(n > 100, "the manifest lists " + n + " public ops");
    }

    @Test
    void generatedFilesAreUpToDate() throws Exception {
        // Regenerate from the library's own manifest in --check mode; the generator is a
        // JDK source program, run with this JVM's java.
        Path manifest = Files.createTempFile("webtensor-manifest", ".json");
        try {
            Files.writeString(manifest, Webtensor.manifestJson());
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "gen/GenOps.java", "--manifest", manifest.toString(), "--check",
                    "--out", "src/main/java/dev/webtensor").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.waitFor(), out);
        } finally {
            Files.deleteIfExists(manifest);
        }
    }
}
