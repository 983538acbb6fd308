package dev.webtensor;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A function compiled by {@link Webtensor#compile}: one {@link Graph} per
 * input signature (the inputs' shapes, dtypes and devices). The first call
 * with a signature runs the function eagerly while its ops are captured and
 * returns that call's result; later calls with the signature replay the graph
 * without running the Java code.
 *
 * <p>Control flow is taken as it went on the first call (as torch.jit.trace
 * does), so a function whose ops depend on the values, not just the shapes, of
 * its inputs must not be compiled. Tensors the function uses that are not
 * inputs (weights) are captured as they are: pass anything that changes
 * between calls as an input. The function must return tensors it computed
 * or its inputs, not outside tensors (an exception says which output).
 *
 * <p>Closing frees every graph; calling a closed one throws
 * {@link IllegalStateException}. Calls may come from several threads; captures
 * wait for each other (the library records one at a time, and ops other
 * threads run meanwhile are recorded too, as dead code unless the function
 * uses their results).
 */
public final class Compiled implements AutoCloseable {
    private final Function<Tensor[], Tensor[]> fn;
    private final Map<String, Graph> graphs = new ConcurrentHashMap<>();
    private volatile boolean closed;

    Compiled(Function<Tensor[], Tensor[]> fn) {
        if (fn == null) {
            throw new IllegalArgumentException("compile: the function is null");
        }
        this.fn = fn;
    }

    /**
     * Calls the function: captured on a signature's first call, replayed
     * afterwards. Returns new tensors the caller closes (an input returned as
     * it is comes back as a new handle).
     */
    public Tensor[] apply(Tensor... inputs) {
        ensureOpen();
        String key = signature(inputs);
        Graph g = graphs.get(key);
        if (g == null) {
            Graph.CAPTURE.lock();
            try {
                ensureOpen();
                g = graphs.get(key);
                if (g == null) {
                    Graph.Traced t = Graph.capture(fn, inputs);
                    graphs.put(key, t.graph());
                    return t.outputs();
                }
            } finally {
                Graph.CAPTURE.unlock();
            }
        }
        return g.run(inputs);
    }

    /** The graph captured for inputs like these (same signature), or null when none is yet. */
    public Graph graph(Tensor... inputs) {
        return graphs.get(signature(inputs));
    }

    /** How many signatures have a graph. */
    public int graphCount() {
        return graphs.size();
    }

    /** Frees every graph. Closing twice is harmless. */
    @Override
    public void close() {
        Graph.CAPTURE.lock(); // a capture in progress finishes first, so its graph is freed too
        try {
            closed = true;
            graphs.values().forEach(Graph::close);
            graphs.clear();
        } finally {
            Graph.CAPTURE.unlock();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("compiled function used after close()");
        }
    }

    /** "F32[2, 4]@cpu, I64[2]@cpu": what a graph is specific to. */
    private static String signature(Tensor[] inputs) {
        if (inputs == null) {
            throw new IllegalArgumentException("compile: the inputs are null");
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < inputs.length; i++) {
            Tensor t = inputs[i];
            if (t == null) {
                throw new IllegalArgumentException("compile: input " + i + " of " + inputs.length + " is null");
            }
            b.append(i == 0 ? "" : ", ").append(t.dtype().name()).append(Arrays.toString(t.shape()))
                    .append('@').append(t.device());
        }
        return b.toString();
    }
}
