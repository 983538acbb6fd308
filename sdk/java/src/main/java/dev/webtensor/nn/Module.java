package dev.webtensor.nn;

import dev.webtensor.Scope;
import dev.webtensor.StateDict;
import dev.webtensor.Tensor;
import dev.webtensor.WebtensorException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;

/**
 * A layer or model, as torch.nn.Module: a forward function over named
 * parameters and child modules. A module owns its parameters and children,
 * so closing it frees them all.
 *
 * <p>Subclasses register what they hold in their constructor:
 * {@link #registerParameter} for tensors to train, {@link #registerModule}
 * for sub-layers. The state-dict names are PyTorch's: a module's own
 * parameters in registration order, then each child's prefixed with its name
 * ("0.weight", "0.bias", "2.weight", ...), so checkpoints move between this
 * SDK, the others and torch.
 */
public abstract class Module implements AutoCloseable {
    private final SequencedMap<String, Tensor> params = new LinkedHashMap<>();
    private final SequencedMap<String, Tensor> buffers = new LinkedHashMap<>();
    private final SequencedMap<String, Module> children = new LinkedHashMap<>();
    private boolean training = true;

    /** The output for input x: a new tensor the caller closes. */
    public abstract Tensor forward(Tensor x);

    /**
     * Registers a trainable tensor under name (null: an absent one, such as a
     * bias turned off, which has no state-dict entry) and marks it as requiring
     * gradients. The module owns it from now on. Returns t.
     */
    protected final Tensor registerParameter(String name, Tensor t) {
        checkName(name);
        if (t != null) {
            t.requiresGrad(true);
            Scope.release(t); // the module's from now on, even when built inside a Webtensor.scope()
        }
        params.put(name, t);
        return t;
    }

    /**
     * Registers state that is not trained (BatchNorm's running statistics)
     * under name (null: an absent one): in the state dict after this module's
     * parameters, closed with the module, never given to an optimizer. The
     * module owns it from now on. Returns t.
     */
    protected final Tensor registerBuffer(String name, Tensor t) {
        checkName(name);
        if (t != null) {
            Scope.release(t);
        }
        buffers.put(name, t);
        return t;
    }

    /** Registers a child module under name; its parameters appear as "name.param". Returns m. */
    protected final <M extends Module> M registerModule(String name, M m) {
        checkName(name);
        if (m == null) {
            throw new IllegalArgumentException(getClass().getSimpleName() + ": module " + name + " is null");
        }
        children.put(name, m);
        return m;
    }

    private void checkName(String name) {
        String what = getClass().getSimpleName();
        if (name == null || name.isEmpty() || name.contains(".")) {
            throw new IllegalArgumentException(what + ": invalid name \"" + name + "\" (non-empty, without '.')");
        }
        if (params.containsKey(name) || buffers.containsKey(name) || children.containsKey(name)) {
            throw new IllegalArgumentException(what + ": " + name + " is registered twice");
        }
    }

    /** The parameter registered as name (null for an absent one); throws when there is no such name. */
    public Tensor parameter(String name) {
        if (!params.containsKey(name)) {
            throw new IllegalArgumentException(getClass().getSimpleName() + " has no parameter " + name
                    + " (it has " + params.keySet() + ")");
        }
        return params.get(name);
    }

    /** The buffer registered as name (null for an absent one); throws when there is no such name. */
    public Tensor buffer(String name) {
        if (!buffers.containsKey(name)) {
            throw new IllegalArgumentException(getClass().getSimpleName() + " has no buffer " + name
                    + " (it has " + buffers.keySet() + ")");
        }
        return buffers.get(name);
    }

    /** Every buffer by state-dict name, as {@link #namedParameters}. */
    public SequencedMap<String, Tensor> namedBuffers() {
        SequencedMap<String, Tensor> out = new LinkedHashMap<>();
        collectBuffers("", out);
        return Collections.unmodifiableSequencedMap(out);
    }

