package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Ops;
import dev.webtensor.Tensor;
import dev.webtensor.WebtensorException;
import dev.webtensor.Webtensor;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layers and initialisers Java shares with Python's wt.nn: Identity,
 * ModuleList, BatchNorm1d/2d, CrossEntropyLoss, MultiheadAttention and
 * Init. Expected values are the Python SDK's for the same inputs and seed
 * (the draws are the library's), or by hand.
 */
class LayersTest {
    private static void close(float[] want, float[] got, float tol) {
        assertEquals(want.length, got.length);
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got[i], tol, "element " + i);
        }
    }

    @Test
    void initDrawsTheLibrarysValuesInPlace() {
        try (Tensor t = Ops.zeros(64, 128)) {
            Webtensor.manualSeed(9);
            assertSame(t, Init.xavierUniform(t));
            double a = Math.sqrt(6.0 / 192);
            Webtensor.manualSeed(9);
            float[] got = t.toFloatArray();
            try (Tensor u = Ops.rand(64, 128)) {
                float[] r = u.toFloatArray();
                double mean = 0, var = 0;
                for (int i = 0; i < got.length; i++) {
                    assertEquals(r[i] * 2 * a - a, got[i], 1e-6, "xavier_uniform = rand scaled, element " + i);
                    mean += got[i];
                }
                mean /= got.length;
                for (float g : got) {
                    var += (g - mean) * (g - mean);
                }
                var /= got.length;
                assertTrue(Math.abs(mean) < 0.01 && Math.abs(var / (a * a / 3) - 1) < 0.1, "mean " + mean + ", var " + var);
            }
        }
        try (Tensor n = Ops.zeros(100, 50)) {
            Init.kaimingNormal(n, 0, Init.FanMode.FAN_OUT, "relu");
            double ss = 0;
            for (float v : n.toFloatArray()) {
                ss += v * v;
            }
            double std = Math.sqrt(ss / 5000);
            assertTrue(Math.abs(std / (Math.sqrt(2) / 10) - 1) < 0.05, "kaiming_normal std " + std);
        }
        try (Tensor p = Tensor.of(new float[] {1, 2, 3}).requiresGrad(true)) {
            Init.constant(p, 0.5);
            assertTrue(p.requiresGrad(), "a parameter stays trainable");
            assertArrayEquals(new float[] {0.5f, 0.5f, 0.5f}, p.toFloatArray());
            Init.normal(p, 2, 0);
            assertArrayEquals(new float[] {2, 2, 2}, p.toFloatArray());
            Init.uniform(p, 4, 4);
            assertArrayEquals(new float[] {4, 4, 4}, p.toFloatArray());
            Init.zeros(p);
            Init.ones(p);
            assertArrayEquals(new float[] {1, 1, 1}, p.toFloatArray());
        }
        try (Tensor m = Ops.zeros(3, 3)) {
            Init.kaimingUniform(m);
            Init.xavierNormal(m, 2);
        }
        assertEquals(5.0 / 3, Init.calculateGain("tanh"));
        assertEquals(Math.sqrt(2 / (1 + 0.01 * 0.01)), Init.calculateGain("leaky_relu"));
        assertEquals(Math.sqrt(2), Init.calculateGain("leaky_relu", 0));
        WebtensorException bad = assertThrows(WebtensorException.class, () -> Init.calculateGain("softsign"));
        assertTrue(bad.getMessage().contains("unsupported nonlinearity \"softsign\""), bad.getMessage());
        try (Tensor v = Ops.zeros(3)) {
            WebtensorException oneDim = assertThrows(WebtensorException.class, () -> Init.xavierUniform(v));
            assertTrue(oneDim.getMessage().contains("at least 2 dims"), oneDim.getMessage());
        }
    }

    @Test
    void aModuleBuiltInsideAScopeKeepsItsState() {
        BatchNorm1d bn;
        Linear l;
        try (var s = Webtensor.scope()) {
            l = new Linear(2, 2);
            bn = new BatchNorm1d(2);
        }
        assertTrue(l.parameters().stream().noneMatch(Tensor::isClosed), "parameters are the module's");
        assertTrue(bn.stateDict().values().stream().noneMatch(Tensor::isClosed), "and buffers");
        l.close();
        bn.close();
    }

    @Test
    void identityAndModuleList() {
        try (Tensor x = Tensor.of(new float[] {1, -2}, 1, 2);
             Sequential seq = new Sequential(new ReLU(), new Identity(), new Tanh());
             Tensor y = seq.forward(x)) {
            close(new float[] {(float) Math.tanh(1), 0}, y.toFloatArray(), 1e-6f);
            try (Tensor same = new Identity().forward(x)) {
                assertArrayEquals(x.toFloatArray(), same.toFloatArray());
            }
        }
        Webtensor.manualSeed(1);
        try (ModuleList list = new ModuleList(new Linear(2, 3)).append(new Linear(3, 1))) {
            assertEquals(2, list.size());
            assertEquals(List.of("0.weight", "0.bias", "1.weight", "1.bias"), List.copyOf(list.stateDict().keySet()));
            int n = 0;
            for (Module m : list) {
                n += m instanceof Linear ? 1 : 0;
            }
            assertEquals(2, n);
            assertThrows(UnsupportedOperationException.class, () -> list.forward(null));
        }
    }

    @Test
    void batchNormAsThePythonSdk() {
        try (BatchNorm1d bn = new BatchNorm1d(2); Tensor x = Tensor.of(new float[] {1, 2, 3, 6, 5, 10}, 3, 2)) {
            Tensor rm = bn.buffer("running_mean");
            try (Tensor y = bn.forward(x)) {
                close(new float[] {-1.2247425f, -1.2247443f, 0, 0, 1.2247425f, 1.2247443f}, y.toFloatArray(), 1e-6f);
            }
            assertSame(rm, bn.buffer("running_mean"), "updated in place");
            close(new float[] {0.3f, 0.6f}, rm.toFloatArray(), 1e-7f);
            close(new float[] {1.3f, 2.5f}, bn.buffer("running_var").toFloatArray(), 1e-6f);
            assertArrayEquals(new long[] {1}, bn.buffer("num_batches_tracked").toLongArray());
            assertEquals(List.of("weight", "bias", "running_mean", "running_var", "num_batches_tracked"),
                    List.copyOf(bn.stateDict().keySet()));
            assertEquals(2, bn.parameters().size(), "buffers are not parameters");
            bn.eval();
            try (Tensor y = bn.forward(x)) {
                close(new float[] {0.61393827f, 0.885436f, 2.3680477f, 3.4152532f, 4.122157f, 5.9450698f}, y.toFloatArray(), 1e-5f);
            }
        }
        float[] v = {1, 2, 3, 4, 0, 0, 2, 2, 5, 6, 7, 8, 4, 4, 6, 6};
        try (BatchNorm2d c = new BatchNorm2d(2, 1e-5, null, true, true, null, null); Tensor x = Tensor.of(v, 2, 2, 2, 2);
             Tensor x2 = x.mul(2)) {
            c.forward(x).close();
            c.forward(x2).close();
            close(new float[] {6.75f, 4.5f}, c.buffer("running_mean").toFloatArray(), 1e-6f);
            close(new float[] {15f, 14.285714f}, c.buffer("running_var").toFloatArray(), 1e-5f);
            assertArrayEquals(new long[] {2}, c.buffer("num_batches_tracked").toLongArray());
        }
        try (BatchNorm1d plain = new BatchNorm1d(2, 1e-5, 0.1, false, false, DType.F32, null);
             Tensor x = Tensor.of(new float[] {1, 2, 3, 6, 5, 10}, 3, 2); Tensor y = plain.forward(x)) {
            assertEquals(List.of(), List.copyOf(plain.stateDict().keySet()));
            close(new float[] {-1.2247425f, -1.2247443f, 0, 0, 1.2247425f, 1.2247443f}, y.toFloatArray(), 1e-6f);
        }
    }

    @Test
    void crossEntropyLossIsTheOp() {
        try (Tensor w = Tensor.of(new float[] {1, 2, 0.5f}); Tensor logits = Tensor.of(new float[] {1, 2, 0.5f, 0.1f, -1, 3}, 2, 3);
             Tensor target = Tensor.of(new long[] {1, 2});
             CrossEntropyLoss ce = new CrossEntropyLoss(w, -100, "mean", 0.1);
             Tensor got = ce.forward(logits, target);
             Tensor op = Ops.crossEntropy(logits, target, w, "mean", -100, 0.1)) {
            assertEquals(0.54072487, got.item(), 1e-6, "the Python SDK's loss");
            assertEquals(op.item(), got.item());
            assertEquals(List.of("weight"), List.copyOf(ce.stateDict().keySet()));
            assertThrows(UnsupportedOperationException.class, () -> ce.forward(logits));
        }
    }

    @Test
    void multiheadAttentionAsThePythonSdk() {
        Webtensor.manualSeed(5);
        float[] xv = {1, 0, -1, 2, 0.5f, 1, 0, -1, 2, -2, 1, 0};
        try (MultiheadAttention m = new MultiheadAttention(4, 2, 0, true, true, null, null); Tensor x = Tensor.of(xv, 1, 3, 4)) {
            assertEquals(List.of("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"),
                    List.copyOf(m.stateDict().keySet()));
            float[] w0 = m.parameter("in_proj_weight").toFloatArray();
            close(new float[] {0.3257603f, -0.5269992f, 0.5924541f, 0.5703967f}, new float[] {w0[0], w0[1], w0[2], w0[3]}, 1e-6f);
            try (MultiheadAttention.Output o = m.forward(x, x, x)) {
                close(new float[] {-0.32270172f, 0.06918649f, -0.59030372f, -0.17267956f, 0.11404064f, -0.02887913f, -0.19399205f,
                    -0.01561788f, -0.31976902f, -0.11270087f, -0.42561251f, -0.14123231f}, o.output().toFloatArray(), 2e-6f);
                close(new float[] {0.20761265f, 0.31129414f, 0.48109323f, 0.41302809f, 0.38532394f, 0.20164797f, 0.51743466f,
                    0.10112087f, 0.38144445f}, o.weights().toFloatArray(), 2e-6f);
            }
            try (Tensor pad = Tensor.of(new boolean[] {false, false, true}, 1, 3);
                 MultiheadAttention.Output o = m.forward(x, x, x,
                         new MultiheadAttention.Options().keyPaddingMask(pad).averageAttnWeights(false))) {
                assertArrayEquals(new long[] {1, 2, 3, 3}, o.weights().shape());
                close(new float[] {-0.09873639f, -0.04982814f, -0.51756215f, -0.0374608f, 0.27396113f, -0.08762029f, -0.0777414f,
                    0.05539323f, -0.10993627f, -0.36513287f, -0.28774554f, 0.05528916f}, o.output().toFloatArray(), 2e-6f);
                float[] w = o.weights().toFloatArray();
                for (int i = 2; i < w.length; i += 3) {
                    assertEquals(0f, w[i], "no weight on the padded key");
                }
            }
            try (MultiheadAttention.Output o = m.forward(x, x, x, new MultiheadAttention.Options().needWeights(false).isCausal(true))) {
                assertNull(o.weights());
                close(new float[] {-0.13044554f, -0.46673027f, -0.23232211f, 0.08148183f, 0.27396113f, -0.08762028f, -0.0777414f,
                    0.05539322f, -0.31976902f, -0.11270089f, -0.42561251f, -0.14123231f}, o.output().toFloatArray(), 2e-6f);
            }
            // (L, N, E) by default, and unbatched (L, E), with the same weights.
            try (MultiheadAttention seqFirst = new MultiheadAttention(4, 2); Tensor x2d = Ops.reshape(x, 3, 4);
                 Tensor self = m.forward(x)) {
                seqFirst.loadStateDict(m.stateDict());
                try (MultiheadAttention.Output o = seqFirst.forward(x2d, x2d, x2d)) {
                    assertArrayEquals(new long[] {3, 4}, o.output().shape());
                    assertArrayEquals(new long[] {3, 3}, o.weights().shape());
                    close(self.toFloatArray(), o.output().toFloatArray(), 2e-6f);
                }
            }
        }
        assertThrows(IllegalArgumentException.class, () -> new MultiheadAttention(5, 2));
    }
}
