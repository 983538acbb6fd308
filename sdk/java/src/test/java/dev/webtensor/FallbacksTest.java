package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Webtensor.fallbacks: CPU fallbacks and declared host work, counted per device and op, and reset. */
class FallbacksTest {
    @Test
    void parsesTheLibrarysJson() {
        List<Fallback> fb = Fallback.parse("[{\"device\":\"webgpu:0\",\"op\":\"a.b\",\"count\":3,\"kind\":\"cpu\"},"
                + "{\"device\":\"webgpu:0\",\"op\":\"spmm\",\"count\":12,\"kind\":\"host\",\"reason\":\"reads \\\"indptr\\\" back\\u0021\","
                + "\"later\":[1,2],\"flag\":true},{\"count\":1,\"op\":\"old\",\"device\":\"cuda:0\"}]");
        assertEquals(List.of(new Fallback("webgpu:0", "a.b", 3, Fallback.CPU, ""),
                new Fallback("webgpu:0", "spmm", 12, Fallback.HOST, "reads \"indptr\" back!"),
                new Fallback("cuda:0", "old", 1, Fallback.CPU, "")), fb.subList(0, 3));
        assertEquals(List.of(), Fallback.parse(" [ ] "));
    }

    /** On WebGPU: a plugin op without WGSL runs on the CPU (kind cpu), segment_sum buckets its rows on the host (kind host). */
    @Test
    void countsFallbacksAndHostWorkOnWebGPU() throws Exception {
        if (!Webtensor.devices().contains("webgpu:0")) { // skip only where the machine has no adapter
            String why = ConformanceRunnerTest.openProblem("webgpu");
            assumeFalse(why.startsWith("unavailable"), why);
            fail(why);
        }
        Path wasm = Path.of(System.getProperty("webtensor.repo", "../.."), "build", "plugins", "goswish.wasm");
        assumeTrue(Files.exists(wasm), "run `make plugins` to build " + wasm);
        Webtensor.loadPlugin(Files.readAllBytes(wasm), "goswish.wasm");
        Webtensor.fallbacks(true);
        try (Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2).to("webgpu");
             Tensor ids = Tensor.of(new long[] {1, 0}).to("webgpu");
             Tensor y = Webtensor.op("goswish.swish", new Tensor[] {x})[0];
             Tensor z = Webtensor.op("segment_sum", new Tensor[] {x, ids}, Attr.of("num_segments", 2))[0]) {
            assertEquals("webgpu:0", y.device());
            assertEquals(4, z.toFloatArray().length);
        }
        List<Fallback> fb = Webtensor.fallbacks(true);
        assertTrue(fb.contains(new Fallback("webgpu:0", "goswish.swish", 1, Fallback.CPU, "")), fb.toString());
        Fallback host = fb.stream().filter(f -> f.op().equals("segment_sum")).findFirst().orElseThrow();
        assertEquals(Fallback.HOST, host.kind());
        assertEquals(1, host.count());
        assertFalse(host.reason().isEmpty(), "host work says what the host does");
        assertEquals(List.of(), Webtensor.fallbacks(false), "reset cleared the counts");
    }

    /** setNumThreads like torch.set_num_threads: 1 runs ops on one thread, 0 restores the default. */
    @Test
    void numThreadsCanBeSetAndRestored() {
        int before = Webtensor.getNumThreads();
        try {
            Webtensor.setNumThreads(1);
            assertEquals(1, Webtensor.getNumThreads());
            assertThrows(WebtensorException.class, () -> Webtensor.setNumThreads(1 << 20));
        } finally {
            Webtensor.setNumThreads(0);
        }
        assertEquals(before, Webtensor.getNumThreads());
    }
}
