package dev.webtensor;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Library errors arrive as WebtensorException with the ABI's message; misuse of a closed tensor as IllegalStateException. */
class ErrorsTest {
    @Test
    void unknownOp() {
        WebtensorException e = assertThrows(WebtensorException.class,
                () -> Webtensor.op("no_such_op", new Tensor[0]));
        assertEquals(WebtensorException.INVALID, e.status());
        assertTrue(e.getMessage().contains("no_such_op"), e.getMessage());
        assertFalse(e.statusName().isEmpty(), "status names come from wt_status_string");
    }

    @Test
    void shapeMismatchNamesTheShapes() {
        try (Tensor a = Tensor.zeros(2, 3); Tensor b = Tensor.zeros(4, 5)) {
            WebtensorException e = assertThrows(WebtensorException.class, () -> a.matmul(b));
            assertEquals(WebtensorException.INVALID, e.status());
            assertTrue(e.getMessage().contains("matmul"), e.getMessage());
            assertTrue(e.getMessage().contains("3") && e.getMessage().contains("4"), e.getMessage());
        }
    }

    @Test
    void badDataLength() {
        WebtensorException e = assertThrows(WebtensorException.class,
                () -> Tensor.fromBytes(new byte[7], DType.F32, 2));
        assertTrue(e.getMessage().contains("7 bytes"), e.getMessage());
    }

    @Test
    void badAttribute() {
        try (Tensor x = Tensor.zeros(2, 3)) {
            WebtensorException e = assertThrows(WebtensorException.class, () -> x.reshape(4, 4));
            assertFalse(e.getMessage().isEmpty());
            assertThrows(WebtensorException.class, () -> Webtensor.op("softmax", new Tensor[] {x},
                    Attr.of("axis", "not an int")));
        }
    }

    @Test
    void backwardNeedsOneElement() {
        try (Tensor x = Tensor.ones(3).requiresGrad(true); Tensor y = x.mul(2)) {
            WebtensorException e = assertThrows(WebtensorException.class, y::backward);
            assertFalse(e.getMessage().isEmpty());
        }
    }

    @Test
    void unknownDevice() {
        String before = Webtensor.defaultDevice();
        WebtensorException e = assertThrows(WebtensorException.class, () -> Webtensor.setDefaultDevice("abacus:9"));
        assertTrue(e.getMessage().contains("abacus"), e.getMessage());
        assertEquals(before, Webtensor.defaultDevice(), "a failed call changes nothing");
    }

    @Test
    void useAfterClose() {
        Tensor t = Tensor.of(new float[] {1, 2});
        Tensor other = Tensor.of(new float[] {1, 2});
        t.close();
        assertTrue(t.isClosed());
        assertDoesNotThrow(t::close, "closing twice is harmless");
        assertThrows(IllegalStateException.class, t::shape);
        assertThrows(IllegalStateException.class, t::toFloatArray);
        assertThrows(IllegalStateException.class, t::handle);
        assertThrows(IllegalStateException.class, () -> t.add(other));
        assertThrows(IllegalStateException.class, () -> other.add(t), "as an input, too");
        assertThrows(IllegalStateException.class, () -> Ops.relu(t));
        assertThrows(IllegalStateException.class, t::backward);
        other.close();
    }

    @Test
    void messagesAreTheLibrarysOwn() {
        // The same failure twice gives the same message, and a success in between does not clear it wrongly.
        String first = assertThrows(WebtensorException.class, () -> Webtensor.op("nope", new Tensor[0])).getMessage();
        try (Tensor ok = Tensor.zeros(1)) {
            assertEquals(1, ok.numel());
        }
        String second = assertThrows(WebtensorException.class, () -> Webtensor.op("nope", new Tensor[0])).getMessage();
        assertEquals(first, second);
    }
}
