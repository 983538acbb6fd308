package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MemorySegments and tensors sharing CPU memory, both ways. */
class ZeroCopyTest {
    @Test
    void segmentWritesAreSeenByTheTensor() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocateFrom(JAVA_FLOAT, 1, 2, 3, 4, 5, 6);
            try (Tensor t = Tensor.fromSegment(seg, DType.F32, 2, 3)) {
                assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, t.toFloatArray());
                seg.setAtIndex(JAVA_FLOAT, 4, 50f);
                assertEquals(50f, t.toFloatArray()[4], "the tensor reads the segment's memory");
                try (Tensor s = t.sum()) {
                    assertEquals(1 + 2 + 3 + 4 + 50 + 6, s.item(), 1e-6, "ops read it too");
                }
            }
        }
    }

    @Test
    void tensorWritesAreSeenThroughTheSegment() {
        long exports = Webtensor.liveDlpackExports();
        try (Tensor t = Tensor.of(new float[] {1, 2, 3})) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment seg = t.asSegment(arena);
                assertEquals(12, seg.byteSize());
                assertEquals(exports + 1, Webtensor.liveDlpackExports());
                seg.setAtIndex(JAVA_FLOAT, 1, -20f);
                assertArrayEquals(new float[] {1, -20, 3}, t.toFloatArray(), "the segment is the tensor's memory");
                try (Tensor u = t.mul(2)) {
                    assertArrayEquals(new float[] {2, -40, 6}, u.toFloatArray());
                }
            }
            assertEquals(exports, Webtensor.liveDlpackExports(), "closing the arena runs the export's deleter");
        }
    }

    @Test
    void segmentOutlivesTheTensor() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg;
            try (Tensor t = Tensor.of(new float[] {7, 8})) {
                seg = t.asSegment(arena);
            }
            assertEquals(8f, seg.getAtIndex(JAVA_FLOAT, 1), "the export keeps the memory after close()");
        }
    }

    @Test
    void roundTripThroughTwoTensors() {
        try (Tensor a = Tensor.of(new float[] {1, 2, 3, 4}); Arena arena = Arena.ofConfined()) {
            MemorySegment seg = a.asSegment(arena);
            try (Tensor b = Tensor.fromSegment(seg, DType.F32, 4)) {
                seg.setAtIndex(JAVA_FLOAT, 0, 100f);
                assertEquals(100f, a.toFloatArray()[0]);
                assertEquals(100f, b.toFloatArray()[0], "a, the segment and b are one buffer");
            }
        }
    }

    @Test
    void stridedImport() {
        try (Arena arena = Arena.ofConfined()) {
            // A 2x3 view of every other element of a 12-element buffer.
            MemorySegment seg = arena.allocate(JAVA_FLOAT, 12);
            for (int i = 0; i < 12; i++) {
                seg.setAtIndex(JAVA_FLOAT, i, i);
            }
            try (Tensor t = Tensor.fromSegment(seg, DType.F32, new long[] {2, 3}, new long[] {6, 2})) {
                assertFalse(t.isContiguous());
                assertArrayEquals(new long[] {6, 2}, t.strides());
                assertArrayEquals(new float[] {0, 2, 4, 6, 8, 10}, t.toFloatArray());
            }
            assertThrows(IllegalArgumentException.class,
                    () -> Tensor.fromSegment(seg, DType.F32, new long[] {4, 3}, new long[] {6, 2}),
                    "a layout past the segment's end is refused before the library sees it");
        }
    }

    @Test
    void readOnlySegmentsGiveReadOnlyTensors() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocateFrom(JAVA_FLOAT, 1, 2).asReadOnly();
            try (Tensor t = Tensor.fromSegment(seg, DType.F32, 2); Tensor u = t.add(1);
                 Arena a2 = Arena.ofConfined()) {
                assertArrayEquals(new float[] {2, 3}, u.toFloatArray());
                assertTrue(t.asSegment(a2).isReadOnly(), "a read-only import stays read-only on export");
            }
        }
    }

    @Test
    void importsAreReleasedWhenTheTensorGoes() throws InterruptedException {
        // The library calls the import's deleter (an upcall, from one of its own threads) once the
        // tensor and its views are gone; the SDK then drops its hold on the segment.
        int before = DLPack.liveImports();
        try (Arena arena = Arena.ofShared()) {
            Tensor t = Tensor.fromSegment(arena.allocate(JAVA_FLOAT, 4), DType.F32, 4);
            Tensor view = t.reshape(2, 2);
            assertEquals(before + 1, DLPack.liveImports());
            t.close();
            assertEquals(before + 1, DLPack.liveImports(), "a view still uses the memory");
            view.close();
            // The library drops the memory when Go's collector finds the storage unreachable; work
            // that allocates on the Go side brings a collection on (Go also forces one every 2 minutes).
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (DLPack.liveImports() >= before + 1 && System.nanoTime() < deadline) {
                for (int i = 0; i < 200; i++) {
                    try (Tensor a = Tensor.zeros(256); Tensor b = a.add(a)) {
                        b.numel();
                    }
                }
            }
            assertTrue(DLPack.liveImports() <= before, "the deleter ran");
        }
    }

    @Test
    void heapSegmentsAreCopied() {
        float[] data = {1, 2};
        try (Tensor t = Tensor.fromSegment(MemorySegment.ofArray(data), DType.F32, 2)) {
            data[0] = 9;
            assertEquals(1f, t.toFloatArray()[0], "heap memory cannot be shared with native code, so it is copied");
        }
    }

    @Test
    void autoArenaMemoryStaysAliveWithTheTensor() throws InterruptedException {
        Tensor t = Tensor.fromSegment(Arena.ofAuto().allocateFrom(JAVA_LONG, 5, 6, 7), DType.I64, 3);
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertArrayEquals(new long[] {5, 6, 7}, t.toLongArray(), "the import holds the segment, not the caller");
        t.close();
    }

    @Test
    void copyToAndToSegment() {
        try (Tensor t = Tensor.of(new float[] {1, 2, 3}); Arena arena = Arena.ofConfined()) {
            MemorySegment copy = t.toSegment(arena);
            copy.setAtIndex(JAVA_FLOAT, 0, 42f);
            assertEquals(1f, t.toFloatArray()[0], "toSegment copies");
            float[] out = new float[3];
            t.copyTo(MemorySegment.ofArray(out));
            assertArrayEquals(new float[] {1, 2, 3}, out);
        }
    }
}
