package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Ops;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;

/**
 * Initial values drawn as Go's nn package draws them (init.go's uniformTensor),
 * op for op, so every SDK consumes the global generator in the same order and
 * rounds the same way.
 */
final class Init {
    private Init() {}

    /** U(lo, hi) as rand * (hi - lo) + lo, skipping the * 1 and the + 0. */
    static Tensor uniform(long[] shape, double lo, double hi, DType dtype, String device) {
        try (var g = Webtensor.noGrad()) {
            Tensor u = Ops.rand(shape, dtype, device, null, null);
            if (hi - lo != 1) {
                u = replace(u, u.mul(hi - lo));
            }
            if (lo != 0) {
                u = replace(u, u.add(lo));
            }
            return u;
        }
    }

    private static Tensor replace(Tensor old, Tensor next) {
        old.close();
        return next;
    }

    /**
     * A Linear's (or convolution's) weight, then its bias when biasLen >= 0, as
     * torch's reset_parameters draws them: both from U(+-1/sqrt(fan_in)), with
     * fan_in the product of the weight's dims after the first.
     */
    static Tensor[] defaultWeightAndBias(long[] wShape, long biasLen, DType dtype, String device) {
        long fanIn = 1;
        for (int i = 1; i < wShape.length; i++) {
            fanIn *= wShape[i];
        }
        double bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
        Tensor w = uniform(wShape, -bound, bound, dtype, device);
        if (biasLen < 0) {
            return new Tensor[] {w, null};
        }
        try {
            return new Tensor[] {w, uniform(new long[] {biasLen}, -bound, bound, dtype, device)};
        } catch (RuntimeException e) {
            w.close();
            throw e;
        }
    }
}
