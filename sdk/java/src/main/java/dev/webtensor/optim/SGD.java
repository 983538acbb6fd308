package dev.webtensor.optim;

import dev.webtensor.Tensor;

import java.util.List;

/**
 * torch.optim.SGD, term for term:
 *
 * <pre>
 * g   = grad (negated when maximising) + weightDecay * p
 * buf = g on the first step, then momentum * buf + (1 - dampening) * g
 * g   = g + momentum * buf with Nesterov, else buf   (when momentum != 0)
 * p   = p - lr * g
 * </pre>
 *
 * <pre>{@code
 * var opt = new SGD(model.parameters(), SGD.defaults().withLr(0.1).withMomentum(0.9).withNesterov(true));
 * }</pre>
 */
public final class SGD extends Optimizer {
    /** The settings; torch's defaults from {@link #defaults()}, changed with the with... methods. */
    public record Options(double lr, double momentum, double dampening, double weightDecay, boolean nesterov,
                          boolean maximize) {
        public Options withLr(double v) {
            return new Options(v, momentum, dampening, weightDecay, nesterov, maximize);
        }

        public Options withMomentum(double v) {
            return new Options(lr, v, dampening, weightDecay, nesterov, maximize);
        }

        public Options withDampening(double v) {
            return new Options(lr, momentum, v, weightDecay, nesterov, maximize);
        }

        public Options withWeightDecay(double v) {
            return new Options(lr, momentum, dampening, v, nesterov, maximize);
        }

        public Options withNesterov(boolean v) {
            return new Options(lr, momentum, dampening, weightDecay, v, maximize);
        }

        /** Ascend the gradient instead. */
        public Options withMaximize(boolean v) {
            return new Options(lr, momentum, dampening, weightDecay, nesterov, v);
        }
    }

    /** lr 1e-3, no momentum, dampening or weight decay, no Nesterov, minimising. */
    public static Options defaults() {
        return new Options(1e-3, 0, 0, 0, false, false);
    }

    private final Options o;

    public SGD(List<Tensor> params, double lr) {
        this(params, defaults().withLr(lr));
    }

    public SGD(List<Tensor> params, double lr, double momentum) {
        this(params, defaults().withLr(lr).withMomentum(momentum));
    }

    /** Throws IllegalArgumentException for a negative (or NaN) lr, momentum or weight decay, or Nesterov without momentum. */
    public SGD(List<Tensor> params, Options options) {
        super(params);
        require(options.lr() >= 0, "SGD", "learning rate", options.lr());
        require(options.momentum() >= 0, "SGD", "momentum", options.momentum());
        require(Double.isFinite(options.dampening()), "SGD", "dampening", options.dampening());
        require(options.weightDecay() >= 0, "SGD", "weight decay", options.weightDecay());
        if (options.nesterov() && (options.momentum() <= 0 || options.dampening() != 0)) {
            throw new IllegalArgumentException("SGD: Nesterov momentum requires a momentum and zero dampening (got"
                    + " momentum " + options.momentum() + ", dampening " + options.dampening() + ")");
        }
        this.o = options;
    }

    public Options options() {
        return o;
    }

    @Override
    protected Tensor update(Tensor p, Tensor grad, ParamState prev, ParamState next, Temps t) {
        Tensor g = t.effectiveGrad(p, grad, o.maximize(), o.weightDecay());
        if (o.momentum() != 0) {
            Tensor old = prev.get("momentum_buffer");
            Tensor buf = old == null ? g : t.add(t.mul(old, o.momentum()).add(t.mul(g, 1 - o.dampening())));
            next.put("momentum_buffer", buf);
            g = o.nesterov() ? t.add(g.add(t.mul(buf, o.momentum()))) : buf;
        }
        return p.sub(t.mul(g, o.lr()));
    }
}
