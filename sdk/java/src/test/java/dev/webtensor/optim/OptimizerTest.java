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

/**
 * SGD, Adam, AdamW, RMSprop and Adagrad: torch's equations (against the Python SDK's and torch's numbers),
 * in-place steps, schedules, clipping, argument checks in the runtime's words.
 */
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

    /** A step over a closed parameter fails before it changes anything. */
    @Test
    void aFailingStepChangesNothing() {
        Tensor a = Tensor.of(new float[] {1, 2}).requiresGrad(true);
        Tensor b = Tensor.of(new float[] {3}).requiresGrad(true);
        try (a; SGD opt = new SGD(List.of(a, b), 0.1)) {
            try (Tensor sa = a.sum(); Tensor sb = b.sum(); Tensor loss = sa.add(sb)) {
                loss.backward();
            }
            b.close();
            var e = assertThrows(IllegalStateException.class, opt::step);
            assertEquals("tensor used after close()", e.getMessage());
            assertArrayEquals(new float[] {1, 2}, a.toFloatArray(), "the first update was not installed");
            assertEquals(0, opt.steps(0));
        }
    }

    /** RMSprop and Adagrad against torch 2.15 on nn/optim_test.go's five steps (float64). */
    @Test
    void rmspropAndAdagradMatchTorch() {
        Map<String, Function<List<Tensor>, Optimizer>> runs = new LinkedHashMap<>();
        runs.put("rmsprop", ps -> new RMSprop(ps, RMSprop.defaults().withLr(0.01).withAlpha(0.9).withWeightDecay(0.1)
                .withMomentum(0.9).withCentered(true)));
        runs.put("adagrad", ps -> new Adagrad(ps, Adagrad.defaults().withLr(0.1).withLrDecay(0.1).withWeightDecay(0.05)
                .withInitialAccumulatorValue(0.5).withMaximize(true)));
        Map<String, double[]> want = Map.of(
                "rmsprop", new double[] {0.7346748906745703, 0.6020621723009315, 0.07433613643392768,
                        -0.5153341157945429, -0.7661480834307307, -0.8200907240659774},
                "adagrad", new double[] {1.0387441196322864, 0.8524461038911669, 0.2309757527344819,
                        -0.5197594085013963, -1.0321049254419836, -0.9963511795203344});
        for (var r : runs.entrySet()) {
            double[] p0 = new double[6];
            for (int i = 0; i < 6; i++) {
                p0[i] = Math.cos(0.7 * i);
            }
            try (Tensor p = Tensor.of(p0, 2, 3).requiresGrad(true); Optimizer opt = r.getValue().apply(List.of(p))) {
                for (int t = 0; t < 5; t++) {
                    double[] g = new double[6];
                    for (int i = 0; i < 6; i++) {
                        g[i] = Math.sin(i + 1.3 * t) * 2 / (t + 1);
                    }
                    opt.zeroGrad();
                    try (Tensor gt = Tensor.of(g, 2, 3); Tensor prod = p.mul(gt); Tensor loss = prod.sum()) {
                        loss.backward();
                    }
                    opt.step();
                }
                assertArrayEquals(want.get(r.getKey()), p.toDoubleArray(), 1e-12, r.getKey());
                assertEquals(5, opt.steps(0));
            }
        }
    }

    /** The schedules' rates are torch's (torch 2.15, lr 0.1, recorded after each step). */
    @Test
    void schedulesSetTheLearningRate() {
        try (Tensor p = Tensor.zeros(1).requiresGrad(true); SGD opt = new SGD(List.of(p), 0.1)) {
            var sched = LRScheduler.stepLR(opt, 3, 0.5);
            double[] got = new double[7];
            for (int i = 0; i < got.length; i++) {
                got[i] = opt.lr();
                opt.step();
                sched.step();
            }
            assertArrayEquals(new double[] {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025}, got, 1e-15);
            assertEquals(0.025, opt.options().lr(), 1e-15, "options() reports the rate in use");
            opt.setLr(0.1);
            var cos = LRScheduler.cosineAnnealingLR(opt, 10, 0.001);
            cos.step();
            assertEquals(0.09757729755661011, opt.lr(), 1e-15);
            var e = assertThrows(IllegalArgumentException.class, () -> LRScheduler.stepLR(opt, 0, 0.5));
            assertTrue(e.getMessage().contains("step size must be >= 1"), e.getMessage());
        }
    }

    /** clip_grad_norm_ and clip_grad_value_ as torch's, on the device. */
    @Test
    void clippingMatchesTorch() {
        try (Tensor a = Tensor.zeros(3).requiresGrad(true); Tensor g = Tensor.of(new float[] {3, -4, 1.5f})) {
            try (Tensor prod = a.mul(g); Tensor loss = prod.sum()) {
                loss.backward();
            }
            try (Tensor total = Webtensor.clipGradNorm(List.of(a), 1, 2); Tensor grad = a.grad()) {
                assertEquals(5.220153331756592, total.item(), 1e-6);
                assertArrayEquals(new float[] {0.5746956f, -0.7662609f, 0.2873478f}, grad.toFloatArray(), 1e-6f);
            }
            Webtensor.clipGradValue(List.of(a), 0.5);
            try (Tensor grad = a.grad()) {
                assertArrayEquals(new float[] {0.5f, -0.5f, 0.2873478f}, grad.toFloatArray(), 1e-6f);
            }
        }
    }

    @Test
    void badArgumentsSayWhatIsWrong() {
        try (Tensor p = Tensor.ones(2).requiresGrad(true); Tensor frozen = Tensor.ones(2)) {
            List<Tensor> ps = List.of(p);
            Map<String, Runnable> cases = new LinkedHashMap<>();
            cases.put("SGD: invalid learning rate: -1", () -> new SGD(ps, -1));
            cases.put("SGD: invalid learning rate: NaN", () -> new SGD(ps, Double.NaN));
            cases.put("SGD: invalid momentum: -0.5", () -> new SGD(ps, 0.1, -0.5));
            cases.put("SGD: invalid weight decay: -0.1", () -> new SGD(ps, SGD.defaults().withWeightDecay(-0.1)));
            cases.put("SGD: Nesterov momentum requires a momentum and zero dampening (got momentum 0, dampening 0)",
                    () -> new SGD(ps, SGD.defaults().withNesterov(true)));
            cases.put("Adam: invalid learning rate: -0.001", () -> new Adam(ps, -1e-3));
            cases.put("Adam: invalid beta parameter at index 0: 1", () -> new Adam(ps, 0.1, 1.0, 0.999, 1e-8));
            cases.put("Adam: invalid beta parameter at index 1: -0.1", () -> new Adam(ps, 0.1, 0.9, -0.1, 1e-8));
            cases.put("Adam: invalid epsilon: -1e-08", () -> new Adam(ps, 0.1, 0.9, 0.999, -1e-8));
            cases.put("AdamW: invalid weight decay: -0.01", () -> new AdamW(ps, AdamW.defaults().withWeightDecay(-0.01)));
            cases.put("Adam: no parameters to optimise (the parameter list is empty)", () -> new Adam(List.of(), 0.1));
            cases.put("SGD: parameter 1 does not require a gradient",
                    () -> new SGD(List.of(p, frozen), 0.1));
            cases.put("AdamW: parameter 1 appears twice", () -> new AdamW(List.of(p, p), 0.1));
            for (var c : cases.entrySet()) {
                var e = assertThrows(IllegalArgumentException.class, c.getValue()::run, c.getKey());
                assertEquals(c.getKey(), e.getMessage());
            }
        }
    }
}
