package dev.webtensor.optim;

import dev.webtensor.Tensor;

import java.util.List;

/**
 * torch.optim.Adam, with torch's single-tensor equations term for term:
 *
 * <pre>
 * g  = grad (negated when maximising) + weightDecay * p      (AdamW: p = p * (1 - lr * weightDecay) instead)
 * m  = lerp(m, g, 1 - beta1)        (from the nearer end, as torch's kernel)
 * v  = beta2 * v + (1 - beta2) * g^2
 * v^ = max(v^, v) with amsgrad, else v
 * p  = p - lr / (1 - beta1^t) * m / (sqrt(v^) / sqrt(1 - beta2^t) + eps)
 * </pre>
 *
 * <pre>{@code
 * var opt = new Adam(model.parameters(), Adam.defaults().withLr(0.05).withAmsgrad(true));
 * }</pre>
 */
public class Adam extends Optimizer {
    /** The settings; torch's defaults from {@link Adam#defaults()} (AdamW's from {@link AdamW#defaults()}). */
    public record Options(double lr, double beta1, double beta2, double eps, double weightDecay, boolean amsgrad,
                          boolean maximize) {
        public Options withLr(double v) {
            return new Options(v, beta1, beta2, eps, weightDecay, amsgrad, maximize);
        }

        public Options withBetas(double b1, double b2) {
            return new Options(lr, b1, b2, eps, weightDecay, amsgrad, maximize);
        }

        public Options withEps(double v) {
            return new Options(lr, beta1, beta2, v, weightDecay, amsgrad, maximize);
        }

        public Options withWeightDecay(double v) {
            return new Options(lr, beta1, beta2, eps, v, amsgrad, maximize);
        }

        /** Keep the running maximum of v (Reddi et al.'s AMSGrad). */
        public Options withAmsgrad(boolean v) {
            return new Options(lr, beta1, beta2, eps, weightDecay, v, maximize);
        }

        /** Ascend the gradient instead. */
        public Options withMaximize(boolean v) {
            return new Options(lr, beta1, beta2, eps, weightDecay, amsgrad, v);
        }
    }

    /** lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay, no amsgrad, minimising. */
    public static Options defaults() {
        return new Options(1e-3, 0.9, 0.999, 1e-8, 0, false, false);
    }

    private final Options o;
    private final boolean decoupled;

    public Adam(List<Tensor> params, double lr) {
        this(params, defaults().withLr(lr));
    }

    public Adam(List<Tensor> params, double lr, double beta1, double beta2, double eps) {
        this(params, defaults().withLr(lr).withBetas(beta1, beta2).withEps(eps));
    }

    /** Throws IllegalArgumentException for a negative lr, eps or weight decay, or a beta outside [0, 1). */
    public Adam(List<Tensor> params, Options options) {
        this(params, options, false);
    }

    Adam(List<Tensor> params, Options o, boolean decoupled) {
        super(params);
        String name = getClass().getSimpleName();
        require(o.lr() >= 0, name, "learning rate", o.lr());
        require(o.eps() >= 0, name, "epsilon", o.eps());
        require(o.beta1() >= 0 && o.beta1() < 1, name, "beta parameter at index 0", o.beta1());
        require(o.beta2() >= 0 && o.beta2() < 1, name, "beta parameter at index 1", o.beta2());
        require(o.weightDecay() >= 0, name, "weight decay", o.weightDecay());
        this.o = o;
        this.decoupled = decoupled;
    }

    public Options options() {
        return o;
    }

    @Override
    protected Tensor update(Tensor p, Tensor grad, ParamState prev, ParamState next, Temps t) {
        double lr = o.lr(), b1 = o.beta1(), b2 = o.beta2(), eps = o.eps(), wd = o.weightDecay();
        Tensor x = p;
        if (decoupled) {
            x = t.mul(x, 1 - lr * wd);
            wd = 0;
        }
        Tensor g = t.effectiveGrad(p, grad, o.maximize(), wd);
        Tensor m = prev.get("exp_avg"), v = prev.get("exp_avg_sq"), vmax = prev.get("max_exp_avg_sq");
        if (m == null) {
            m = t.add(x.zerosLike());
            v = t.add(x.zerosLike());
            if (o.amsgrad()) {
                vmax = t.add(x.zerosLike());
            }
        }
        m = lerp(m, g, 1 - b1, t);
        v = t.add(t.mul(v, b2).add(t.mul(t.add(g.mul(g)), 1 - b2)));
        long step = next.step();
        double stepSize = lr / (1 - Math.pow(b1, step));
        double bc2Sqrt = Math.sqrt(1 - Math.pow(b2, step));
        next.put("exp_avg", m);
        next.put("exp_avg_sq", v);
        Tensor second = v;
        if (o.amsgrad()) {
            second = t.add(vmax.maximum(v));
            next.put("max_exp_avg_sq", second);
        }
        Tensor denom = t.add(t.add(second.sqrt()).div(bc2Sqrt));
        if (eps != 0) {
            denom = t.add(denom.add(eps));
        }
        return x.sub(t.mul(t.add(m.div(denom)), stepSize));
    }

    /** torch's lerp, computed from the nearer end as its kernel does. */
    private static Tensor lerp(Tensor start, Tensor end, double w, Temps t) {
        Tensor d = t.add(end.sub(start));
        if (w < 0.5) {
            return t.add(start.add(t.mul(d, w)));
        }
        return t.add(end.sub(t.mul(d, 1 - w)));
    }
}
