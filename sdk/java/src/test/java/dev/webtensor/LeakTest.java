package dev.webtensor;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Handles are freed: explicitly by close(), and by the Cleaner for tensors that are dropped. */
class LeakTest {
    /** The live count once the Cleaner has caught up with earlier tests' garbage. */
    static long settledLiveCount() throws InterruptedException {
        long last = -1;
        for (int i = 0; i < 50; i++) {
            System.gc();
            Thread.sleep(20);
            long now = Webtensor.liveTensors();
            if (now == last) {
                return now;
            }
            last = now;
        }
        return last;
    }

    @Test
    void hundredThousandTensorsCreatedAndClosed() throws InterruptedException {
        long start = settledLiveCount();
        float[] data = {1, 2, 3, 4};
        long peak = 0;
        for (int i = 0; i < 100_000; i++) {
            try (Tensor t = Tensor.of(data, 2, 2)) {
                if (i % 10 == 0) {
                    try (Tensor u = t.add(t)) {
                        peak = Math.max(peak, Webtensor.liveTensors());
                        assertEquals(4, u.numel());
                    }
                }
            }
        }
        assertTrue(peak >= start + 2, "the tensors were live while open");
        assertEquals(start, Webtensor.liveTensors(), "the live count returns to where it started");
    }

    @Test
    void droppedTensorsAreFreedByTheCleaner() throws InterruptedException {
        long start = settledLiveCount();
        for (int i = 0; i < 2_000; i++) {
            Tensor.of(new float[] {i}); // never closed
        }
        assertTrue(Webtensor.liveTensors() > start, "dropped tensors stay live until the GC finds them");
        long now = Long.MAX_VALUE;
        for (int i = 0; i < 200 && now > start; i++) {
            System.gc();
            Thread.sleep(25);
            now = Webtensor.liveTensors();
        }
        assertEquals(start, now, "the Cleaner freed every dropped tensor");
    }

    @Test
    void closingAfterTheCleanerIsHarmless() {
        Tensor t = Tensor.zeros(2);
        t.close();
        t.close();
        assertTrue(t.isClosed());
    }
}
