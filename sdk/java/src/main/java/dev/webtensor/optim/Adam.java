package dev.webtensor.optim;

import dev.webtensor.Attr;
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

    public Adam(List<Tensor> params, double lr) {
        this(params, defaults().withLr(lr));
    }

    public Adam(List<Tensor> params, double lr, double beta1, double beta2, double eps) {
        this(params, defaults().withLr(lr).withBetas(beta1, beta2).withEps(eps));
    }

    /** Throws IllegalArgumentException for a negative lr, eps or weight decay, or a beta outside [0, 1). */
    public Adam(List<Tensor> params, Options options) {
        this("adam", params, options);
    }

    Adam(String kind, List<Tensor> params, Options o) {
        super(kind, params, o.lr(), List.of(Attr.of("lr", o.lr()), Attr.of("betas", o.beta1(), o.beta2()),
                Attr.of("eps", o.eps()), Attr.of("weight_decay", o.weightDecay()), Attr.of("amsgrad", o.amsgrad()),
                Attr.of("maximize", o.maximize())));
        this.o = o;
    }

    /** The settings, with the learning rate in use now. */
    public Options options() {
        return o.withLr(lr());
    }
}
