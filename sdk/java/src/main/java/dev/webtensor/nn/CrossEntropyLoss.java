package dev.webtensor.nn;

import dev.webtensor.Ops;
import dev.webtensor.Tensor;

/**
 * The cross_entropy op as a module (torch.nn.CrossEntropyLoss): logits (N,
 * C, ...) or (C,) against class indices or class probabilities. State: the
 * per-class weight, when given (the module keeps its own handle to it).
 */
public final class CrossEntropyLoss extends Module {
    private final long ignoreIndex;
    private final String reduction;
    private final double labelSmoothing;

    /** torch's defaults: no weights, ignore_index -100, mean, no smoothing. */
    public CrossEntropyLoss() {
        this(null, -100, "mean", 0);
    }

    /** weight (C,) or null; reduction "mean", "sum" or "none". */
    public CrossEntropyLoss(Tensor weight, long ignoreIndex, String reduction, double labelSmoothing) {
        registerBuffer("weight", weight == null ? null : weight.detach());
        this.ignoreIndex = ignoreIndex;
        this.reduction = reduction;
        this.labelSmoothing = labelSmoothing;
    }

    /** The loss of input against target, a new tensor the caller closes. */
    public Tensor forward(Tensor input, Tensor target) {
        return Ops.crossEntropy(input, target, buffer("weight"), reduction, ignoreIndex, labelSmoothing);
    }

    /** A loss needs its target: this always throws, naming {@link #forward(Tensor, Tensor)}. */
    @Override
    public Tensor forward(Tensor x) {
        throw new UnsupportedOperationException("CrossEntropyLoss takes (input, target): call forward(input, target)");
    }

    @Override
    protected String extraRepr() {
        return "reduction=" + reduction + ", ignore_index=" + ignoreIndex + ", label_smoothing=" + labelSmoothing;
    }
}
