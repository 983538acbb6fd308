package dev.webtensor.nn;

import dev.webtensor.Tensor;

import java.util.List;

/**
 * Modules applied in order, as torch.nn.Sequential: their parameters are
 * named "0.weight", "2.bias", ... by position.
 */
public final class Sequential extends Module {
    private final List<Module> layers;

    public Sequential(Module... layers) {
        for (int i = 0; i < layers.length; i++) {
            registerModule(String.valueOf(i), layers[i]);
        }
        this.layers = List.of(layers);
    }

    /** The layer at position i. */
    public Module get(int i) {
        return layers.get(i);
    }

    public int size() {
        return layers.size();
    }

    /**
     * Each intermediate output is closed as soon as the next layer has used it:
     * the autograd graph keeps what backward needs on its own.
     */
    @Override
    public Tensor forward(Tensor x) {
        Tensor cur = null;
        for (Module m : layers) {
            Tensor next;
            try {
                next = m.forward(cur == null ? x : cur);
            } finally {
                if (cur != null) {
                    cur.close();
                }
            }
            cur = next;
        }
        return cur == null ? x.newHandle() : cur;
    }
}
