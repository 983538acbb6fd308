package dev.webtensor;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Python's {@code with wt.scope() as s:} as try-with-resources: every tensor
 * this thread makes while the scope is open is closed when it closes, except
 * those passed to {@link #keep}, which then belong to the enclosing scope
 * (if any). Scopes nest; close the innermost first. Tensors other threads
 * make are not the scope's.
 *
 * <pre>{@code
 * Tensor y;
 * try (Scope s = Webtensor.scope()) {
 *     Tensor h = x.matmul(w).relu();
 *     y = s.keep(h.sum());
 * } // h and the product are closed; y lives
 * }</pre>
 */
public final class Scope implements AutoCloseable {
    /** The open scopes of each thread, innermost last. */
    private static final ThreadLocal<ArrayDeque<Scope>> OPEN = ThreadLocal.withInitial(ArrayDeque::new);

    private final List<Tensor> made = new ArrayList<>();
    private final Set<Tensor> kept = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Thread owner = Thread.currentThread();
    private boolean open = true;

    Scope() {
        OPEN.get().addLast(this);
    }

    /** Called for every tensor this thread wraps: it joins the innermost open scope. */
    static void made(Tensor t) {
        ArrayDeque<Scope> s = OPEN.get();
        if (!s.isEmpty()) {
            s.peekLast().made.add(t);
        }
    }

    /**
     * Takes t out of every scope this thread has open: state that must
     * outlive them (a module's parameters and buffers, which Module registers
     * so), as Python's modules adopt theirs. Returns t.
     */
    public static <T extends Tensor> T release(T t) {
        for (Scope s : OPEN.get()) {
            s.made.remove(t);
        }
        return t;
    }

    /** Keeps t past close(); returns it. */
    public <T extends Tensor> T keep(T t) {
        kept.add(t);
        return t;
    }

    /** Closes what the scope made and did not keep. Closing twice is harmless. */
    @Override
    public void close() {
        if (!open) {
            return;
        }
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("scope closed on another thread than the one that opened it");
        }
        ArrayDeque<Scope> s = OPEN.get();
        if (s.peekLast() != this) {
            throw new IllegalStateException("scope closed while an inner scope is open");
        }
        open = false;
        s.removeLast();
        Scope outer = s.peekLast();
        for (Tensor t : made) {
            if (!kept.contains(t)) {
                t.close();
            } else if (outer != null) {
                outer.made.add(t);
            }
        }
        made.clear();
    }
}
