package dev.webtensor.nn;

import dev.webtensor.Tensor;

import java.util.List;

/**
 * A layer or model: a forward function over parameters. Modules own their
 * parameters, so closing a module frees them.
 */
public abstract class Module implements AutoCloseable {
    /** The output for input x (a new tensor the caller closes). */
    public abstract Tensor forward(Tensor x);

    /** The trainable tensors, in a stable order (optimizers keep state per position). */
    public abstract List<Tensor> parameters();

    /** Drops every parameter's accumulated gradient. */
    public void zeroGrad() {
        for (Tensor p : parameters()) {
            p.zeroGrad();
        }
    }

    @Override
    public void close() {
        for (Tensor p : parameters()) {
            p.close();
        }
    }
}
