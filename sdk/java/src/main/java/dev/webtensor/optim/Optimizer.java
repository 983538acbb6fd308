package dev.webtensor.optim;

import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Updates parameters from their gradients. The ABI has no in-place ops, so a
 * step first computes every new value and state (outside the autograd graph)
 * and only then moves each value into its parameter with
 * {@link Tensor#assign}: a failing op leaves every parameter and all state as
 * they were, and models keep their references (the Java objects stay the
 * same; they still require gradients and keep the gradients they had).
 */
public abstract class Optimizer implements AutoCloseable {
    private final List<Tensor> params;
    private final ParamState[] state;

    protected Optimizer(List<Tensor> params) {
        String name = getClass().getSimpleName();
        if (params == null || params.isEmpty()) {
            throw new IllegalArgumentException(name + ": got an empty parameter list");
        }
        Set<Tensor> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int i = 0; i < params.size(); i++) {
            Tensor p = params.get(i);
            if (p == null || p.isClosed()) {
                throw new IllegalArgumentException(name + ": parameter " + i + " is " + (p == null ? "null" : "closed"));
            }
            if (!p.requiresGrad()) {
                throw new IllegalArgumentException(name + ": parameter " + i
                        + " does not require gradients (call requiresGrad(true) first)");
            }
            if (!seen.add(p)) {
                throw new IllegalArgumentException(name + ": parameter " + i + " appears twice");
            }
        }
        this.params = List.copyOf(params);
        this.state = new ParamState[this.params.size()];
    }

    /** Throws IllegalArgumentException("Name: invalid what: value") unless ok. */
    static void require(boolean ok, String optimizer, String what, double value) {
        if (!ok) {
            throw new IllegalArgumentException(optimizer + ": invalid " + what + ": " + value);
        }
    }

    /** The parameters, in the order given. */
    public List<Tensor> parameters() {
        return params;
    }

    /** Drops the parameters' gradients. */
    public void zeroGrad() {
        for (Tensor p : params) {
            p.zeroGrad();
        }
    }

    /** The number of updates parameter i has had. */
    public long steps(int i) {
        ParamState s = state[i];
        return s == null ? 0 : s.step;
    }

    /** One update of every parameter that has a gradient (the others are left alone). */
    public void step() {
        ParamState[] next = new ParamState[params.size()];
        Tensor[] values = new Tensor[params.size()];
        try (Temps t = new Temps()) {
            try (var g = Webtensor.noGrad()) {
                for (int i = 0; i < params.size(); i++) {
                    Tensor p = params.get(i);
                    Tensor grad = p.grad();
                    if (grad == null) {
                        continue;
                    }
                    t.add(grad);
                    ParamState prev = state[i] == null ? new ParamState() : state[i];
                    ParamState ns = new ParamState();
                    ns.step = prev.step + 1;
                    Tensor v = update(p, grad, prev, ns, t);
                    if (!Arrays.equals(v.shape(), p.shape()) || v.dtype() != p.dtype()) {
                        throw new IllegalStateException(getClass().getSimpleName() + " step: the gradient of a"
                                + " parameter of shape " + Arrays.toString(p.shape()) + " has shape "
                                + Arrays.toString(grad.shape()) + " and dtype " + grad.dtype());
                    }
                    values[i] = t.keep(v);
                    ns.tensors.values().forEach(t::keep);
                    next[i] = ns;
                }
            } catch (RuntimeException e) {
                for (int i = 0; i < next.length; i++) { // nothing was installed: drop what this step made
                    if (next[i] != null) {
                        closeUnshared(next[i], state[i]);
                        values[i].close();
                    }
                }
                throw e;
            }
        }
        for (int i = 0; i < params.size(); i++) { // commit: every value exists, only handles move now
            if (values[i] == null) {
                continue;
            }
            params.get(i).assign(values[i]);
            if (state[i] != null) {
                closeUnshared(state[i], next[i]);
            }
            state[i] = next[i];
        }
    }

    /** Closes the tensors of s that other does not hold too. */
    private static void closeUnshared(ParamState s, ParamState other) {
        Set<Tensor> keep = Collections.newSetFromMap(new IdentityHashMap<>());
        if (other != null) {
            keep.addAll(other.tensors.values());
        }
        for (Tensor x : s.tensors.values()) {
            if (!keep.contains(x)) {
                x.close();
            }
        }
    }

    /**
     * The new value of parameter p (a new tensor) from its gradient; the state
     * it carries to the next step goes into next (prev is the last step's, empty
     * at first; next.step is already counted). Every tensor made along the way
     * goes to t, which closes those that end up neither the value nor in next.
     */
    protected abstract Tensor update(Tensor p, Tensor grad, ParamState prev, ParamState next, Temps t);

    /** Frees the optimizer's state (moments, momentum buffers). */
    @Override
    public void close() {
        for (int i = 0; i < state.length; i++) {
            if (state[i] != null) {
                closeUnshared(state[i], null);
                state[i] = null;
            }
        }
    }

    /** One parameter's state: a step count and named tensors, as torch's optimizer state. */
    protected static final class ParamState {
        long step;
        final Map<String, Tensor> tensors = new HashMap<>();

        public long step() {
            return step;
        }

        /** The tensor stored as name, or null. */
        public Tensor get(String name) {
            return tensors.get(name);
        }

        public void put(String name, Tensor t) {
            tensors.put(name, t);
        }
    }

    /**
     * Tensors made during one step: closed together at its end, except those
     * kept (the new values and state). Its helpers skip the ops that change
     * nothing, as torch's (and the other SDKs') formulas do.
     */
    protected static final class Temps implements AutoCloseable {
        private final List<Tensor> made = new ArrayList<>();

        public Tensor add(Tensor t) {
            made.add(t);
            return t;
        }

        Tensor keep(Tensor t) {
            made.removeIf(x -> x == t);
            return t;
        }

        /** t * v, or t itself when v is 1. */
        public Tensor mul(Tensor t, double v) {
            return v == 1 ? t : add(t.mul(v));
        }

        /** The gradient an update uses: negated when maximising, plus wd * p (L2) when wd != 0. */
        Tensor effectiveGrad(Tensor p, Tensor grad, boolean maximize, double wd) {
            Tensor g = maximize ? add(grad.neg()) : grad;
            return wd != 0 ? add(g.add(mul(p, wd))) : g;
        }

        @Override
        public void close() {
            made.forEach(Tensor::close);
            made.clear();
        }
    }
}
