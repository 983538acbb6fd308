package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Autograd from many threads at once, per-thread no-grad scopes, closed gradients. */
class AutogradThreadsTest {
    static float[] gradOfSquarePlusSelf() {
        try (Tensor w = Tensor.ones(16, 16).requiresGrad(true); Tensor sq = w.mul(w);
             Tensor y = sq.add(w); Tensor loss = y.sum()) {
            loss.backward();
            try (Tensor g = w.grad()) {
                return g.toFloatArray();
            }
        }
    }

    /** Four threads doing backward get exactly the single-threaded gradients. */
    @Test
    void threadsGetTheSingleThreadedGradients() throws Exception {
        float[] want = gradOfSquarePlusSelf();
        AtomicInteger wrong = new AtomicInteger();
        try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        if (!java.util.Arrays.equals(want, gradOfSquarePlusSelf())) {
                            wrong.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        assertEquals(0, wrong.get(), "gradients that differ from the single-threaded one");
    }

    /** A no-grad scope on one thread leaves another thread recording. */
    @Test
    void noGradBelongsToItsThread() throws Exception {
        try (Tensor w = Tensor.ones(3).requiresGrad(true); var g = Webtensor.noGrad()) {
            try (Tensor inside = w.mul(w)) {
                assertFalse(inside.requiresGrad());
            }
            try (ExecutorService pool = Executors.newSingleThreadExecutor()) {
                boolean outside = pool.submit(() -> {
                    try (Tensor y = w.mul(w)) {
                        return y.requiresGrad();
                    }
                }).get();
                assertTrue(outside, "another thread's op was not recorded during this thread's noGrad");
            }
        }
    }

    /** A closed tensor given as the gradient is an error, never "no gradient". */
    @Test
    void closedGradientIsAnError() {
        try (Tensor x = Tensor.of(new float[] {1, 2}).requiresGrad(true); Tensor y = x.mul(x)) {
            Tensor up = Tensor.of(new float[] {1, 1});
            up.close();
            assertThrows(IllegalStateException.class, () -> y.backward(up));
            assertNull(x.grad());
        }
    }

    /** Integer aranges are exact beyond 2^53. */
    @Test
    void arangeOfLongsIsExact() {
        long big = 1L << 53;
        try (Tensor a = Tensor.arange(big + 1, big + 4, 1)) {
            assertArrayEquals(new long[] {big + 1, big + 2, big + 3}, a.toLongArray());
        }
        try (Tensor a = Tensor.arange(Long.MIN_VALUE, Long.MAX_VALUE, 1L << 62)) {
            assertArrayEquals(new long[] {Long.MIN_VALUE, -(1L << 62), 0, 1L << 62}, a.toLongArray());
        }
    }
}
