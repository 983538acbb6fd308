package dev.webtensor.nn;

import dev.webtensor.DType;
import dev.webtensor.Ops;
import dev.webtensor.Scope;
import dev.webtensor.Tensor;
import dev.webtensor.Webtensor;

/**
 * Per-channel normalisation of (N, C, ...) with batch statistics while
 * training and the running ones in eval mode, as torch's BatchNorm and
 * Python's wt.nn (the batch_norm op, then the running statistics updated in
 * place). A null momentum keeps a cumulative average. State: weight, bias,
 * running_mean, running_var, num_batches_tracked.
 */
public abstract sealed class BatchNorm extends Module permits BatchNorm1d, BatchNorm2d {
    private final long numFeatures;
    private final double eps;
    private final Double momentum;

    BatchNorm(long numFeatures, double eps, Double momentum, boolean affine, boolean trackRunningStats, DType dtype, String device) {
        if (numFeatures < 1) {
            throw new IllegalArgumentException(getClass().getSimpleName() + ": numFeatures must be >= 1, got " + numFeatures);
        }
        this.numFeatures = numFeatures;
        this.eps = eps;
        this.momentum = momentum;
        long[] n = {numFeatures};
        registerParameter("weight", affine ? Ops.ones(n, dtype, device) : null);
        registerParameter("bias", affine ? Ops.zeros(n, dtype, device) : null);
        registerBuffer("running_mean", trackRunningStats ? Ops.zeros(n, dtype, device) : null);
        registerBuffer("running_var", trackRunningStats ? Ops.ones(n, dtype, device) : null);
        registerBuffer("num_batches_tracked", trackRunningStats ? Ops.zeros(new long[0], DType.I64, device) : null);
    }

    public long numFeatures() {
        return numFeatures;
    }

    @Override
    public Tensor forward(Tensor x) {
        Tensor w = parameter("weight"), b = parameter("bias");
        Tensor rm = buffer("running_mean"), rv = buffer("running_var"), count = buffer("num_batches_tracked");
        if (rm == null) {
            return first(Ops.batchNorm(x, null, null, w, b, true, 0.1, eps));
        }
        if (!isTraining()) {
            return first(Ops.batchNorm(x, rm, rv, w, b, false, 0.1, eps));
        }
        boolean cumulative = momentum == null;
        Tensor[] outs = Ops.batchNorm(x, rm, rv, w, b, true, cumulative ? 1 : momentum, eps);
        // The running statistics change in place, as torch's buffers do: the
        // Tensor objects (in a state dict, say) stay and hold the new values.
        try (Scope s = Webtensor.scope(); var g = Webtensor.noGrad()) {
            Tensor next = count.add(1);
            Tensor mean = outs[1], var = outs[2];
            if (cumulative) { // running + (batch - running) / batches seen
                Tensor n = next.to(mean.dtype());
                mean = rm.add(mean.sub(rm).div(n));
                var = rv.add(var.sub(rv).div(n));
            }
            count.assign(next);
            rm.assign(mean.newHandle());
            rv.assign(var.newHandle());
        } finally {
            outs[1].close();
            outs[2].close();
        }
        return outs[0];
    }

    /** The first output; the others are closed. */
    private static Tensor first(Tensor[] outs) {
        for (int i = 1; i < outs.length; i++) {
            outs[i].close();
        }
        return outs[0];
    }

    @Override
    protected String extraRepr() {
        return numFeatures + ", eps=" + eps + ", momentum=" + momentum + ", affine=" + (parameter("weight") != null)
                + ", track_running_stats=" + (buffer("running_mean") != null);
    }
}
