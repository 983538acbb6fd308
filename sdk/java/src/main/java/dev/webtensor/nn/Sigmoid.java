package dev.webtensor.nn;

import dev.webtensor.Tensor;

/** 1 / (1 + exp(-x)), as a module for {@link Sequential}. */
public final class Sigmoid extends Module {
    @Override
    public Tensor forward(Tensor x) {
        return x.sigmoid();
    }
}
