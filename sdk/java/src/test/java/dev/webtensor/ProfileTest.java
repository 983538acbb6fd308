package dev.webtensor;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Webtensor.profile: the runtime's op-call trace, as Chrome trace JSON. */
class ProfileTest {
    @Test
    void recordsTheOpsOfTheBody() {
        String json = Webtensor.profile(() -> {
            try (Tensor x = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2); Tensor y = x.exp(); Tensor s = y.sum()) {
                s.toFloatArray();
            }
        }, false);
        assertTrue(json.contains("\"traceEvents\""), json);
        assertTrue(json.contains("\"name\":\"exp\""), json);
        assertTrue(json.contains("f32[2 2]"), json);
    }

    @Test
    void oneRecordingAtATime() {
        WebtensorException e = assertThrows(WebtensorException.class,
                () -> Webtensor.profile(() -> Webtensor.profile(() -> { }, false), false));
        assertTrue(e.getMessage().contains("a recording is already running"), e.getMessage());
    }
}
