package dev.webtensor.optim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;
import dev.webtensor.nn.Linear;
import dev.webtensor.nn.ReLU;
import dev.webtensor.nn.Sequential;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SGD, Adam and AdamW: torch's equations (against the Python SDK's numbers), in-place and all-or-nothing steps, argument checks. */
class OptimizerTest {
    /** The settings of make_reference.py, by the same names. */
    static final Map<String, Function<List<Tensor>, Optimizer>> SETTINGS = new LinkedHashMap<>();

    static {
        SETTINGS.put("sgd", ps -> new SGD(ps, 0.1));
        SETTINGS.put("sgd_momentum", ps -> new SGD(ps, SGD.defaults().withLr(0.1).withMomentum(0.9)
                .withDampening(0.1).withWeightDecay(0.01)));
        SETTINGS.put("sgd_nesterov", ps -> new SGD(ps, SGD.defaults().withLr(0.05).withMomentum(0.8)
                .withWeightDecay(0.02).withNesterov(true)));
        SETTINGS.put("adam", ps -> new Adam(ps, 0.1));
        SETTINGS.put("adam_amsgrad", ps -> new Adam(ps, Adam.defaults().withLr(0.1).withBetas(0.6, 0.9)
                .withWeightDecay(0.01).withAmsgrad(true)));
        SETTINGS.put("adam_maximize", ps -> new Adam(ps, Adam.defaults().withLr(0.01).withEps(0).withMaximize(true)));
        SETTINGS.put("adamw", ps -> new AdamW(ps, AdamW.defaults().withLr(0.1).withWeightDecay(0.1).withAmsgrad(true)));
    }

    static JsonNode reference() throws IOException {
        try (InputStream in = OptimizerTest.class.getResourceAsStream("/dev/webtensor/nn/reference.json")) {
            return new ObjectMapper().readTree(in);
        }
    }

    static Tensor matrix(JsonNode rows) {
        int r = rows.size(), c = rows.get(0).size();
        float[] v = new float[r * c];
        for (int i = 0; i < r; i++) {
            for (int j = 0; j < c; j++) {
                v[i * c + j] = (float) rows.get(i).get(j).asDouble();
            }
        }
        return Tensor.of(v, r, c);
    }

    /** Today the numbers are bit-identical to Python's (the same kernels); the tolerance lets kernels evolve. */
    static void assertClose(JsonNode want, float[] got, String what) {
        assertEquals(want.size(), got.length, what);
        for (int i = 0; i < got.length; i++) {
            double w = want.get(i).asDouble();
            assertEquals(w, got[i], 1e-6 + 1e-5 * Math.abs(w), what + "[" + i + "]");
        }
    }

    @Test
    void everySettingMatchesThePythonSdk() throws IOException {
        JsonNode ref = reference();
        try (Tensor x = matrix(ref.get("x")); Tensor y = matrix(ref.get("y"))) {
            for (var s : SETTINGS.entrySet()) {
                JsonNode want = ref.get("runs").get(s.getKey());
                Webtensor.manualSeed(7);
                try (Linear model = new Linear(3, 2); Optimizer opt = s.getValue().apply(model.parameters())) {
                    for (int step = 0; step < 3; step++) {
                        opt.zeroGrad();
                        try (Tensor pred = model.forward(x); Tensor loss = pred.mseLoss(y)) {
                            loss.backward();
                            double w = want.get("losses").get(step).asDouble();
                            assertEquals(w, loss.item(), 1e-6 + 1e-5 * Math.abs(w), s.getKey() + " loss " + step);
                            opt.step();
                        }
                    }
                    assertClose(want.get("weight"), model.weight().toFloatArray(), s.getKey() + " weight");
                    assertClose(want.get("bias"), model.bias().toFloatArray(), s.getKey() + " bias");
                }
            }
        }
    }

    @Test
    void adamFirstStepIsTorchsClosedForm() {
        // m1 = (1-b1) g, v1 = (1-b2) g^2, so p1 = p0 - lr/(1-b1) * m1 / (sqrt(v1)/sqrt(1-b2) + eps) = p0 - lr g/(|g| + eps)
        double lr = 0.01, eps = 1e-3;
        try (Tensor p = Tensor.of(new float[] {0.5f, -1, 2, 0}).requiresGrad(true);
             Tensor c = Tensor.of(new float[] {1e-4f, 3, -0.5f, 2});
             Adam opt = new Adam(List.of(p), lr, 0.9, 0.999, eps)) {
            float[] p0 = p.toFloatArray();
            try (Tensor prod = p.mul(c); Tensor loss = prod.sum()) {
                loss.backward(); // the gradient is c
            }
            float[] g = c.toFloatArray();
            opt.step();
            float[] p1 = p.toFloatArray();
            for (int i = 0; i < g.length; i++) {
                assertEquals(p0[i] - lr * g[i] / (Math.abs(g[i]) + eps), p1[i], 1e-6, "element " + i);
            }
            assertEquals(1, opt.steps(0));
        }
    }

