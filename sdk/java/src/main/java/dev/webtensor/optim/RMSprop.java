package dev.webtensor.optim;

import dev.webtensor.Attr;
import dev.webtensor.Tensor;

import java.util.List;

/**
 * torch.optim.RMSprop, with torch's single-tensor equations:
 *
 * <pre>
 * g   = grad (negated when maximising) + weightDecay * p
 * v   = alpha * v + (1 - alpha) * g^2
 * avg = sqrt(v - gAvg^2) with gAvg = lerp(gAvg, g, 1 - alpha) when centered, else sqrt(v); avg += eps
 * buf = momentum * buf + g / avg;  p = p - lr * buf      (momentum &gt; 0)
 * p   = p - lr * g / avg                                 (otherwise)
 * </pre>
 */
public final class RMSprop extends Optimizer {
    /** The settings; torch's defaults from {@link #defaults()}. */
    public record Options(double lr, double alpha, double eps, double weightDecay, double momentum, boolean centered,
                          boolean maximize) {
        public Options withLr(double v) {
            return new Options(v, alpha, eps, weightDecay, momentum, centered, maximize);
        }

        public Options withAlpha(double v) {
            return new Options(lr, v, eps, weightDecay, momentum, centered, maximize);
        }

        public Options withEps(double v) {
            return new Options(lr, alpha, v, weightDecay, momentum, centered, maximize);
        }

        public Options withWeightDecay(double v) {
            return new Options(lr, alpha, eps, v, momentum, centered, maximize);
        }

        public Options withMomentum(double v) {
            return new Options(lr, alpha, eps, weightDecay, v, centered, maximize);
        }

        /** Normalise by the variance (the second moment less the squared mean) instead. */
        public Options withCentered(boolean v) {
            return new Options(lr, alpha, eps, weightDecay, momentum, v, maximize);
        }

        /** Ascend the gradient instead. */
        public Options withMaximize(boolean v) {
            return new Options(lr, alpha, eps, weightDecay, momentum, centered, v);
        }
    }

    /** lr 1e-2, alpha 0.99, eps 1e-8, no weight decay or momentum, not centered, minimising. */
    public static Options defaults() {
        return new Options(1e-2, 0.99, 1e-8, 0, 0, false, false);
    }

    private final Options o;

    public RMSprop(List<Tensor> params, double lr) {
        this(params, defaults().withLr(lr));
    }

    /** Throws IllegalArgumentException for a negative lr, alpha, eps, momentum or weight decay. */
    public RMSprop(List<Tensor> params, Options o) {
        super("rmsprop", params, o.lr(), List.of(Attr.of("lr", o.lr()), Attr.of("alpha", o.alpha()), Attr.of("eps", o.eps()),
                Attr.of("weight_decay", o.weightDecay()), Attr.of("momentum", o.momentum()),
                Attr.of("centered", o.centered()), Attr.of("maximize", o.maximize())));
        this.o = o;
    }

    /** The settings, with the learning rate in use now. */
    public Options options() {
        return o.withLr(lr());
    }
}
