package dev.webtensor.nn;

import dev.webtensor.Tensor;

/** x * Phi(x) with the exact normal CDF, or its tanh approximation, as torch.nn.GELU. */
public final class GELU extends Module {
    private final String approximate;

    public GELU() {
        this("none");
    }

    /** approximate: "none" (exact) or "tanh". */
    public GELU(String approximate) {
        if (!approximate.equals("none") && !approximate.equals("tanh")) {
            throw new IllegalArgumentException("GELU: approximate must be \"none\" or \"tanh\", got \"" + approximate
                    + "\"");
        }
        this.approximate = approximate;
    }

    @Override
    public Tensor forward(Tensor x) {
        return x.gelu(approximate);
    }

    @Override
    protected String extraRepr() {
        return approximate.equals("none") ? "" : "approximate='" + approximate + "'";
    }
}
