package dev.webtensor;

import dev.webtensor.nn.Linear;
import dev.webtensor.nn.Sequential;
import dev.webtensor.nn.Tanh;
import dev.webtensor.optim.Adam;
import dev.webtensor.optim.SGD;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Tiny training loops: the loss must go down, and nothing may leak. */
class NnTest {
    @Test
    void linearRegressionWithSgd() {
        Webtensor.manualSeed(7);
        long before = Webtensor.liveTensors();
        float[] xs = new float[32], ys = new float[32];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = i / 16f - 1;
            ys[i] = 3 * xs[i] - 1;
        }
        double first = 0, last = 0;
        try (Tensor x = Tensor.of(xs, 32, 1); Tensor y = Tensor.of(ys, 32, 1);
             Linear model = new Linear(1, 1); SGD opt = new SGD(model.parameters(), 0.1, 0.9)) {
            for (int step = 0; step < 150; step++) {
                opt.zeroGrad();
                try (Tensor pred = model.forward(x); Tensor loss = pred.mseLoss(y)) {
                    loss.backward();
                    opt.step();
                    last = loss.item();
                    first = step == 0 ? last : first;
                }
            }
            assertTrue(last < first * 0.01, "loss " + first + " -> " + last);
            assertEquals(3, model.weight().item(), 0.05);
            assertEquals(-1, model.bias().item(), 0.05);
        }
        assertTrue(Webtensor.liveTensors() <= before, "the loop left no tensors behind");
    }

    @Test
    void mlpLearnsXorWithAdam() {
        Webtensor.manualSeed(3);
        long before = Webtensor.liveTensors();
        double first = 0, last = 0;
        try (Tensor x = Tensor.of(new float[] {0, 0, 0, 1, 1, 0, 1, 1}, 4, 2);
             Tensor y = Tensor.of(new float[] {0, 1, 1, 0}, 4, 1);
             Sequential model = new Sequential(new Linear(2, 8), new Tanh(), new Linear(8, 1));
             Adam opt = new Adam(model.parameters(), 0.05)) {
            for (int step = 0; step < 300; step++) {
                opt.zeroGrad();
                try (Tensor pred = model.forward(x); Tensor loss = pred.mseLoss(y)) {
                    loss.backward();
                    opt.step();
                    last = loss.item();
                    first = step == 0 ? last : first;
                }
            }
            assertTrue(last < first * 0.1 && last < 0.02, "loss " + first + " -> " + last);
        }
        assertTrue(Webtensor.liveTensors() <= before, "the loop left no tensors behind");
    }
}
