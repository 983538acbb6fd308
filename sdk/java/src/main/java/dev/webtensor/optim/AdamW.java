package dev.webtensor.optim;

import dev.webtensor.Tensor;

import java.util.List;

/**
 * torch.optim.AdamW: {@link Adam} with decoupled weight decay (p = p * (1 - lr *
 * weightDecay) before the update, instead of an L2 term in the gradient);
 * the weight decay defaults to 0.01.
 */
public final class AdamW extends Adam {
    /** Adam's defaults with weight decay 0.01. */
    public static Options defaults() {
        return Adam.defaults().withWeightDecay(1e-2);
    }

    public AdamW(List<Tensor> params, double lr) {
        this(params, defaults().withLr(lr));
    }

    public AdamW(List<Tensor> params, Options options) {
        super("adamw", params, options);
    }
}
