package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Ops;
import dev.webtensor.Tensor;

import java.util.Arrays;

/**
 * Normalises over the trailing normalizedShape dims, then scales by weight
 * (ones) and shifts by bias (zeros), as torch.nn.LayerNorm.
 */
public final class LayerNorm extends Module {
    private final long[] shape;
    private final double eps;
    private final Tensor weight, bias;

    public LayerNorm(long... normalizedShape) {
        this(normalizedShape, 1e-5, true, null, null);
    }

    /** elementwiseAffine false: no weight or bias. dtype and device null: f32 and the default device. */
    public LayerNorm(long[] normalizedShape, double eps, boolean elementwiseAffine, DType dtype, String device) {
        if (normalizedShape.length == 0 || Arrays.stream(normalizedShape).anyMatch(s -> s < 0)) {
            throw new IllegalArgumentException("LayerNorm: normalizedShape must be a non-empty valid shape, got "
                    + Arrays.toString(normalizedShape));
        }
        if (!(eps >= 0)) {
            throw new IllegalArgumentException("LayerNorm: eps must be >= 0, got " + eps);
        }
        this.shape = normalizedShape.clone();
        this.eps = eps;
        this.weight = registerParameter("weight",
                elementwiseAffine ? Ops.full(shape, 1.0, dtype, device) : null);
        this.bias = registerParameter("bias", elementwiseAffine ? Ops.full(shape, 0.0, dtype, device) : null);
    }

    /** The scale, or null without elementwise affine. */
    public Tensor weight() {
        return weight;
    }

    public Tensor bias() {
        return bias;
    }

    @Override
    public Tensor forward(Tensor x) {
        return x.layerNorm(shape, weight, bias, eps);
    }

    @Override
    protected String extraRepr() {
        return Arrays.toString(shape).replace('[', '(').replace(']', ')') + ", eps=" + eps;
    }
}
