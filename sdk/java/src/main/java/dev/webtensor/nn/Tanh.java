package dev.webtensor.nn;

import dev.webtensor.Tensor;

/** tanh(x), as a module for {@link Sequential}. */
public final class Tanh extends Module {
    @Override
    public Tensor forward(Tensor x) {
        return x.tanh();
    }
}
