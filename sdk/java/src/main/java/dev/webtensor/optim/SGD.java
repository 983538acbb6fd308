package dev.webtensor.optim;

import dev.webtensor.Tensor;

import java.util.List;

/** Stochastic gradient descent with optional momentum (PyTorch's formulation: buf = m*buf + g). */
public final class SGD extends Optimizer {
    private final double lr;
    private final double momentum;
    private final Tensor[] buf;

    public SGD(List<Tensor> params, double lr) {
        this(params, lr, 0);
    }

    public SGD(List<Tensor> params, double lr, double momentum) {
        super(params);
        this.lr = lr;
        this.momentum = momentum;
        this.buf = new Tensor[this.params.size()];
    }

    @Override
    protected Tensor update(int i, Tensor p, Tensor grad, Temps t) {
        Tensor dir = grad;
        if (momentum != 0) {
            Tensor b = buf[i] == null ? grad.detach() : t.add(buf[i].mul(momentum)).add(grad);
            if (buf[i] != null) {
                buf[i].close();
            }
            buf[i] = b;
            dir = b;
        }
        return p.sub(t.add(dir.mul(lr)));
    }

    @Override
    public void close() {
        for (int i = 0; i < buf.length; i++) {
            if (buf[i] != null) {
                buf[i].close();
                buf[i] = null;
            }
        }
    }
}
