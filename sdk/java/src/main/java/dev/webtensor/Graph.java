package dev.webtensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A captured computation (the ABI's wt_graph): the ops one call of a function
 * made, simplified (constants folded, common subexpressions merged, dead ops
 * dropped) and, on a device that can, with elementwise chains fused into
 * single kernels. Made by {@link Webtensor#trace} and {@link Webtensor#compile}.
 *
 * <pre>{@code
 * try (Graph g = Webtensor.trace(in -> new Tensor[] {in[0].mul(in[1]).tanh()}, x, w)) {
 *     Tensor[] out = g.run(x2, w2);   // new inputs of the same shapes and dtypes
 *     System.out.print(g);            // one op per line
 * }
 * }</pre>
 *
 * Close graphs (the constants they captured stay alive until then); a
 * {@link Cleaner} frees dropped ones. Closing twice is harmless; running a
 * closed graph throws {@link IllegalStateException}. A graph may be run from
 * several threads at once.
 */
public final class Graph implements AutoCloseable {
    /**
     * The library allows one capture per process; Java captures wait for each
     * other here instead of failing. Reentrant, so a capture started inside
     * another on the same thread reaches the library and fails there, clearly.
     */
    static final ReentrantLock CAPTURE = new ReentrantLock();

    /** The handle, apart from the Graph so the Cleaner's action does not keep it reachable. */
    private static final class Handle implements Runnable {
        final AtomicLong h;

        Handle(long h) {
            this.h = new AtomicLong(h);
        }

        @Override
        public void run() {
            long x = h.getAndSet(0);
            if (x != 0) {
                Native.graphFree(x); // nothing to report a failure to: the handle is gone either way
            }
        }
    }

    private final Handle state;
    private final Cleaner.Cleanable cleanable;
    /** Outputs per run, known from the capture: the first wt_graph_run call has room for all of them. */
    private final int outputs;

    private Graph(long handle, int outputs) {
        this.state = new Handle(handle);
        this.cleanable = Tensor.CLEANER.register(this, state);
        this.outputs = outputs;
    }

    /** A graph and the tensors the function returned while it was being captured (the caller's to close). */
    record Traced(Graph graph, Tensor[] outputs) {}

    /**
     * Runs fn on the examples while the library records its ops, then ends the
     * capture on what fn returned. If fn throws, the capture is aborted and the
     * exception propagates unchanged; if it returns something that cannot be a
     * graph's output, the capture is aborted or ended with an exception that says
     * which output. Either way the next capture starts cleanly.
     */
    static Traced capture(Function<Tensor[], Tensor[]> fn, Tensor[] examples) {
        if (fn == null) {
            throw new IllegalArgumentException("trace: the function is null");
        }
        CAPTURE.lock();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = handles(arena, examples, "input");
            Native.call(Abi.TRACE_BEGIN, in, examples.length);
            Tensor[] out;
            MemorySegment outHandles;
            try {
                out = fn.apply(examples.clone());
                outHandles = handles(arena, checkOutputs(out), "output");
            } catch (Throwable t) {
                abort(t);
                throw t;
            }
            MemorySegment g = arena.allocate(JAVA_LONG);
            // wt_trace_end ends the capture whether or not it succeeds.
            Native.call(Abi.TRACE_END, outHandles, out.length, g);
            Reference.reachabilityFence(out);
            return new Traced(new Graph(g.get(JAVA_LONG, 0), out.length), owned(out, examples));
        } finally {
            Reference.reachabilityFence(examples);
            CAPTURE.unlock();
        }
    }

    /**
     * out, with each output that is one of the inputs (an identity graph is fine)
     * replaced by a new handle: the caller owns and closes every returned tensor.
     */
    private static Tensor[] owned(Tensor[] out, Tensor[] inputs) {
        Tensor[] res = out.clone();
        for (int i = 0; i < res.length; i++) {
            for (Tensor in : inputs) {
                if (res[i] == in) {
                    res[i] = in.newHandle();
                    break;
                }
            }
        }
        return res;
    }

    private static Tensor[] checkOutputs(Tensor[] out) {
        if (out == null) {
            throw new IllegalArgumentException("trace: the function returned null; return the tensors it computed");
        }
        for (int i = 0; i < out.length; i++) {
            if (out[i] == null) {
                throw new IllegalArgumentException("trace: output " + i + " of " + out.length + " is null");
            }
            if (out[i].isClosed()) {
                throw new IllegalArgumentException("trace: output " + i + " of " + out.length
                        + " is closed; return tensors open");
            }
        }
        return out;
    }

    private static void abort(Throwable cause) {
        try {
            Native.call(Abi.TRACE_ABORT);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /** The handles of ts as a wt_tensor array; what names them in errors ("input", "output"). */
    private static MemorySegment handles(Arena arena, Tensor[] ts, String what) {
        if (ts == null) {
            throw new IllegalArgumentException("graph: the " + what + "s are null");
        }
        MemorySegment seg = arena.allocate(JAVA_LONG, Math.max(ts.length, 1));
        for (int i = 0; i < ts.length; i++) {
            if (ts[i] == null) {
                throw new IllegalArgumentException("graph: " + what + " " + i + " of " + ts.length + " is null");
            }
            seg.setAtIndex(JAVA_LONG, i, ts[i].handle());
        }
        return seg;
    }

    /** The wt_graph handle; throws {@link IllegalStateException} once closed. */
    long handle() {
        long h = state.h.get();
        if (h == 0) {
            throw new IllegalStateException("graph used after close()");
        }
        return h;
    }

    /**
     * Replays the graph on new inputs, as many and of the same shapes and dtypes
     * as the capture's (a mismatch is a {@link WebtensorException} naming both).
     * Gradients flow: an input that requires grad gets one from backward().
     * Returns new tensors the caller closes.
     */
    public Tensor[] run(Tensor... inputs) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = handles(arena, inputs, "input");
            return Op.outputs(arena, Math.max(outputs, 1),
                    (out, cap, nOut) -> Native.graphRun(handle(), in, inputs.length, out, cap, nOut));
        } finally {
            // Neither the inputs' nor this graph's Cleaner may free a handle the library is reading.
            Reference.reachabilityFence(inputs);
            Reference.reachabilityFence(this);
        }
    }

    /** Frees the native graph now. Closing twice is harmless. */
    @Override
    public void close() {
        cleanable.clean();
    }

    public boolean isClosed() {
        return state.h.get() == 0;
    }

    /** The graph as text, one op per line (what {@code webtensor ir show} prints). */
    @Override
    public String toString() {
        try {
            long h = state.h.get();
            if (h == 0) {
                return "Graph(<closed>)";
            }
            return Native.readString((buf, cap, needed) -> (int) Abi.GRAPH_TEXT.invokeExact(h, buf, cap, needed));
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.HANDLE && isClosed()) {
                return "Graph(<closed>)"; // closed by another thread while printing
            }
            throw e;
        } finally {
            Reference.reachabilityFence(this);
        }
    }
}
