package dev.webtensor;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The generated op methods match the loaded library's manifest, one class per op category
 * (make generate writes them; make generate-check fails when they are stale).
 */
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
            // A plugin's ops (loaded by other tests in this JVM) are called by name.
            if (op.path("internal").asBoolean() || name.startsWith("_")
                    || op.get("category").asText().equals("plugin")) {
                continue;
            }
            n++;
            assertTrue(statics.contains(camel(name)), "no Ops." + camel(name) + " for op " + name);
        }
        assertTrue(n > 100, "the manifest lists " + n + " public ops");
    }

    static String pascal(String s) {
        String c = camel(s);
        return Character.toUpperCase(c.charAt(0)) + c.substring(1);
    }

    /** One class per op category declares the category's static functions; Ops inherits them all. */
    @Test
    void eachCategoryIsOneClass() throws Exception {
        Map<String, Set<String>> byCategory = new TreeMap<>();
        for (JsonNode op : Safetensors.JSON.readTree(Webtensor.manifestJson()).get("ops")) {
            String name = op.get("name").asText();
            if (!op.path("internal").asBoolean() && !name.startsWith("_")
                    && !op.get("category").asText().equals("plugin")) {
                byCategory.computeIfAbsent(op.get("category").asText(), k -> new TreeSet<>()).add(camel(name));
            }
        }
        for (Map.Entry<String, Set<String>> e : byCategory.entrySet()) {
            Class<?> c = Class.forName("dev.webtensor.Ops" + pascal(e.getKey()));
            Set<String> declared = Arrays.stream(c.getDeclaredMethods())
                    .filter(m -> Modifier.isStatic(m.getModifiers())).map(Method::getName)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(e.getValue(), declared, "the static functions of " + c.getSimpleName());
            assertTrue(c.isAssignableFrom(Ops.class), "Ops does not extend " + c.getSimpleName());
        }
        // Reflection (scripting languages) reaches an inherited function through Ops.
        Method relu = Ops.class.getMethod("relu", Tensor.class);
        assertEquals("OpsActivation", relu.getDeclaringClass().getSimpleName());
        assertTrue(Modifier.isPublic(relu.getDeclaringClass().getModifiers()));
        assertEquals(Tensor.class, Tensor.class.getMethod("softmax").getReturnType());
    }
}
