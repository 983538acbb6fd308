package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The core, plugin, ONNX and CUDA names the Java SDK shares with Python's
 * (docs/parity.md): UnsupportedError, isTensor, manifest, scope,
 * synchronize, fromDlpack, call, Plugin, deviceTuning, Onnx.ValueInfo, Cuda.
 */
class ParityTest {
    @Test
    void unsupportedRequestsAreUnsupportedErrors() {
        UnsupportedError e = assertThrows(UnsupportedError.class, () -> Tensor.zeros(2).to("cuda:7"));
        assertEquals(WebtensorException.UNSUPPORTED, e.status());
        assertInstanceOf(WebtensorException.class, e);
        WebtensorException invalid = assertThrows(WebtensorException.class, () -> Webtensor.op("no_such_op", new Tensor[0]));
        assertFalse(invalid instanceof UnsupportedError, "other statuses stay WebtensorException");
    }

    @Test
    void isTensorManifestCallSynchronize() {
        try (Tensor x = Tensor.of(new float[] {1, 2, 3})) {
            assertTrue(Webtensor.isTensor(x));
            assertFalse(Webtensor.isTensor(new float[] {1}));
            Map<String, Object> m = Webtensor.manifest();
            List<?> ops = (List<?>) m.get("ops");
            assertTrue(ops.stream().anyMatch(o -> "softmax".equals(((Map<?, ?>) o).get("name"))), "the manifest lists softmax");
            try (Tensor s = Webtensor.call("softmax", new Tensor[] {x}, Attr.of("axis", 0L))) {
                float[] v = s.toFloatArray();
                assertEquals(0.66524096f, v[2], 1e-6f);
            }
            IllegalArgumentException several = assertThrows(IllegalArgumentException.class,
                    () -> Webtensor.call("split", new Tensor[] {x}, Attr.of("sizes", 1L, 2L)));
            assertTrue(several.getMessage().contains("split has 2 outputs"), several.getMessage());
            Webtensor.synchronize("cpu");
            assertEquals(Map.of(), Webtensor.deviceTuning("cpu"), "the CPU tunes nothing");
        }
    }

    @Test
    void scopeClosesWhatItMadeExceptWhatItKeeps() throws InterruptedException {
        long before = LeakTest.settledLiveCount();
        Tensor kept;
        Tensor dropped;
        try (Scope s = Webtensor.scope()) {
            dropped = Tensor.of(new float[] {1, 2}).add(1);
            kept = s.keep(dropped.mul(2));
        }
        assertTrue(dropped.isClosed());
        assertFalse(kept.isClosed());
        assertEquals(before + 1, Webtensor.liveTensors());
        Tensor inner;
        try (Scope outer = Webtensor.scope()) {
            Scope s2 = Webtensor.scope();
            assertThrows(IllegalStateException.class, outer::close, "inner first");
            inner = s2.keep(Tensor.of(new float[] {3}));
            s2.close();
            assertFalse(inner.isClosed(), "kept by the inner scope");
        }
        assertTrue(inner.isClosed(), "then the outer scope's");
        kept.close();
        assertEquals(before, Webtensor.liveTensors());
    }

