package dev.webtensor.optim;

import dev.webtensor.Tensor;

import java.util.List;

/** Adam (Kingma and Ba), with bias correction, as torch.optim.Adam without weight decay. */
public final class Adam extends Optimizer {
    private final double lr, beta1, beta2, eps;
    private final Tensor[] m, v;
    private int steps;

    public Adam(List<Tensor> params, double lr) {
        this(params, lr, 0.9, 0.999, 1e-8);
    }

    public Adam(List<Tensor> params, double lr, double beta1, double beta2, double eps) {
        super(params);
        this.lr = lr;
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.eps = eps;
        this.m = new Tensor[this.params.size()];
        this.v = new Tensor[this.params.size()];
    }

    @Override
    public void step() {
        steps++;
        super.step();
    }

    @Override
    protected Tensor update(int i, Tensor p, Tensor g, Temps t) {
        Tensor g2 = t.add(g.mul(g));
        Tensor mi = m[i] == null ? g.mul(1 - beta1) : t.add(m[i].mul(beta1)).add(t.add(g.mul(1 - beta1)));
        Tensor vi = v[i] == null ? g2.mul(1 - beta2) : t.add(v[i].mul(beta2)).add(t.add(g2.mul(1 - beta2)));
        if (m[i] != null) {
            m[i].close();
            v[i].close();
        }
        m[i] = mi;
        v[i] = vi;
        double c1 = 1 - Math.pow(beta1, steps), c2 = 1 - Math.pow(beta2, steps);
        Tensor denom = t.add(t.add(t.add(vi.div(c2)).sqrt()).add(eps));
        Tensor stepDir = t.add(t.add(mi.div(c1)).div(denom));
        return p.sub(t.add(stepDir.mul(lr)));
    }

    @Override
    public void close() {
        for (int i = 0; i < m.length; i++) {
            if (m[i] != null) {
                m[i].close();
                v[i].close();
                m[i] = v[i] = null;
            }
        }
    }
}
