package dev.webtensor.optim;

import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;

import java.util.ArrayList;
import java.util.List;

/**
 * Updates parameters from their gradients. The ABI has no in-place ops, so a
 * step computes each new value (outside the autograd graph) and moves it into
 * the parameter with {@link Tensor#assign}: the Java object stays the same,
 * its handle changes, and the new leaf requires gradients again.
 */
public abstract class Optimizer implements AutoCloseable {
    protected final List<Tensor> params;

    protected Optimizer(List<Tensor> params) {
        this.params = List.copyOf(params);
    }

    /** Drops the parameters' gradients. */
    public void zeroGrad() {
        for (Tensor p : params) {
            p.zeroGrad();
        }
    }

    /** One update of every parameter that has a gradient. */
    public void step() {
        try (var g = Webtensor.noGrad()) {
            for (int i = 0; i < params.size(); i++) {
                Tensor p = params.get(i);
                Tensor grad = p.grad();
                if (grad == null) {
                    continue;
                }
                try (grad; Temps t = new Temps()) {
                    Tensor next = update(i, p, grad, t);
                    p.assign(next);
                    p.requiresGrad(true);
                }
            }
        }
    }

    /** The new value of parameter i (a new tensor); temporaries go to t, which closes them. */
    protected abstract Tensor update(int i, Tensor p, Tensor grad, Temps t);

    /** Frees the optimizer's state (momentum buffers). */
    @Override
    public void close() {}

    /** Tensors made during one update, closed together. */
    protected static final class Temps implements AutoCloseable {
        private final List<Tensor> made = new ArrayList<>();

        public Tensor add(Tensor t) {
            made.add(t);
            return t;
        }

        @Override
        public void close() {
            made.forEach(Tensor::close);
        }
    }
}
