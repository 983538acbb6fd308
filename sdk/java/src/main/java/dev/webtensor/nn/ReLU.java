package dev.webtensor.nn;

import dev.webtensor.Tensor;

/** max(x, 0), as a module for {@link Sequential}. */
public final class ReLU extends Module {
    @Override
    public Tensor forward(Tensor x) {
        return x.relu();
    }
}
