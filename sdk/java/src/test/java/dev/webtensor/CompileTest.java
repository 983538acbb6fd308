package dev.webtensor;

import java.util.function.Function;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Graph capture (Webtensor.trace / compile): replays equal eager runs, gradients flow, failures leave no capture behind. */
class CompileTest {
    /** exp(x * w) + 1 and its sum, with a dead sin(x) that the passes drop. */
    private static Function<Tensor[], Tensor[]> expAndSum(Tensor w) {
        return in -> {
            try (Tensor xw = in[0].mul(w); Tensor y = xw.exp(); Tensor dead = in[0].sin()) {
                return new Tensor[] {y.add(1.0), y.sum()};
            }
        };
    }

    private static void assertSameValues(Tensor[] want, Tensor[] got) {
        assertEquals(want.length, got.length, "output count");
        for (int i = 0; i < want.length; i++) {
            assertArrayEquals(want[i].shape(), got[i].shape(), "output " + i + " shape");
            float[] w = want[i].toFloatArray(), g = got[i].toFloatArray();
            for (int j = 0; j < w.length; j++) {
                assertEquals(w[j], g[j], 1e-6 * Math.max(1, Math.abs(w[j])), "output " + i + " element " + j);
            }
        }
    }

    private static void closeAll(Tensor[]... groups) {
        for (Tensor[] g : groups) {
            for (Tensor t : g) {
                t.close();
            }
        }
    }

    @Test
    void compiledEqualsEagerOnNewInputs() {
        try (Tensor w = Tensor.of(new float[] {0.5f, -1, 2, 0.25f});
             Tensor x1 = Tensor.of(new float[] {1, 2, 3, 4});
             Tensor x2 = Tensor.of(new float[] {-1, 0, 1, 2});
             Compiled cf = Webtensor.compile(expAndSum(w))) {
            Function<Tensor[], Tensor[]> f = expAndSum(w);
            Tensor[] first = cf.apply(x1); // captured: the eager result
            assertEquals(1, cf.graphCount());
            Graph g = cf.graph(x1);
            assertNotNull(g);
            String text = g.toString();
            assertTrue(text.contains("exp("), text);
            assertFalse(text.contains("sin("), "the dead op is dropped:\n" + text);
            Tensor[] got = cf.apply(x2); // replayed
            Tensor[] want = f.apply(new Tensor[] {x2});
            Tensor[] firstWant = f.apply(new Tensor[] {x1});
            assertSameValues(want, got);
            assertSameValues(firstWant, first);
            assertEquals(1, cf.graphCount(), "same signature, same graph");
            assertSame(g, cf.graph(x2));
            closeAll(first, got, want, firstWant);
        }
    }

    @Test
    void aSecondSignatureMakesASecondGraph() {
        try (Tensor w = Tensor.of(new float[] {0.5f, -1, 2, 0.25f});
             Compiled cf = Webtensor.compile(expAndSum(w));
             Tensor a = Tensor.of(new float[] {1, 2, 3, 4});
             Tensor b = Tensor.zeros(2, 4);
             Tensor c = Tensor.of(new double[] {1, 2, 3, 4})) {
            closeAll(cf.apply(a), cf.apply(b));
            assertEquals(2, cf.graphCount(), "a new shape");
            assertNotSame(cf.graph(a), cf.graph(b));
            assertNull(cf.graph(c), "a new dtype has no graph yet");
            Tensor[] out = cf.apply(c);
            assertEquals(3, cf.graphCount(), "a new dtype");
            assertEquals(DType.F64, out[0].dtype());
            closeAll(out);
            Tensor[] again = cf.apply(b);
            assertArrayEquals(new long[] {2, 4}, again[0].shape());
            assertEquals(3, cf.graphCount());
            closeAll(again);
        }
    }

    @Test
    void traceReturnsAGraphToReplay() {
        Function<Tensor[], Tensor[]> f = in -> {
            try (Tensor p = in[0].mul(in[1])) {
                return new Tensor[] {p.tanh()};
            }
        };
        try (Tensor x = Tensor.of(new float[] {1, 2, 3}, 3, 1);
             Tensor w = Tensor.of(new float[] {0.5f, -0.5f}, 1, 2);
             Tensor x2 = Tensor.of(new float[] {-3, 0, 0.25f}, 3, 1);
             Graph g = Webtensor.trace(f, x, w)) {
            assertTrue(g.toString().startsWith("input %in0: f32[3 1]\ninput %in1: f32[1 2]\n"), g.toString());
            Tensor[] got = g.run(x2, w);
            Tensor[] want = f.apply(new Tensor[] {x2, w});
            assertSameValues(want, got);
            closeAll(got, want);
            WebtensorException e = assertThrows(WebtensorException.class, () -> g.run(w, x2));
            assertEquals(WebtensorException.INVALID, e.status());
            assertTrue(e.getMessage().contains("input 0") && e.getMessage().contains("trace again"), e.getMessage());
            e = assertThrows(WebtensorException.class, () -> g.run(x2));
            assertTrue(e.getMessage().contains("1 inputs, the graph takes 2"), e.getMessage());
        }
    }

