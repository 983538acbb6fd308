package dev.webtensor;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Tensors shared between threads, ops from many threads at once, and per-thread error messages. */
class ThreadsTest {
    static final int THREADS = 8, ITERS = 300;

    @Test
    void sharedInputsManyThreads() throws Exception {
        long before = Webtensor.liveTensors();
        try (Tensor shared = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2);
             ExecutorService pool = Executors.newFixedThreadPool(THREADS)) {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < THREADS; w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < ITERS; i++) {
                        try (Tensor own = Tensor.full(id, 2, 2); Tensor p = shared.matmul(shared);
                             Tensor s = p.add(own)) {
                            assertArrayEquals(new float[] {7 + id, 10 + id, 15 + id, 22 + id}, s.toFloatArray());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
        assertTrue(Webtensor.liveTensors() <= before, "every thread closed what it made");
    }

    @Test
    void errorsStayOnTheirThread() throws Exception {
        try (ExecutorService pool = Executors.newFixedThreadPool(THREADS)) {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < THREADS; w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < ITERS; i++) {
                        if ((i + id) % 2 == 0) {
                            String name = "missing_op_" + id + "_" + i;
                            WebtensorException e = assertThrows(WebtensorException.class,
                                    () -> Webtensor.op(name, new Tensor[0]));
                            assertTrue(e.getMessage().contains(name), "another thread's message: " + e.getMessage());
                        } else {
                            try (Tensor t = Tensor.ones(3); Tensor s = t.sum()) {
                                assertEquals(3, s.item());
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        }
    }

    @Test
    void virtualThreads() throws Exception {
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Double>> fs = new ArrayList<>();
            for (int w = 0; w < 200; w++) {
                int id = w;
                fs.add(pool.submit(() -> {
                    try (Tensor t = Tensor.full(id, 4); Tensor s = t.sum()) {
                        return s.item();
                    }
                }));
            }
            for (int w = 0; w < fs.size(); w++) {
                assertEquals(4.0 * w, (double) fs.get(w).get());
            }
        }
    }

    @Test
    void closeRacingWithUseNeverCrashes() throws Exception {
        // One thread closes while others use the tensor: each use either works or throws, nothing worse.
        for (int round = 0; round < 50; round++) {
            Tensor t = Tensor.ones(16);
            try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
                List<Future<?>> fs = new ArrayList<>();
                for (int w = 0; w < 3; w++) {
                    fs.add(pool.submit(() -> {
                        for (int i = 0; i < 20; i++) {
                            try (Tensor s = t.sum()) {
                                assertEquals(16, s.item());
                            } catch (IllegalStateException | WebtensorException expected) {
                                // closed under us: the handle check or the library said so
                            }
                        }
                        return null;
                    }));
                }
                fs.add(pool.submit(() -> {
                    t.close();
                    return null;
                }));
                for (Future<?> f : fs) {
                    f.get();
                }
            }
        }
    }
}
