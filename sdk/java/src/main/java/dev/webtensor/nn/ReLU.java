package dev.webtensor.nn;

import dev.webtensor.Tensor;

import java.util.List;

/** max(x, 0), as a module for {@link Sequential}. */
public final class ReLU extends Module {
    @Override
    public Tensor forward(Tensor x) {
        return x.relu();
    }

    @Override
    public List<Tensor> parameters() {
        return List.of();
    }
}
