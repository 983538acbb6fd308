package dev.webtensor.nn;

import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;

import java.util.List;

/** y = x W^T + b, with W [out, in] and b [out] drawn from U(-1/sqrt(in), 1/sqrt(in)) as in PyTorch. */
public final class Linear extends Module {
    private final Tensor weight;
    private final Tensor bias;

    public Linear(int in, int out) {
        this(in, out, true);
    }

    public Linear(int in, int out, boolean bias) {
        double bound = 1.0 / Math.sqrt(in);
        this.weight = uniform(bound, out, in);
        this.bias = bias ? uniform(bound, out) : null;
    }

    private static Tensor uniform(double bound, long... shape) {
        try (var g = Webtensor.noGrad(); Tensor u = Tensor.rand(shape); Tensor s = u.mul(2 * bound)) {
            return s.sub(bound).requiresGrad(true);
        }
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
        try (Tensor wt = weight.transpose()) {
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
    public List<Tensor> parameters() {
        return bias == null ? List.of(weight) : List.of(weight, bias);
    }
}
