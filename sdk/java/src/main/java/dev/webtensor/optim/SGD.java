package dev.webtensor.optim;

import dev.webtensor.Attr;
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
        super("sgd", params, options.lr(), List.of(Attr.of("lr", options.lr()), Attr.of("momentum", options.momentum()),
                Attr.of("dampening", options.dampening()), Attr.of("weight_decay", options.weightDecay()),
                Attr.of("nesterov", options.nesterov()), Attr.of("maximize", options.maximize())));
        this.o = options;
    }

    /** The settings, with the learning rate in use now. */
    public Options options() {
        return o.withLr(lr());
    }
}
