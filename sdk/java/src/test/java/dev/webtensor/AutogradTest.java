package dev.webtensor;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** requiresGrad, backward, grad, zeroGrad, detach and the no-grad scope. */
class AutogradTest {
    @Test
    void gradientOfASquareSum() {
        try (Tensor x = Tensor.of(new float[] {1, -2, 3}).requiresGrad(true);
             Tensor y = x.mul(x); Tensor loss = y.sum()) {
            assertTrue(x.requiresGrad());
            assertTrue(loss.requiresGrad());
            loss.backward();
            try (Tensor g = x.grad()) {
                assertArrayEquals(new float[] {2, -4, 6}, g.toFloatArray());
            }
        }
    }

    @Test
    void matmulGradients() {
        // d/dA sum(A B) = 1 B^T, d/dB = A^T 1.
        try (Tensor a = Tensor.of(new float[] {1, 2, 3, 4, 5, 6}, 2, 3).requiresGrad(true);
             Tensor b = Tensor.of(new float[] {1, 0, -1, 2, 0.5f, 1}, 3, 2).requiresGrad(true);
             Tensor p = a.matmul(b); Tensor loss = p.sum()) {
            loss.backward();
            try (Tensor ga = a.grad(); Tensor gb = b.grad()) {
                assertArrayEquals(new float[] {1, 1, 1.5f, 1, 1, 1.5f}, ga.toFloatArray(), 1e-6f);
                assertArrayEquals(new float[] {5, 5, 7, 7, 9, 9}, gb.toFloatArray(), 1e-6f);
            }
        }
    }

    @Test
    void gradientsAccumulateUntilZeroGrad() {
        try (Tensor x = Tensor.of(new double[] {2}).requiresGrad(true)) {
            for (int i = 0; i < 2; i++) {
                try (Tensor y = x.mul(3); Tensor s = y.sum()) {
                    s.backward();
                }
            }
            try (Tensor g = x.grad()) {
                assertEquals(DType.F64, g.dtype());
                assertArrayEquals(new double[] {6}, g.toDoubleArray());
            }
            x.zeroGrad();
            assertNull(x.grad());
        }
    }

    @Test
    void backwardWithAGivenGradient() {
        try (Tensor x = Tensor.of(new float[] {1, 2}).requiresGrad(true); Tensor y = x.exp();
             Tensor up = Tensor.of(new float[] {1, 0.5f})) {
            y.backward(up);
            try (Tensor g = x.grad()) {
                float[] v = g.toFloatArray();
                assertEquals(Math.exp(1), v[0], 1e-5);
                assertEquals(0.5 * Math.exp(2), v[1], 1e-5);
            }
        }
    }

    @Test
    void noGradAndDetach() {
        try (Tensor x = Tensor.ones(2).requiresGrad(true)) {
            try (var g = Webtensor.noGrad(); Tensor y = x.mul(2)) {
                assertFalse(y.requiresGrad(), "ops in a no-grad scope are not recorded");
            }
            try (Tensor y = x.mul(2); Tensor d = y.detach()) {
                assertTrue(y.requiresGrad());
                assertFalse(d.requiresGrad(), "detach cuts the graph");
                assertArrayEquals(new float[] {2, 2}, d.toFloatArray());
            }
        }
    }

    @Test
    void lossFunctionsDifferentiate() {
        try (Tensor logits = Tensor.of(new float[] {2, 0, 0, 0, 2, 0}, 2, 3).requiresGrad(true);
             Tensor target = Tensor.of(new long[] {0, 1}); Tensor loss = logits.crossEntropy(target)) {
            double p = Math.exp(2) / (Math.exp(2) + 2);
            assertEquals(-Math.log(p), loss.item(), 1e-5);
            loss.backward();
            try (Tensor g = logits.grad()) {
                assertNotNull(g);
                assertEquals((p - 1) / 2, g.toFloatArray()[0], 1e-5);
            }
        }
    }
}
