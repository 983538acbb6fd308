package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * c64 and c128 (the JS suite's complex.test.mjs, in Java): data in and out as
 * interleaved parts, checked against complex arithmetic written out here,
 * not against the library itself.
 */
class ComplexTest {
    private static final double[][] A = {{1, 2}, {3, -4}, {-0.5, 0.25}, {0, 1.5}};
    private static final double[][] B = {{2, -1}, {0.5, 0.5}, {-3, 1}, {1, 0}};
    private static final double F32 = 1e-6;

    private static double[] cmul(double[] x, double[] y) {
        return new double[] {x[0] * y[0] - x[1] * y[1], x[0] * y[1] + x[1] * y[0]};
    }

    private static double[] cdiv(double[] x, double[] y) {
        double n = y[0] * y[0] + y[1] * y[1];
        return new double[] {(x[0] * y[0] + x[1] * y[1]) / n, (x[1] * y[0] - x[0] * y[1]) / n};
    }

    private static double[] cexp(double[] z) {
        return new double[] {Math.exp(z[0]) * Math.cos(z[1]), Math.exp(z[0]) * Math.sin(z[1])};
    }

    /** The pairs of zs interleaved, real first. */
    private static double[] flat(double[][] zs) {
        double[] out = new double[2 * zs.length];
        for (int i = 0; i < zs.length; i++) {
            out[2 * i] = zs[i][0];
            out[2 * i + 1] = zs[i][1];
        }
        return out;
    }

    private static float[] floats(double[] v) {
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) v[i];
        }
        return out;
    }

    /** Asserts got is want within tol relative to 1 + |want|, naming the index that is not. */
    private static void close(double[] want, double[] got, double tol, String what) {
        assertEquals(want.length, got.length, what + ": length");
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got[i], tol * (1 + Math.abs(want[i])), what + "[" + i + "]");
        }
    }

    private static void close(double[] want, float[] got, double tol, String what) {
        double[] g = new double[got.length];
        for (int i = 0; i < got.length; i++) {
            g[i] = got[i];
        }
        close(want, g, tol, what);
    }

    private static double[][] map2(double[][] a, double[][] b, java.util.function.BinaryOperator<double[]> f) {
        double[][] out = new double[a.length][];
        for (int i = 0; i < a.length; i++) {
            out[i] = f.apply(a[i], b[i]);
        }
        return out;
    }

    @Test
    void dtypes() {
        assertEquals(DType.C64, DType.fromCode(12));
        assertEquals(DType.C128, DType.fromCode(13));
        assertEquals(8, DType.C64.byteSize());
        assertEquals(16, DType.C128.byteSize());
        assertEquals(DType.C64, DType.of("c64"));
        assertTrue(DType.C128.isComplex());
        assertFalse(DType.C64.isFloating());
        assertFalse(DType.F64.isComplex());
        assertEquals(DType.F32, DType.C64.part());
        assertEquals(DType.F64, DType.C128.part());
    }

    @Test
    void interleavedPartsInAndOut() {
        float[] parts = floats(flat(A));
        try (Tensor z = Tensor.ofComplex(parts, 2, 2); Tensor one = Tensor.ofComplex(new double[] {3, -1});
             Tensor r = Tensor.of(new float[] {1, 2}); Tensor s = Tensor.scalar(2.5, DType.C64)) {
            assertEquals(DType.C64, z.dtype());
            assertArrayEquals(new long[] {2, 2}, z.shape());
            assertEquals(4, z.numel());
            assertArrayEquals(parts, z.toComplexFloatArray());
            assertEquals(32, z.toBytes().length);
            assertEquals(DType.C128, one.dtype());
            assertArrayEquals(new long[] {1}, one.shape());
            assertArrayEquals(new double[] {3, -1}, one.complexItem());
            assertEquals("Tensor(c128[1], cpu, [3.0-1.0i])", one.toString());
            assertArrayEquals(new float[] {1, 0, 2, 0}, r.toComplexFloatArray(), "a real tensor has 0 imaginary parts");
            assertArrayEquals(new double[] {2.5, 0}, s.complexItem());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, one::item);
            assertTrue(e.getMessage().contains("c128") && e.getMessage().contains("complexItem()"), e.getMessage());
            WebtensorException cast = assertThrows(WebtensorException.class, z::toFloatArray);
            assertTrue(cast.getMessage().contains("would drop the imaginary part"), cast.getMessage());
        }
        IllegalArgumentException odd = assertThrows(IllegalArgumentException.class,
                () -> Tensor.ofComplex(new float[3]));
        assertTrue(odd.getMessage().contains("3 values are not pairs"), odd.getMessage());
        WebtensorException shape = assertThrows(WebtensorException.class, () -> Tensor.ofComplex(new float[6], 2, 2));
        assertTrue(shape.getMessage().contains("data has 24 bytes, shape [2 2] of c64 needs 32"), shape.getMessage());
    }

    @Test
    void zeroCopyThroughDLPack() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocateFrom(ValueLayout.JAVA_FLOAT, 1, 2, 3, 4);
            try (Tensor z = Tensor.fromSegment(seg, DType.C64, 2); Tensor m = z.abs()) {
                assertEquals(DType.C64, z.dtype());
                close(new double[] {Math.hypot(1, 2), 5}, m.toFloatArray(), F32, "abs");
                seg.setAtIndex(ValueLayout.JAVA_FLOAT, 3, -4); // the tensor sees the segment's memory
                assertArrayEquals(new float[] {1, 2, 3, -4}, z.toComplexFloatArray());
                MemorySegment back = z.asSegment(arena);
                assertEquals(16, back.byteSize());
                assertEquals(-4f, back.getAtIndex(ValueLayout.JAVA_FLOAT, 3));
            }
        }
    }

    @Test
    void arithmeticAgainstComplexNumbers() {
        try (Tensor x = Tensor.ofComplex(floats(flat(A))); Tensor y = Tensor.ofComplex(floats(flat(B)));
             Tensor p = x.mul(y); Tensor q = x.div(y); Tensor e = x.exp(); Tensor h = x.mul(2.5);
             Tensor a = x.add(1)) {
            assertEquals(DType.C64, p.dtype());
            close(flat(map2(A, B, ComplexTest::cmul)), p.toComplexFloatArray(), F32, "mul");
            close(flat(map2(A, B, ComplexTest::cdiv)), q.toComplexFloatArray(), F32, "div");
            close(flat(map2(A, A, (z, unused) -> cexp(z))), e.toComplexFloatArray(), F32, "exp");
            assertEquals(DType.C64, h.dtype(), "a double next to a complex tensor is v + 0i");
            close(flat(map2(A, A, (z, unused) -> new double[] {2.5 * z[0], 2.5 * z[1]})), h.toComplexFloatArray(), F32,
                    "mul 2.5");
            close(flat(map2(A, A, (z, unused) -> new double[] {z[0] + 1, z[1]})), a.toComplexFloatArray(), F32, "add 1");
        }
    }

    @Test
    void absAngleRealImagAndComplexFromParts() {
        double[] re = new double[A.length], im = new double[A.length], abs = new double[A.length],
                angle = new double[A.length];
        for (int i = 0; i < A.length; i++) {
            re[i] = A[i][0];
            im[i] = A[i][1];
            abs[i] = Math.hypot(A[i][0], A[i][1]);
            angle[i] = Math.atan2(A[i][1], A[i][0]);
        }
        try (Tensor x = Tensor.ofComplex(floats(flat(A))); Tensor m = x.abs(); Tensor g = x.angle();
             Tensor r = x.real(); Tensor i = x.imag(); Tensor c = x.conj();
             Tensor fr = Tensor.of(floats(re)); Tensor fi = Tensor.of(floats(im)); Tensor z = Ops.complex(fr, fi);
             Tensor dr = Tensor.of(re); Tensor di = Tensor.of(im); Tensor z2 = Ops.complex(dr, di)) {
            assertEquals(DType.F32, m.dtype());
            close(abs, m.toFloatArray(), F32, "abs");
            close(angle, g.toFloatArray(), F32, "angle");
            close(re, r.toFloatArray(), 0, "real");
            close(im, i.toFloatArray(), 0, "imag");
            close(flat(map2(A, A, (v, unused) -> new double[] {v[0], -v[1]})), c.toComplexFloatArray(), 0, "conj");
            assertEquals(DType.C64, z.dtype());
            assertArrayEquals(floats(flat(A)), z.toComplexFloatArray());
            assertEquals(DType.C128, z2.dtype());
            assertArrayEquals(flat(A), z2.toComplexDoubleArray());
        }
    }

    /** The DFT by its definition, X[k] = sum_t x[t] e^(-2 pi i k t / n). */
    private static double[][] dft(double[][] zs) {
        int n = zs.length;
        double[][] out = new double[n][];
        for (int k = 0; k < n; k++) {
            double[] s = {0, 0};
            for (int t = 0; t < n; t++) {
                double[] p = cmul(zs[t], cexp(new double[] {0, -2 * Math.PI * k * t / n}));
                s[0] += p[0];
                s[1] += p[1];
            }
            out[k] = s;
        }
        return out;
    }

    @Test
    void fftAgainstTheDft() {
        double[][] zs = new double[7][];
        for (int i = 0; i < zs.length; i++) {
            zs[i] = new double[] {Math.cos(1.3 * i) + 0.1 * i, Math.sin(0.7 * i * i)};
        }
        double[] want = flat(dft(zs));
        // The registry's transforms take complex pairs [..., 2]: two views, no copy.
        try (Tensor z = Tensor.ofComplex(floats(flat(zs))); Tensor p = z.viewAsReal(); Tensor f = Ops.fft(p);
             Tensor fz = f.viewAsComplex()) {
            assertEquals(DType.C64, fz.dtype());
            close(want, fz.toComplexFloatArray(), 1e-5, "fft c64");
        }
        try (Tensor z = Tensor.ofComplex(flat(zs)); Tensor p = z.viewAsReal(); Tensor f = Ops.fft(p);
             Tensor fz = f.viewAsComplex(); Tensor fp = fz.viewAsReal(); Tensor b = Ops.ifft(fp);
             Tensor bz = b.viewAsComplex()) {
            assertEquals(DType.C128, fz.dtype());
            close(want, fz.toComplexDoubleArray(), 1e-12, "fft c128");
            close(flat(zs), bz.toComplexDoubleArray(), 1e-12, "ifft c128");
        }
    }

    @Test
    void gradientsOfARealLoss() {
        // L = sum(real(z * z)) + sum(|z|): dL/dx + i dL/dy = 2 conj(z) + z / |z| (PyTorch's convention).
        try (Tensor z = Tensor.ofComplex(floats(flat(A))).requiresGrad(true); Tensor sq = z.mul(z);
             Tensor re = sq.real(); Tensor l1 = re.sum(); Tensor m = z.abs(); Tensor l2 = m.sum();
             Tensor loss = l1.add(l2)) {
            loss.backward();
            try (Tensor g = z.grad()) {
                assertEquals(DType.C64, g.dtype());
                close(flat(map2(A, A, (v, unused) -> {
                    double n = Math.hypot(v[0], v[1]);
                    return new double[] {2 * v[0] + v[0] / n, -2 * v[1] + v[1] / n};
                })), g.toComplexFloatArray(), F32, "grad");
            }
        }
    }

    @Test
    void c128KeepsDoublePrecision() {
        double[][] a = {{1e-9, 1}, {Math.PI, -Math.E}};
        double[][] b = {{1 + 1e-12, 2}, {-1, 1e-10}};
        try (Tensor x = Tensor.ofComplex(flat(a)); Tensor y = Tensor.ofComplex(flat(b)); Tensor p = x.mul(y);
             Tensor q = x.div(y); Tensor e = x.exp(); Tensor c = x.cast(DType.C64)) {
            assertEquals(DType.C128, p.dtype());
            close(flat(map2(a, b, ComplexTest::cmul)), p.toComplexDoubleArray(), 1e-15, "mul c128");
            close(flat(map2(a, b, ComplexTest::cdiv)), q.toComplexDoubleArray(), 1e-15, "div c128");
            close(flat(map2(a, a, (z, unused) -> cexp(z))), e.toComplexDoubleArray(), 1e-15, "exp c128");
            assertEquals(DType.C64, c.dtype());
        }
    }

    @Test
    void opsWithoutAComplexMeaningRefuseIt() {
        try (Tensor z = Tensor.ofComplex(new float[] {1, 2})) {
            WebtensorException e = assertThrows(WebtensorException.class, z::relu);
            assertEquals(WebtensorException.INVALID, e.status());
            assertTrue(e.getMessage().contains("relu: does not take complex dtypes (c64, c128); the ops that do:"),
                    e.getMessage());
        }
    }

    @Test
    void c64OnWebGPU() {
        if (!Webtensor.devices().contains("webgpu:0")) { // skip only where the machine has no adapter
            String why = ConformanceRunnerTest.openProblem("webgpu");
            assumeFalse(why.startsWith("unavailable"), why);
            fail(why);
        }
        try (Tensor hx = Tensor.ofComplex(floats(flat(A))); Tensor hy = Tensor.ofComplex(floats(flat(B)));
             Tensor x = hx.to("webgpu"); Tensor y = hy.to("webgpu"); Tensor p = x.mul(y)) {
            assertEquals("webgpu:0", p.device());
            assertEquals(DType.C64, p.dtype());
            close(flat(map2(A, B, ComplexTest::cmul)), p.toComplexFloatArray(), F32, "mul webgpu");
        }
    }
}
