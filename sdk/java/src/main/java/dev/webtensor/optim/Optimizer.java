package dev.webtensor.optim;

import dev.webtensor.Attr;
import dev.webtensor.NativeOptimizer;
import dev.webtensor.StateDict;
import dev.webtensor.Tensor;
import dev.webtensor.WebtensorException;

import java.util.List;

/**
 * Updates parameters from their gradients. The runtime runs the update
 * ({@link NativeOptimizer}: Go's optimisers, one fused kernel per parameter
 * where the device fuses), so Java trains with the same bits as every other
 * SDK; a step updates the parameters in place (the Java objects, their
 * handles and their gradients stay) and a failed step changes nothing.
 * Subclasses hold torch's settings as an options record.
 */
public abstract class Optimizer implements AutoCloseable {
    private final List<Tensor> params;
    private final NativeOptimizer opt;
    private double lr;

    /** Bad settings or parameters are an {@link IllegalArgumentException} with the runtime's message. */
    protected Optimizer(String kind, List<Tensor> params, double lr, List<Attr> settings) {
        if (params == null) {
            throw new IllegalArgumentException(kind + ": the parameter list is null");
        }
        this.params = List.copyOf(params);
        try {
            this.opt = new NativeOptimizer(kind, this.params, settings);
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.INVALID) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            throw e;
        }
        this.lr = lr;
    }

    /** The parameters, in the order given. */
    public List<Tensor> parameters() {
        return params;
    }

    /** The learning rate the next step uses. */
    public double lr() {
        return lr;
    }

    /** Changes the learning rate (what the schedulers do); the state stays. */
    public void setLr(double lr) {
        try {
            opt.set(List.of(Attr.of("lr", lr)));
        } catch (WebtensorException e) {
            if (e.status() == WebtensorException.INVALID) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            throw e;
        }
        this.lr = lr;
    }

    /** Drops the parameters' gradients. */
    public void zeroGrad() {
        opt.zeroGrad();
    }

    /** One update of every parameter that has a gradient (the others are left alone). */
    public void step() {
        for (Tensor p : params) {
            p.handle(); // a closed parameter fails here, before anything changes
        }
        opt.step();
    }

    /** The number of updates parameter i has had. */
    public long steps(int i) {
        try (StateDict s = opt.state()) {
            var state = s.tensors();
            try {
                Tensor step = state.get(i + ".step");
                return step == null ? 0 : (long) step.item();
            } finally {
                state.values().forEach(Tensor::close);
            }
        }
    }

    /**
     * The state: each updated parameter's tensors and step count under
     * "&lt;index&gt;.&lt;torch's name&gt;" ("0.exp_avg", "0.step"), to save or to
     * {@link #loadState} into another optimizer.
     */
    public StateDict state() {
        return opt.state();
    }

    /** Replaces the state with one {@link #state} gave, all or none. */
    public void loadState(StateDict state) {
        opt.loadState(state);
    }

    /** Frees the optimizer's state (moments, momentum buffers); the parameters stay. */
    @Override
    public void close() {
        opt.close();
    }
}