    @Test
    void lossFallsWithEveryOptimizer() {
        for (var s : SETTINGS.entrySet()) {
            if (s.getKey().equals("adam_maximize")) {
                continue;
            }
            Webtensor.manualSeed(11);
            long before = Webtensor.liveTensors();
            List<Double> losses = new ArrayList<>();
            try (Tensor x = Tensor.randn(64, 3); Tensor w = Tensor.of(new float[] {1, -2, 0.5f, 3, 0, -1}, 3, 2);
                 Tensor y = x.matmul(w);
                 Sequential model = new Sequential(new Linear(3, 8), new ReLU(), new Linear(8, 2));
                 Optimizer opt = s.getValue().apply(model.parameters())) {
                for (int step = 0; step < 40; step++) {
                    opt.zeroGrad();
                    try (Tensor pred = model.forward(x); Tensor loss = pred.mseLoss(y)) {
                        loss.backward();
                        losses.add(loss.item());
                        opt.step();
                    }
                }
            }
            assertTrue(losses.getLast() < 0.5 * losses.getFirst(), s.getKey() + ": " + losses);
            assertTrue(Webtensor.liveTensors() <= before, s.getKey() + " left no tensors behind");
        }
    }

    @Test
    void stepUpdatesTheSameObjectsAndKeepsTheirGradients() {
        try (Linear model = new Linear(2, 1); Tensor x = Tensor.of(new float[] {1, 2}, 1, 2);
             AdamW opt = new AdamW(model.parameters(), 0.1)) {
            Tensor w = model.weight();
            try (Tensor out = model.forward(x); Tensor loss = out.sum()) {
                loss.backward();
            }
            float[] before = w.toFloatArray();
            opt.step();
            assertSame(w, model.weight());
            assertSame(w, model.parameters().get(0));
            assertTrue(w.requiresGrad(), "still a trainable leaf");
            try (Tensor g = w.grad()) {
                assertArrayEquals(new float[] {1, 2}, g.toFloatArray(), "the gradient stays until zeroGrad, as in torch");
            }
            assertTrue(before[0] != w.toFloatArray()[0], "the value changed");
            opt.zeroGrad();
            float[] after = w.toFloatArray();
            opt.step(); // no gradients: nothing changes
            assertArrayEquals(after, w.toFloatArray());
            assertEquals(1, opt.steps(0));
        }
    }

    /** An optimizer whose second update fails, to see the first one is not installed. */
    static final class Failing extends Optimizer {
        Failing(List<Tensor> ps) {
            super(ps);
        }

        @Override
        protected Tensor update(Tensor p, Tensor grad, ParamState prev, ParamState next, Temps t) {
            next.put("buf", t.add(grad.mul(2)));
            if (p.numel() == 1) {
                throw new IllegalStateException("second parameter fails");
            }
            return p.sub(grad);
        }
    }

    @Test
    void aFailingStepChangesNothing() {
        try (Tensor a = Tensor.of(new float[] {1, 2}).requiresGrad(true);
             Tensor b = Tensor.of(new float[] {3}).requiresGrad(true);
             Failing opt = new Failing(List.of(a, b))) {
            try (Tensor sa = a.sum(); Tensor sb = b.sum(); Tensor loss = sa.add(sb)) {
                loss.backward();
            }
            long before = Webtensor.liveTensors();
            var e = assertThrows(IllegalStateException.class, opt::step);
            assertEquals("second parameter fails", e.getMessage());
            assertArrayEquals(new float[] {1, 2}, a.toFloatArray(), "the first update was not installed");
            assertEquals(0, opt.steps(0));
            assertTrue(Webtensor.liveTensors() <= before, "what the step made was freed");
        }
    }

    @Test
    void badArgumentsSayWhatIsWrong() {
        try (Tensor p = Tensor.ones(2).requiresGrad(true); Tensor frozen = Tensor.ones(2)) {
            List<Tensor> ps = List.of(p);
            Map<String, Runnable> cases = new LinkedHashMap<>();
            cases.put("SGD: invalid learning rate: -1.0", () -> new SGD(ps, -1));
            cases.put("SGD: invalid learning rate: NaN", () -> new SGD(ps, Double.NaN));
            cases.put("SGD: invalid momentum: -0.5", () -> new SGD(ps, 0.1, -0.5));
            cases.put("SGD: invalid weight decay: -0.1", () -> new SGD(ps, SGD.defaults().withWeightDecay(-0.1)));
            cases.put("SGD: Nesterov momentum requires a momentum and zero dampening (got momentum 0.0, dampening 0.0)",
                    () -> new SGD(ps, SGD.defaults().withNesterov(true)));
            cases.put("Adam: invalid learning rate: -0.001", () -> new Adam(ps, -1e-3));
            cases.put("Adam: invalid beta parameter at index 0: 1.0", () -> new Adam(ps, 0.1, 1.0, 0.999, 1e-8));
            cases.put("Adam: invalid beta parameter at index 1: -0.1", () -> new Adam(ps, 0.1, 0.9, -0.1, 1e-8));
            cases.put("Adam: invalid epsilon: -1.0E-8", () -> new Adam(ps, 0.1, 0.9, 0.999, -1e-8));
            cases.put("AdamW: invalid weight decay: -0.01", () -> new AdamW(ps, AdamW.defaults().withWeightDecay(-0.01)));
            cases.put("Adam: got an empty parameter list", () -> new Adam(List.of(), 0.1));
            cases.put("SGD: parameter 1 does not require gradients (call requiresGrad(true) first)",
                    () -> new SGD(List.of(p, frozen), 0.1));
            cases.put("AdamW: parameter 1 appears twice", () -> new AdamW(List.of(p, p), 0.1));
            for (var c : cases.entrySet()) {
                var e = assertThrows(IllegalArgumentException.class, c.getValue()::run, c.getKey());
                assertEquals(c.getKey(), e.getMessage());
            }
        }
    }
}
