package dev.webtensor.nn;

import dev.webtensor.Tensor;

/**
 * Zeroes each element with probability p in training mode and scales the
 * rest by 1/(1-p), as torch.nn.Dropout; the identity after {@link #eval}. The
 * mask draws from the global generator.
 */
public final class Dropout extends Module {
    private final double p;

    public Dropout() {
        this(0.5);
    }

    public Dropout(double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException("Dropout: probability must be between 0 and 1, got " + p);
        }
        this.p = p;
    }

    public double p() {
        return p;
    }

    @Override
    public Tensor forward(Tensor x) {
        if (!isTraining() || p == 0) {
            return x.newHandle();
        }
        return x.dropout(p, true, null, null);
    }

    @Override
    protected String extraRepr() {
        return "p=" + p;
    }
}
