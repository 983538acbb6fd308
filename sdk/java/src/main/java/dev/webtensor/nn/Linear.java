package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Tensor;

/**
 * y = x W^T + b over the last dimension, as torch.nn.Linear. State: weight
 * [out, in] and bias [out], both drawn from U(+-1/sqrt(in)), weight first (the
 * same numbers as Go's nn.NewLinear and the other SDKs after the same seed).
 */
public final class Linear extends Module {
    private final long in, out;
    private final Tensor weight;
    private final Tensor bias;

    public Linear(long in, long out) {
        this(in, out, true);
    }

    public Linear(long in, long out, boolean bias) {
        this(in, out, bias, null, null);
    }

    /** With the parameters' dtype and device (null: f32, and the default device). */
    public Linear(long in, long out, boolean bias, DType dtype, String device) {
        if (in < 0 || out < 0) {
            throw new IllegalArgumentException("Linear: sizes must be >= 0, got in=" + in + " out=" + out);
        }
        this.in = in;
        this.out = out;
        Tensor[] wb = Init.defaultWeightAndBias(new long[] {out, in}, bias ? out : -1, dtype, device);
        this.weight = registerParameter("weight", wb[0]);
        this.bias = registerParameter("bias", wb[1]);
    }

    public Tensor weight() {
        return weight;
    }

    /** The bias, or null when built without one. */
    public Tensor bias() {
        return bias;
    }

    @Override
    public Tensor forward(Tensor x) {
        try (Tensor wt = weight.transpose(0, 1)) {
            Tensor y = x.matmul(wt);
            if (bias == null) {
                return y;
            }
            try (y) {
                return y.add(bias);
            }
        }
    }

    @Override
    protected String extraRepr() {
        return "in_features=" + in + ", out_features=" + out + ", bias=" + (bias != null);
    }
}
