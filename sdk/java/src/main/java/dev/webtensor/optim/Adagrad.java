package dev.webtensor.optim;

import dev.webtensor.Attr;
import dev.webtensor.Tensor;

import java.util.List;

/**
 * torch.optim.Adagrad, with torch's single-tensor equations:
 *
 * <pre>
 * g   = grad (negated when maximising) + weightDecay * p
 * sum = sum + g^2                       (starting at initialAccumulatorValue)
 * p   = p - lr / (1 + (t - 1) * lrDecay) * g / (sqrt(sum) + eps)
 * </pre>
 */
public final class Adagrad extends Optimizer {
    /** The settings; torch's defaults from {@link #defaults()}. */
    public record Options(double lr, double lrDecay, double weightDecay, double initialAccumulatorValue, double eps,
                          boolean maximize) {
        public Options withLr(double v) {
            return new Options(v, lrDecay, weightDecay, initialAccumulatorValue, eps, maximize);
        }

        public Options withLrDecay(double v) {
            return new Options(lr, v, weightDecay, initialAccumulatorValue, eps, maximize);
        }

        public Options withWeightDecay(double v) {
            return new Options(lr, lrDecay, v, initialAccumulatorValue, eps, maximize);
        }

        public Options withInitialAccumulatorValue(double v) {
            return new Options(lr, lrDecay, weightDecay, v, eps, maximize);
        }

        public Options withEps(double v) {
            return new Options(lr, lrDecay, weightDecay, initialAccumulatorValue, v, maximize);
        }

        /** Ascend the gradient instead. */
        public Options withMaximize(boolean v) {
            return new Options(lr, lrDecay, weightDecay, initialAccumulatorValue, eps, v);
        }
    }

    /** lr 1e-2, no decay, an accumulator starting at 0, eps 1e-10, minimising. */
    public static Options defaults() {
        return new Options(1e-2, 0, 0, 0, 1e-10, false);
    }

    private final Options o;

    public Adagrad(List<Tensor> params, double lr) {
        this(params, defaults().withLr(lr));
    }

    /** Throws IllegalArgumentException for a negative setting. */
    public Adagrad(List<Tensor> params, Options o) {
        super("adagrad", params, o.lr(), List.of(Attr.of("lr", o.lr()), Attr.of("lr_decay", o.lrDecay()),
                Attr.of("weight_decay", o.weightDecay()), Attr.of("initial_accumulator_value", o.initialAccumulatorValue()),
                Attr.of("eps", o.eps()), Attr.of("maximize", o.maximize())));
        this.o = o;
    }

    /** The settings, with the learning rate in use now. */
    public Options options() {
        return o.withLr(lr());
    }
}
