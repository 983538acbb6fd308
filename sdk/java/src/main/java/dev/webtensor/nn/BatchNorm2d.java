package dev.webtensor.nn;

import dev.webtensor.DType;

/** {@link BatchNorm} over (N, C, H, W), as torch.nn.BatchNorm2d. */
public final class BatchNorm2d extends BatchNorm {
    /** torch's defaults: eps 1e-5, momentum 0.1, affine, tracking running statistics. */
    public BatchNorm2d(long numFeatures) {
        this(numFeatures, 1e-5, 0.1, true, true, null, null);
    }

    /** momentum null: a cumulative average; dtype and device of the state (null: f32, the default device). */
    public BatchNorm2d(long numFeatures, double eps, Double momentum, boolean affine, boolean trackRunningStats, DType dtype,
                       String device) {
        super(numFeatures, eps, momentum, affine, trackRunningStats, dtype, device);
    }
}
