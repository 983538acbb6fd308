package dev.webtensor.nn;

import dev.webtensor.Tensor;

import java.util.ArrayList;
import java.util.List;

/** Modules applied in order; the intermediate outputs are closed as soon as the next one exists. */
public final class Sequential extends Module {
    private final List<Module> layers;

    public Sequential(Module... layers) {
        this.layers = List.of(layers);
    }

    @Override
    public Tensor forward(Tensor x) {
        Tensor cur = null;
        for (Module m : layers) {
            Tensor next = m.forward(cur == null ? x : cur);
            if (cur != null) {
                cur.close(); // the autograd graph keeps what backward needs; the handle is ours to drop
            }
            cur = next;
        }
        return cur == null ? x.detach() : cur;
    }

    @Override
    public List<Tensor> parameters() {
        List<Tensor> out = new ArrayList<>();
        layers.forEach(m -> out.addAll(m.parameters()));
        return out;
    }
}
