package dev.webtensor.nn;

import dev.webtensor.Tensor;

import java.util.List;

/** tanh(x), as a module for {@link Sequential}. */
public final class Tanh extends Module {
    @Override
    public Tensor forward(Tensor x) {
        return x.tanh();
    }

    @Override
    public List<Tensor> parameters() {
        return List.of();
    }
}