    @Test
    void fromDlpackTakesAnotherLibrarysExport() {
        long exports = Webtensor.liveDlpackExports();
        try (Tensor src = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2); Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            Native.call(Abi.TO_DLPACK_VERSIONED, src.handle(), out); // what a producer library hands out
            MemorySegment managed = out.get(ADDRESS, 0);
            try (Tensor t = Tensor.fromDlpack(managed)) {
                assertArrayEquals(new long[] {2, 2}, t.shape());
                assertArrayEquals(new float[] {1, 2, 3, 4}, t.toFloatArray());
                assertEquals(exports + 1, Webtensor.liveDlpackExports());
            }
        }
        assertThrows(IllegalArgumentException.class, () -> Tensor.fromDlpack(MemorySegment.NULL));
    }

    @Test
    void pluginsByClass() throws Exception {
        WebtensorException unknown = assertThrows(WebtensorException.class, () -> Plugin.of("not_loaded"));
        assertTrue(unknown.getMessage().contains("not_loaded"), unknown.getMessage());
        Path wasm = Path.of(System.getProperty("webtensor.repo", "../.."), "build", "plugins", "goswish.wasm");
        if (!Files.exists(wasm)) {
            return; // `make plugins` builds it; PluginTest covers loading when it is there
        }
        boolean loaded = ((List<?>) Webtensor.manifest().get("ops")).stream()
                .anyMatch(o -> "goswish.swish".equals(((Map<?, ?>) o).get("name"))); // another test of this JVM loaded it
        Plugin p = loaded ? Plugin.of("goswish") : Plugin.load(Files.readAllBytes(wasm), "goswish.wasm");
        assertEquals("goswish", p.name());
        assertTrue(p.ops().stream().allMatch(o -> o.startsWith("goswish.")), p.ops().toString());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> p.call("nope", new Tensor[0]));
        assertTrue(none.getMessage().contains("plugin goswish has no op nope"), none.getMessage());
        assertTrue(p.ops().contains("goswish.swish"), p.ops().toString());
        try (Tensor x = Tensor.of(new float[] {0, 1}); Tensor y = p.call("swish", new Tensor[] {x})[0]) {
            assertArrayEquals(new float[] {0, 0.7310586f}, y.toFloatArray(), 1e-6f); // x·sigmoid(x)
        }
    }

    @Test
    void onnxValueInfo() throws Exception {
        Path model = Path.of(System.getProperty("webtensor.repo", "../.."), "onnx", "testdata", "sdk_model.onnx");
        try (Onnx m = Onnx.load(model)) {
            assertEquals(m.inputNames(), m.inputs().stream().map(Onnx.ValueInfo::name).toList());
            assertEquals(m.outputNames(), m.outputs().stream().map(Onnx.ValueInfo::name).toList());
            Onnx.ValueInfo x = m.inputs().get(0);
            assertEquals("f32", x.dtype());
            assertEquals(2, x.shape().size());
        }
    }

    @Test
    void cudaAnswersAreTheLibrarys() {
        long here = Webtensor.devices().stream().filter(d -> d.startsWith("cuda")).count();
        assertEquals(here, Cuda.deviceCount());
        assertEquals(here > 0, Cuda.isAvailable());
        assertThrows(IllegalArgumentException.class, () -> Cuda.getDeviceProperties("cpu"));
        if (!Cuda.isAvailable()) {
            // Each call that needs the device says why it does not open.
            for (Runnable r : List.<Runnable>of(Cuda::getDeviceProperties, Cuda::memoryAllocated, Cuda::emptyCache, Cuda::synchronize,
                    Cuda::currentStream, () -> Cuda.setAllowTf32(true))) {
                UnsupportedError e = assertThrows(UnsupportedError.class, r::run);
                assertTrue(e.getMessage().contains("cuda"), e.getMessage());
            }
            return;
        }
        assertInstanceOf(Map.class, Cuda.getDeviceProperties().get("cuda"));
        try (Tensor x = Ops.ones(new long[] {1024, 1024}, DType.F32, "cuda")) {
            Cuda.synchronize();
            assertTrue(Cuda.memoryAllocated() >= 4L << 20);
            assertTrue(Cuda.memoryReserved() >= Cuda.memoryAllocated());
            assertInstanceOf(Long.class, Cuda.memoryStats().get("PeakAllocated"));
        }
        Cuda.setAllowTf32(true);
        assertEquals(Boolean.TRUE, Cuda.getDeviceProperties().get("allow_tf32"));
        Cuda.setAllowTf32(false);
        Cuda.currentStream();
        Cuda.emptyCache();
    }
}
