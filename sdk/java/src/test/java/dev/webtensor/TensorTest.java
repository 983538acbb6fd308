package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Construction, metadata, conversions and a few ops by hand. */
class TensorTest {
    @Test
    void issueExample() {
        try (var x = Tensor.randn(3, 4); var y = x.matmul(x.transpose(0, 1))) {
            float[] v = y.toFloatArray();
            float[] xs = x.toFloatArray();
            assertArrayEquals(new long[] {3, 3}, y.shape());
            for (int i = 0; i < 3; i++) {
                for (int j = 0; j < 3; j++) {
                    double want = 0;
                    for (int k = 0; k < 4; k++) {
                        want += xs[i * 4 + k] * xs[j * 4 + k];
                    }
                    assertEquals(want, v[i * 3 + j], 1e-5);
                }
            }
            assertEquals(v[1], v[3], 0f, "x x^T is symmetric");
        }
    }

    @Test
    void fromArraysAndBack() {
        try (Tensor f = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
             Tensor d = Tensor.of(new double[] {1.5, -2.25});
             Tensor l = Tensor.of(new long[] {1L << 40, -7});
             Tensor i = Tensor.of(new int[] {7, -8, 9}, 3, 1);
             Tensor s = Tensor.of(new short[] {-3, 4});
             Tensor b = Tensor.of(new byte[] {-1, 2});
             Tensor z = Tensor.of(new boolean[] {true, false, true})) {
            assertEquals(DType.F32, f.dtype());
            assertArrayEquals(new long[] {2, 3}, f.shape());
            assertArrayEquals(new long[] {3, 1}, f.strides());
            assertEquals(6, f.numel());
            assertEquals(2, f.ndim());
            assertEquals("cpu", f.device());
            assertTrue(f.isContiguous());
            assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, f.toFloatArray());
            assertArrayEquals(new double[] {1.5, -2.25}, d.toDoubleArray());
            assertArrayEquals(new long[] {1L << 40, -7}, l.toLongArray());
            assertEquals(DType.I32, i.dtype());
            assertArrayEquals(new int[] {7, -8, 9}, i.toIntArray());
            assertArrayEquals(new long[] {-3, 4}, s.toLongArray());
            assertEquals(DType.I8, b.dtype());
            assertArrayEquals(new byte[] {-1, 2}, b.toBytes());
            assertEquals(DType.BOOL, z.dtype());
            assertArrayEquals(new boolean[] {true, false, true}, z.toBooleanArray());
            assertArrayEquals(new float[] {1, 0, 1}, z.toFloatArray(), "bool casts to f32");
        }
    }

    @Test
    void halfPrecisionFromBytes() {
        ByteBuffer b = ByteBuffer.allocate(6).order(ByteOrder.LITTLE_ENDIAN);
        b.putShort(Float.floatToFloat16(1.5f)).putShort(Float.floatToFloat16(-2f)).putShort(Float.floatToFloat16(0.25f));
        try (Tensor h = Tensor.fromBytes(b.array(), DType.F16, 3); Tensor s = h.add(h)) {
            assertEquals(DType.F16, s.dtype());
            assertArrayEquals(new float[] {3f, -4f, 0.5f}, s.toFloatArray());
        }
        try (Tensor bf = Tensor.scalar(2.5, DType.BF16)) {
            assertEquals(DType.BF16, bf.dtype());
            assertEquals(2.5, bf.item());
        }
    }

    @Test
    void scalarsAndItem() {
        try (Tensor s = Tensor.scalar(4.0); Tensor r = s.sqrt(); Tensor p = r.pow(3); Tensor m = p.mul(0.5)) {
            assertEquals(0, s.ndim());
            assertArrayEquals(new long[0], s.shape());
            assertEquals(4.0, m.item(), 1e-6);
        }
        try (Tensor i = Tensor.scalar(7, DType.I64); Tensor j = i.add(1)) {
            assertEquals(DType.I64, j.dtype(), "an integral Java number keeps an integer dtype");
            assertEquals(8, j.item());
        }
    }

    @Test
    void creationAndShapes() {
        try (Tensor z = Tensor.zeros(2, 3); Tensor o = Tensor.ones(2, 3); Tensor f = Tensor.full(7, 2, 2);
             Tensor a = Tensor.arange(6); Tensor r = a.reshape(2, 3); Tensor t = r.transpose();
             Tensor c = t.contiguous(); Tensor e = Ops.eye(3)) {
            assertArrayEquals(new float[6], z.toFloatArray());
            assertArrayEquals(new float[] {1, 1, 1, 1, 1, 1}, o.toFloatArray());
            assertArrayEquals(new float[] {7, 7, 7, 7}, f.toFloatArray());
            assertEquals(DType.I64, a.dtype());
            assertArrayEquals(new long[] {3, 2}, t.shape());
            assertFalse(t.isContiguous(), "transpose is a view");
            assertArrayEquals(new long[] {0, 3, 1, 4, 2, 5}, c.toLongArray());
            assertArrayEquals(new float[] {1, 0, 0, 0, 1, 0, 0, 0, 1}, e.toFloatArray());
        }
    }

    @Test
    void reductionsSoftmaxAndAttributes() {
        try (Tensor x = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
             Tensor all = x.sum(); Tensor rows = x.sum(new long[] {1}, true); Tensor sm = x.softmax(0);
             Tensor am = x.argmax(1L, false); Tensor cl = x.clamp(2.0, 5.0)) {
            assertEquals(21, all.item(), 1e-6);
            assertArrayEquals(new long[] {2, 1}, rows.shape());
            assertArrayEquals(new float[] {6, 15}, rows.toFloatArray());
            float[] s = sm.toFloatArray();
            assertEquals(1.0, s[0] + s[3], 1e-6);
            assertArrayEquals(new long[] {2, 2}, am.toLongArray());
            assertArrayEquals(new float[] {2, 2, 3, 4, 5, 5}, cl.toFloatArray());
        }
    }

    @Test
    void multiOutputOps() {
        try (Tensor x = Tensor.of(new float[] {3, 1, 2, 5, 4})) {
            Tensor[] top = x.topk(2);
            Tensor[] parts = x.split(new long[] {2, 3}, null, 0);
            try (Tensor v = top[0]; Tensor i = top[1]; Tensor p0 = parts[0]; Tensor p1 = parts[1]) {
                assertArrayEquals(new float[] {5, 4}, v.toFloatArray());
                assertArrayEquals(new long[] {3, 4}, i.toLongArray());
                assertArrayEquals(new float[] {3, 1}, p0.toFloatArray());
                assertArrayEquals(new float[] {2, 5, 4}, p1.toFloatArray());
            }
        }
        try (Tensor a = Tensor.of(new float[] {1, 2}); Tensor b = Tensor.of(new float[] {3});
             Tensor c = Ops.concat(a, b); Tensor s = Ops.stack(1, a, a)) {
            assertArrayEquals(new float[] {1, 2, 3}, c.toFloatArray());
            assertArrayEquals(new long[] {2, 2}, s.shape());
        }
    }

    @Test
    void dtypeCastsAndDevices() {
        try (Tensor x = Tensor.of(new float[] {1.7f, -2.2f}); Tensor i = x.to(DType.I32); Tensor c = x.to("cpu")) {
            assertEquals(DType.I32, i.dtype());
            assertArrayEquals(new int[] {1, -2}, i.toIntArray());
            assertArrayEquals(x.toFloatArray(), c.toFloatArray());
        }
        assertTrue(Webtensor.devices().contains("cpu"));
        assertEquals("0.1.0", Webtensor.version());
        assertEquals(1, Webtensor.abiVersion());
        assertTrue(Webtensor.buildInfo().contains("\"abi\""));
    }

    @Test
    void seedsAreReproducible() {
        Webtensor.manualSeed(42);
        float[] a, b;
        try (Tensor t = Tensor.randn(5)) {
            a = t.toFloatArray();
        }
        long[] state = Webtensor.rngState();
        Webtensor.manualSeed(42);
        try (Tensor t = Tensor.randn(5)) {
            b = t.toFloatArray();
        }
        assertArrayEquals(a, b);
        assertEquals(42, state[0]);
    }

    @Test
    void toStringShowsSmallTensors() {
        Tensor t = Tensor.of(new float[] {1, 2});
        assertEquals("Tensor(f32[2], cpu, [1.0, 2.0])", t.toString());
        t.close();
        assertEquals("Tensor(<closed>)", t.toString());
    }

    @Test
    void unsignedDTypes() {
        assertEquals(DType.U16, DType.fromCode(14));
        assertEquals(DType.U64, DType.of("u64"));
        // A u64 travels as a long holding its bits: 2^64 - 1 is -1L, 2^63 + 5 is MIN_VALUE + 5.
        long[] bits = {-1L, Long.MIN_VALUE + 5, 3};
        try (var x = Tensor.of(bits, 3); var u = x.to(DType.U64); var m = u.max()) {
            assertEquals(DType.U64, u.dtype());
            assertArrayEquals(bits, u.toLongArray());
            assertEquals(-1L, m.toLongArray()[0], "max compares unsigned: 2^64 - 1 is the largest");
        }
        try (var big = Tensor.scalar(0x1p63, DType.U64); var neg = Tensor.scalar(-3, DType.U64);
             var huge = Tensor.scalar(1e30, DType.U64); var h = Tensor.scalar(65535, DType.U16)) {
            assertEquals(Long.MIN_VALUE, big.toLongArray()[0]);
            assertEquals(0L, neg.toLongArray()[0]);
            assertEquals(-1L, huge.toLongArray()[0]);
            assertEquals(65535L, h.toLongArray()[0]);
        }
    }
}