    @Test
    void gradientsFlowThroughAReplayedGraph() {
        try (Compiled cf = Webtensor.compile(in -> {
            try (Tensor p = in[0].mul(in[1]); Tensor t = p.tanh()) {
                return new Tensor[] {t.sum()};
            }
        }); Tensor w = Tensor.of(new float[] {2, 4});
             Tensor x = Tensor.of(new float[] {0.5f, -0.25f}).requiresGrad(true);
             Tensor x2 = Tensor.of(new float[] {0.1f, 0.3f}).requiresGrad(true)) {
            closeAll(cf.apply(x, w));
            Tensor[] loss = cf.apply(x2, w);
            assertEquals(1, cf.graphCount(), "the second call replayed");
            assertTrue(loss[0].requiresGrad());
            loss[0].backward();
            float[] xs = {0.1f, 0.3f}, ws = {2, 4};
            float[] want = new float[2];
            for (int i = 0; i < 2; i++) {
                double th = Math.tanh(xs[i] * ws[i]);
                want[i] = (float) ((1 - th * th) * ws[i]);
            }
            try (Tensor g = x2.grad()) {
                assertArrayEquals(want, g.toFloatArray(), 1e-5f);
            }
            assertNull(w.grad(), "w does not require grad");
            closeAll(loss);
        }
    }

    /** Forward, backward and the gradient in one graph: replayed on new values, it gives their gradients. */
    @Test
    void aWholeTrainingStepCompiles() {
        Function<Tensor[], Tensor[]> step = in -> {
            try (Tensor p = in[0].matmul(in[1]); Tensor t = p.tanh(); Tensor sq = t.square()) {
                Tensor loss = sq.sum();
                loss.backward();
                return new Tensor[] {loss, in[1].grad()};
            }
        };
        try (Tensor x = Tensor.of(new float[] {0.5f, -1, 2, 0.25f}, 2, 2); Compiled cf = Webtensor.compile(step)) {
            for (int seed = 1; seed <= 3; seed++) {
                float[] vals = new float[6];
                for (int i = 0; i < vals.length; i++) {
                    vals[i] = (float) Math.sin(seed * 7 + i);
                }
                try (Tensor w = Tensor.of(vals, 2, 3).requiresGrad(true); Tensor we = Tensor.of(vals, 2, 3).requiresGrad(true)) {
                    Tensor[] got = cf.apply(x, w);
                    Tensor[] want = step.apply(new Tensor[] {x, we});
                    assertSameValues(want, got);
                    closeAll(got, want);
                }
            }
            assertEquals(1, cf.graphCount());
        }
    }

    /** After a failed capture the library has none in progress: a new one works. */
    private static void assertNextCaptureWorks() {
        try (Tensor x = Tensor.of(new float[] {1, 2});
             Compiled cf = Webtensor.compile(in -> {
                 try (Tensor t = in[0].mul(3)) {
                     return new Tensor[] {t.sum()};
                 }
             })) {
            Tensor[] out = cf.apply(x);
            assertEquals(9.0, out[0].item(), 0);
            closeAll(out);
        }
    }

    @Test
    void aThrowingFunctionAbortsTheCapture() {
        try (Tensor x = Tensor.of(new float[] {1}); Compiled cf = Webtensor.compile(in -> {
            try (Tensor t = in[0].exp()) {
                throw new ArithmeticException("boom after an op");
            }
        })) {
            ArithmeticException e = assertThrows(ArithmeticException.class, () -> cf.apply(x));
            assertEquals("boom after an op", e.getMessage(), "the function's own exception, unchanged");
            assertEquals(0, cf.graphCount(), "no graph for a failed capture");
            assertThrows(ArithmeticException.class, () -> cf.apply(x), "the next call captures again");
        }
        assertNextCaptureWorks();
    }

    @Test
    void outputsMustBeComputedByTheFunction() {
        try (Tensor outside = Tensor.of(new float[] {1, 2}); Tensor x = Tensor.of(new float[] {1})) {
            WebtensorException e = assertThrows(WebtensorException.class,
                    () -> Webtensor.trace(in -> new Tensor[] {in[0].exp(), outside}, x));
            assertEquals(WebtensorException.INVALID, e.status());
            assertTrue(e.getMessage().contains("output 1 was not computed"), e.getMessage());
            assertFalse(outside.isClosed(), "a tensor the function did not compute stays open");
            assertNextCaptureWorks();
            IllegalArgumentException nul = assertThrows(IllegalArgumentException.class,
                    () -> Webtensor.trace(in -> null, x));
            assertTrue(nul.getMessage().contains("returned null"), nul.getMessage());
            assertNextCaptureWorks();
            IllegalArgumentException hole = assertThrows(IllegalArgumentException.class,
                    () -> Webtensor.trace(in -> new Tensor[] {in[0].exp(), null}, x));
            assertTrue(hole.getMessage().contains("output 1 of 2 is null"), hole.getMessage());
            assertNextCaptureWorks();
            IllegalArgumentException shut = assertThrows(IllegalArgumentException.class, () -> Webtensor.trace(in -> {
                Tensor t = in[0].exp();
                t.close();
                return new Tensor[] {t};
            }, x));
            assertTrue(shut.getMessage().contains("closed"), shut.getMessage());
            assertNextCaptureWorks();
        }
    }

