package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The runtime's optimiser (the ABI's wt_optimizer) over parameters: what the
 * classes of {@code dev.webtensor.optim} run on, so Java trains with the same
 * code, and the same bits, as Go, Python and JavaScript. kind is "sgd",
 * "adam", "adamw", "rmsprop" or "adagrad"; settings are torch's keyword
 * arguments as attributes ({@code Attr.of("lr", 0.1)}, {@code Attr.of("betas",
 * 0.9, 0.999)}). A step updates the parameters in place: the tensor objects,
 * and their handles, stay the same (so a parameter must not be given a new
 * handle by {@link Tensor#assign} while the optimiser uses it).
 */
public final class NativeOptimizer implements AutoCloseable {
    private static final class Handle implements Runnable {
        final AtomicLong h;

        Handle(long h) {
            this.h = new AtomicLong(h);
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x != 0) {
                Native.invoke(Abi.OPTIMIZER_FREE, x);
            }
        }
    }

    private final Handle state;
    private final Cleaner.Cleanable cleanable;
    private final List<Tensor> params;

    /** Throws {@link WebtensorException} ({@code INVALID}) for an unknown kind or setting, or a bad value, in torch's words. */
    public NativeOptimizer(String kind, List<Tensor> params, List<Attr> settings) {
        this.params = List.copyOf(params);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment hs = handles(arena, this.params);
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.OPTIMIZER_NEW, arena.allocateFrom(kind), hs, this.params.size(),
                    Op.encodeAll(arena, settings), count(settings), out);
            this.state = new Handle(out.get(JAVA_LONG, 0));
        } finally {
            Reference.reachabilityFence(this.params);
        }
        this.cleanable = Tensor.CLEANER.register(this, state);
    }

    static MemorySegment handles(Arena arena, List<Tensor> ts) {
        MemorySegment hs = arena.allocate(JAVA_LONG, Math.max(ts.size(), 1));
        for (int i = 0; i < ts.size(); i++) {
            hs.setAtIndex(JAVA_LONG, i, ts.get(i).handle());
        }
        return hs;
    }

    private static int count(List<Attr> settings) {
        return (int) settings.stream().filter(Objects::nonNull).count();
    }

    private long handle() {
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalStateException("optimizer used after close()");
        }
        return h;
    }

    /** Changes settings (the others and the state stay). */
    public void set(List<Attr> settings) {
        try (Arena arena = Arena.ofConfined()) {
            Native.call(Abi.OPTIMIZER_SET, handle(), Op.encodeAll(arena, settings), count(settings));
        }
    }

    /** One update of every parameter that has a gradient, all or none. */
    public void step() {
        try {
            Native.call(Abi.OPTIMIZER_STEP, handle());
        } finally {
            Reference.reachabilityFence(params);
        }
    }

    /** Drops every parameter's gradient. */
    public void zeroGrad() {
        try {
            Native.call(Abi.OPTIMIZER_ZERO_GRAD, handle());
        } finally {
            Reference.reachabilityFence(params);
        }
    }

    /** The state: "&lt;index&gt;.step" (an i64 scalar) and "&lt;index&gt;.&lt;torch's name&gt;" per updated parameter. */
    public StateDict state() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            Native.call(Abi.OPTIMIZER_STATE, handle(), out);
            return new StateDict(out.get(JAVA_LONG, 0));
        }
    }

    /** Replaces the state with one named as {@link #state} names it, all or none. */
    public void loadState(StateDict s) {
        try {
            Native.call(Abi.OPTIMIZER_LOAD_STATE, handle(), s.handle());
        } finally {
            Reference.reachabilityFence(s);
        }
    }

    /** Frees the optimiser and its state; the parameters stay. Closing twice is harmless. */
    @Override
    public void close() {
        cleanable.clean();
    }
}
