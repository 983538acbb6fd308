package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A WebAssembly plugin's ops through Webtensor.op, with autograd (build/plugins/cclip.wasm, from `make plugins`). */
class PluginTest {
    @Test
    void cclipOpsRunWithAutograd() throws Exception {
        Path wasm = Path.of(System.getProperty("webtensor.repo", "../.."), "build", "plugins", "cclip.wasm");
        assumeTrue(Files.exists(wasm), "run `make plugins` to build " + wasm);
        assertEquals("cclip", Webtensor.loadPlugin(Files.readAllBytes(wasm), "cclip.wasm"));
        assertTrue(Webtensor.pluginOpsJson("cclip").contains("cclip.soft_clip"));
        float[] v = {-3, -0.5f, 0, 1, 4};
        try (Tensor x = Tensor.of(v).requiresGrad(true);
             Tensor y = Webtensor.op("cclip.soft_clip", new Tensor[] {x}, Attr.of("limit", 2.0))[0];
             Tensor s = y.sum()) {
            float[] got = y.toFloatArray();
            for (int i = 0; i < v.length; i++) {
                assertEquals(2 * Math.tanh(v[i] / 2), got[i], 1e-6);
            }
            s.backward();
            try (Tensor g = x.grad();
                 Tensor n = Webtensor.op("cclip.count_above", new Tensor[] {x}, Attr.of("threshold", 0.5))[0]) {
                float[] gv = g.toFloatArray();
                for (int i = 0; i < v.length; i++) {
                    double t = Math.tanh(v[i] / 2);
                    assertEquals(1 - t * t, gv[i], 1e-5);
                }
                assertArrayEquals(new long[] {2}, new long[] {(long) n.item()});
            }
        }
        WebtensorException dup = assertThrows(WebtensorException.class,
                () -> Webtensor.loadPlugin(Files.readAllBytes(wasm), "again.wasm"));
        assertTrue(dup.getMessage().contains("cclip"), dup.getMessage());
        assertThrows(WebtensorException.class, () -> Webtensor.loadPlugin(new byte[] {0, 1, 2}, "garbage.wasm"));
    }

    /** The jar carries the default tuning policy; it loads once, is set and cleared; the CPU tunes nothing. */
    @Test
    void defaultTuningPolicyLoads() {
        Webtensor.setTuningPolicy("default");
        Webtensor.setTuningPolicy("default");
        Webtensor.setTuningPolicy((String) null);
        assertEquals("{}", Webtensor.deviceTuningJson("cpu"));
        assertThrows(WebtensorException.class, () -> Webtensor.setTuningPolicy("not-loaded", null));
    }
}