    @Test
    void anInputReturnedAsItIsComesBackAsANewHandle() {
        try (Tensor x = Tensor.of(new float[] {1, 2}); Tensor x2 = Tensor.of(new float[] {3, 4});
             Compiled cf = Webtensor.compile(in -> new Tensor[] {in[0], in[0].exp()})) {
            Tensor[] first = cf.apply(x);
            assertNotSame(x, first[0], "the caller owns every result");
            closeAll(first);
            assertFalse(x.isClosed(), "closing the result leaves the input open");
            Tensor[] again = cf.apply(x2);
            assertArrayEquals(new float[] {3, 4}, again[0].toFloatArray());
            closeAll(again);
            assertFalse(x2.isClosed());
            Webtensor.trace(in -> new Tensor[] {in[0]}, x).close();
            assertFalse(x.isClosed(), "trace closes what the function returned, not its examples");
        }
    }

    @Test
    void badInputsFailBeforeCapturing() {
        Tensor closed = Tensor.of(new float[] {1});
        closed.close();
        try (Compiled cf = Webtensor.compile(in -> new Tensor[] {in[0].exp()})) {
            assertThrows(IllegalStateException.class, () -> cf.apply(closed));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cf.apply((Tensor) null));
            assertTrue(e.getMessage().contains("input 0 of 1 is null"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> Webtensor.trace(null));
            assertThrows(IllegalArgumentException.class, () -> Webtensor.compile(null));
        }
        assertNextCaptureWorks();
    }

    @Test
    void aCaptureInsideACaptureFailsClearly() {
        try (Tensor x = Tensor.of(new float[] {1, 2}); Tensor y = Tensor.of(new float[] {1, 2, 3});
             Compiled inner = Webtensor.compile(in -> new Tensor[] {in[0].exp()})) {
            WebtensorException e = assertThrows(WebtensorException.class,
                    () -> Webtensor.trace(in -> inner.apply(y), x));
            assertTrue(e.getMessage().contains("already in progress"), e.getMessage());
            assertEquals(0, inner.graphCount());
        }
        assertNextCaptureWorks();
    }

    @Test
    void closingTwiceIsHarmlessAndAClosedGraphThrows() {
        try (Tensor x = Tensor.of(new float[] {1, 2})) {
            Graph g = Webtensor.trace(in -> new Tensor[] {in[0].exp()}, x);
            g.close();
            assertTrue(g.isClosed());
            assertDoesNotThrow(g::close, "closing twice is harmless");
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> g.run(x));
            assertTrue(e.getMessage().contains("after close"), e.getMessage());
            assertEquals("Graph(<closed>)", g.toString());

            Compiled cf = Webtensor.compile(in -> new Tensor[] {in[0].exp()});
            closeAll(cf.apply(x));
            Graph inside = cf.graph(x);
            cf.close();
            assertDoesNotThrow(cf::close);
            assertTrue(inside.isClosed(), "closing a compiled function frees its graphs");
            assertEquals(0, cf.graphCount());
            assertThrows(IllegalStateException.class, () -> cf.apply(x));
        }
    }

    @Test
    void threadsShareOneGraphPerSignature() throws Exception {
        try (Tensor w = Tensor.of(new float[] {0.5f, -1, 2, 0.25f});
             Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
             Compiled cf = Webtensor.compile(expAndSum(w))) {
            Tensor[] want = expAndSum(w).apply(new Tensor[] {x});
            try (var pool = java.util.concurrent.Executors.newFixedThreadPool(4)) {
                var results = new java.util.ArrayList<java.util.concurrent.Future<?>>();
                for (int i = 0; i < 8; i++) {
                    results.add(pool.submit(() -> {
                        Tensor[] got = cf.apply(x);
                        assertSameValues(want, got);
                        closeAll(got);
                    }));
                }
                for (var r : results) {
                    r.get(); // rethrows a thread's failure
                }
            }
            assertEquals(1, cf.graphCount(), "concurrent first calls capture once");
            closeAll(want);
        }
    }

    @Test
    void replaysLeaveNoTensorsBehind() throws InterruptedException {
        try (Tensor w = Tensor.of(new float[] {0.5f, -1, 2, 0.25f});
             Tensor x = Tensor.of(new float[] {1, 2, 3, 4});
             Graph g = Webtensor.trace(expAndSum(w), x)) {
            long start = LeakTest.settledLiveCount();
            for (int i = 0; i < 200; i++) {
                closeAll(g.run(x));
            }
            assertEquals(start, Webtensor.liveTensors());
        }
    }
}