    private void collectBuffers(String prefix, SequencedMap<String, Tensor> out) {
        buffers.forEach((n, t) -> {
            if (t != null) {
                out.put(prefix + n, t);
            }
        });
        children.forEach((n, m) -> m.collectBuffers(prefix + n + ".", out));
    }

    /** Every parameter by state-dict name, this module's first, then its children's, in registration order. */
    public SequencedMap<String, Tensor> namedParameters() {
        SequencedMap<String, Tensor> out = new LinkedHashMap<>();
        collect("", out);
        return Collections.unmodifiableSequencedMap(out);
    }

    private void collect(String prefix, SequencedMap<String, Tensor> out) {
        params.forEach((n, t) -> {
            if (t != null) {
                out.put(prefix + n, t);
            }
        });
        children.forEach((n, m) -> m.collect(prefix + n + ".", out));
    }

    /** The trainable tensors in state-dict order (what an optimizer takes). */
    public List<Tensor> parameters() {
        return List.copyOf(namedParameters().values());
    }

    /** The direct children in registration order. */
    public List<Module> children() {
        return List.copyOf(children.values());
    }

    /**
     * The state by state-dict name: each module's parameters, then its
     * buffers, then its children's, as torch orders them. The values are the
     * module's own tensors, not copies: read or save them, do not close them.
     */
    public SequencedMap<String, Tensor> stateDict() {
        SequencedMap<String, Tensor> out = new LinkedHashMap<>();
        collectState("", out);
        return Collections.unmodifiableSequencedMap(out);
    }

    private void collectState(String prefix, SequencedMap<String, Tensor> out) {
        params.forEach((n, t) -> {
            if (t != null) {
                out.put(prefix + n, t);
            }
        });
        buffers.forEach((n, t) -> {
            if (t != null) {
                out.put(prefix + n, t);
            }
        });
        children.forEach((n, m) -> m.collectState(prefix + n + ".", out));
    }

    /**
     * Copies a state dict (from {@link Checkpoints#load} or another model) into
     * this model's parameters, on their devices. Strict: every name must be
     * present, no other name may be, and every shape and dtype must agree;
     * otherwise nothing changes and one {@link IllegalArgumentException} lists
     * every problem (the runtime's checker, worded as in every SDK). The
     * parameter objects stay the same and keep their gradients; the given
     * tensors stay the caller's to close.
     */
    public void loadStateDict(Map<String, Tensor> state) {
        try (StateDict mine = StateDict.of(stateDict(), Map.of()); StateDict given = StateDict.of(state, Map.of())) {
            given.loadInto(mine, true, getClass().getSimpleName());
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.INVALID) {
                throw new IllegalArgumentException("loadStateDict: " + e.getMessage(), e);
            }
            throw e;
        }
    }

    /** Training mode (dropout active, batch statistics) for this module and its children; returns this. */
    public Module train(boolean on) {
        training = on;
        children.values().forEach(m -> m.train(on));
        return this;
    }

    public Module train() {
        return train(true);
    }

    /** Evaluation mode: {@code train(false)}. */
    public Module eval() {
        return train(false);
    }

    public boolean isTraining() {
        return training;
    }

    /** Drops every parameter's accumulated gradient. */
    public void zeroGrad() {
        for (Tensor p : parameters()) {
            p.zeroGrad();
        }
    }

    /** Frees every parameter and buffer of this module and its children. Closing twice is harmless. */
    @Override
    public void close() {
        for (Tensor p : parameters()) {
            p.close();
        }
        for (Tensor b : namedBuffers().values()) {
            b.close();
        }
    }

    /** The arguments shown by {@link #toString}, as torch's extra_repr. */
    protected String extraRepr() {
        return "";
    }

    /** torch's module repr: the class, its arguments and its children, indented. */
    @Override
    public String toString() {
        String head = getClass().getSimpleName() + "(" + extraRepr();
        if (children.isEmpty()) {
            return head + ")";
        }
        StringBuilder b = new StringBuilder(head).append('\n');
        children.forEach((n, m) -> b.append("  (").append(n).append("): ")
                .append(m.toString().replace("\n", "\n  ")).append('\n'));
        return b.append(')').toString();
    }
}
