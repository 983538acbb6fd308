package dev.webtensor.nn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Modules: initialisation, state-dict names, forward results, train/eval, strict loading, ownership. */
class ModuleTest {
    /** reference.json (written by make_reference.py through the Python SDK). */
    static JsonNode reference() throws IOException {
        try (InputStream in = ModuleTest.class.getResourceAsStream("reference.json")) {
            return new ObjectMapper().readTree(in);
        }
    }

    static float[] floats(JsonNode arr) {
        float[] out = new float[arr.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) arr.get(i).asDouble();
        }
        return out;
    }

    @Test
    void linearDrawsTheSameWeightsAsGoAndPython() throws IOException {
        JsonNode want = reference().get("linear_3_2_seed7");
        Webtensor.manualSeed(7);
        try (Linear l = new Linear(3, 2)) {
            assertArrayEquals(new long[] {2, 3}, l.weight().shape());
            assertArrayEquals(floats(want.get("weight")), l.weight().toFloatArray(), "weight, bit for bit");
            assertArrayEquals(floats(want.get("bias")), l.bias().toFloatArray(), "bias, bit for bit");
            assertTrue(l.weight().requiresGrad() && l.bias().requiresGrad());
        }
    }

    @Test
    void sequentialNamesParametersLikePyTorch() {
        Webtensor.manualSeed(1);
        try (Sequential m = new Sequential(new Linear(4, 16), new ReLU(), new Linear(16, 3, false), new Tanh())) {
            assertEquals(List.of("0.weight", "0.bias", "2.weight"), List.copyOf(m.stateDict().keySet()));
            assertEquals(List.copyOf(m.stateDict().values()), m.parameters());
            assertSame(((Linear) m.get(0)).weight(), m.stateDict().get("0.weight"));
            assertNull(((Linear) m.get(2)).bias());
            assertEquals(4, m.children().size());
            assertEquals("""
                    Sequential(
                      (0): Linear(in_features=4, out_features=16, bias=true)
                      (1): ReLU()
                      (2): Linear(in_features=16, out_features=3, bias=false)
                      (3): Tanh()
                    )""", m.toString());
        }
    }

    @Test
    void nestedModulesPrefixTheirNames() {
        class Block extends Module {
            final Linear inner = registerModule("proj", new Linear(2, 2));
            final Tensor scale = registerParameter("scale", Tensor.ones(2));

            @Override
            public Tensor forward(Tensor x) {
                try (Tensor y = inner.forward(x)) {
                    return y.mul(scale);
                }
            }
        }
        try (Sequential m = new Sequential(new Block(), new Block())) {
            assertEquals(List.of("0.scale", "0.proj.weight", "0.proj.bias", "1.scale", "1.proj.weight", "1.proj.bias"),
                    List.copyOf(m.stateDict().keySet()));
            assertTrue(m.stateDict().get("1.scale").requiresGrad(), "registering makes a tensor trainable");
            var e = assertThrows(IllegalArgumentException.class, () -> new Module() {
                {
                    registerParameter("w", null);
                    registerParameter("w", null);
                }

                @Override
                public Tensor forward(Tensor x) {
                    return x;
                }
            });
            assertTrue(e.getMessage().contains("w is registered twice"), e.getMessage());
        }
    }

    @Test
    void linearComputesXTimesWTransposedPlusB() {
        try (Linear l = new Linear(3, 2); Tensor x = Tensor.of(new float[] {1, 2, 3, -1, 0, 4}, 2, 3);
             Tensor y = l.forward(x)) {
            float[] w = l.weight().toFloatArray(), b = l.bias().toFloatArray(), xs = x.toFloatArray();
            float[] got = y.toFloatArray();
            assertArrayEquals(new long[] {2, 2}, y.shape());
            for (int i = 0; i < 2; i++) {
                for (int j = 0; j < 2; j++) {
                    double want = b[j];
                    for (int k = 0; k < 3; k++) {
                        want += xs[i * 3 + k] * w[j * 3 + k];
                    }
                    assertEquals(want, got[i * 2 + j], 1e-5);
                }
            }
        }
        var e = assertThrows(IllegalArgumentException.class, () -> new Linear(-1, 2));
        assertEquals("Linear: sizes must be >= 0, got in=-1 out=2", e.getMessage());
    }

    @Test
    void activationsMatchTheirFormulas() {
        float[] xs = {-2, -0.5f, 0, 0.5f, 2};
        Map<Module, java.util.function.DoubleUnaryOperator> cases = Map.of(
                new ReLU(), v -> Math.max(v, 0),
                new Tanh(), Math::tanh,
                new Sigmoid(), v -> 1 / (1 + Math.exp(-v)),
                new GELU("tanh"), v -> 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v))));
        try (Tensor x = Tensor.of(xs)) {
            for (var c : cases.entrySet()) {
                try (Tensor y = c.getKey().forward(x)) {
                    float[] got = y.toFloatArray();
                    for (int i = 0; i < xs.length; i++) {
                        assertEquals(c.getValue().applyAsDouble(xs[i]), got[i], 1e-5, c.getKey() + " at " + xs[i]);
                    }
                }
            }
            try (Tensor exact = new GELU().forward(x)) {
                assertEquals(2 * 0.9772498680518208, exact.toFloatArray()[4], 1e-5); // 2 * Phi(2)
            }
        }
        assertThrows(IllegalArgumentException.class, () -> new GELU("erf"));
    }

    @Test
    void dropoutOnlyWhileTraining() {
        Webtensor.manualSeed(5);
        try (Sequential m = new Sequential(new Dropout(0.5)); Tensor x = Tensor.ones(1000)) {
            assertTrue(m.isTraining() && m.get(0).isTraining());
            try (Tensor y = m.forward(x)) {
                float[] v = y.toFloatArray();
                long zeros = 0;
                for (float f : v) {
                    assertTrue(f == 0 || f == 2, "kept elements are scaled by 1/(1-p): " + f);
                    zeros += f == 0 ? 1 : 0;
                }
                assertTrue(zeros > 400 && zeros < 600, zeros + " of 1000 dropped");
            }
            m.eval();
            assertFalse(m.get(0).isTraining(), "eval reaches the children");
            try (Tensor y = m.forward(x)) {
                assertArrayEquals(x.toFloatArray(), y.toFloatArray());
            }
        }
        var e = assertThrows(IllegalArgumentException.class, () -> new Dropout(1.5));
        assertEquals("Dropout: probability must be between 0 and 1, got 1.5", e.getMessage());
    }

    @Test
    void identityForwardKeepsTheGraph() {
        try (Sequential empty = new Sequential(); Tensor x = Tensor.of(new float[] {1, 2}).requiresGrad(true);
             Tensor y = empty.forward(x); Tensor s = y.sum()) {
            s.backward();
            try (Tensor g = x.grad()) {
                assertArrayEquals(new float[] {1, 1}, g.toFloatArray());
            }
        }
    }

    @Test
    void layerNormNormalisesTheLastDims() {
        try (LayerNorm ln = new LayerNorm(4); Tensor x = Tensor.of(new float[] {1, 2, 3, 4, -1, 0, 1, 10}, 2, 4);
             Tensor y = ln.forward(x)) {
            assertEquals(List.of("weight", "bias"), List.copyOf(ln.stateDict().keySet()));
            float[] v = y.toFloatArray();
            for (int r = 0; r < 2; r++) {
                double mean = 0, sq = 0;
                for (int i = 0; i < 4; i++) {
                    mean += v[r * 4 + i] / 4.0;
                    sq += v[r * 4 + i] * v[r * 4 + i] / 4.0;
                }
                assertEquals(0, mean, 1e-5);
                assertEquals(1, sq, 1e-3);
            }
        }
    }

    @Test
    void loadStateDictIsStrictAndAllOrNothing() {
        Webtensor.manualSeed(2);
        try (Sequential m = new Sequential(new Linear(3, 4), new ReLU(), new Linear(4, 2));
             Tensor w = Tensor.zeros(4, 3); Tensor wrong = Tensor.zeros(3, 2); Tensor extra = Tensor.zeros(1)) {
            float[] before = ((Linear) m.get(0)).weight().toFloatArray();
            Map<String, Tensor> sd = Map.of("0.weight", w, "2.weight", wrong, "9.weight", extra);
            var e = assertThrows(IllegalArgumentException.class, () -> m.loadStateDict(sd));
            assertEquals("""
                    loadStateDict: the state dict does not match the Sequential (3 problem(s)):
                      2.weight: shape [3, 2] in state dict, [2, 4] in module
                      missing from state dict: 0.bias, 2.bias
                      not in module: 9.weight""", e.getMessage());
            assertArrayEquals(before, ((Linear) m.get(0)).weight().toFloatArray(), "nothing was loaded");
        }
    }

    @Test
    void loadStateDictCopiesIntoTheSameObjects() {
        Webtensor.manualSeed(3);
        try (Linear a = new Linear(3, 2); Linear b = new Linear(3, 2)) {
            Tensor w = b.weight();
            b.loadStateDict(a.stateDict());
            assertSame(w, b.weight(), "the parameter object stays");
            assertArrayEquals(a.weight().toFloatArray(), b.weight().toFloatArray());
            assertArrayEquals(a.bias().toFloatArray(), b.bias().toFloatArray());
            assertTrue(b.weight().requiresGrad(), "still trainable");
            a.close();
            assertArrayEquals(new long[] {2, 3}, b.weight().shape(), "b does not share a's handles");
        }
    }

    @Test
    void closeFreesEveryParameter() {
        long before = Webtensor.liveTensors();
        Sequential m = new Sequential(new Linear(3, 4), new LayerNorm(4), new Linear(4, 2));
        assertEquals(6, m.parameters().size());
        m.close();
        m.close();
        assertTrue(Webtensor.liveTensors() <= before, "every parameter freed");
        assertTrue(m.parameters().stream().allMatch(Tensor::isClosed));
    }
}
