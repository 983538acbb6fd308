// wt.optim: SGD, Adam and AdamW with torch's update formulas and defaults,
// the same equations (term for term) as the Go nn package and the Python
// SDK, so the same seed trains to the same losses in every SDK.
//
// A step computes every new value without autograd first and only then
// installs them into the parameter objects (Tensor._adopt), so a failing op
// leaves every parameter as it was and models keep their references.

import { Tensor, noGrad, tidy } from "./core.js";
import * as ops from "./ops.gen.js";

type State = Record<string, Tensor | number>;

function mul(t: Tensor, v: number): Tensor {
  return v === 1 ? t : ops.mul(t, v);
}

/** The gradient an update uses: negated when maximising, plus wd * p (L2) when wd != 0. */
function effectiveGrad(p: Tensor, grad: Tensor, maximize: boolean, wd: number): Tensor {
  const g = maximize ? ops.neg(grad) : grad;
  return wd !== 0 ? ops.add(g, mul(p, wd)) : g;
}

/** torch's lerp, computed from the nearer end as its kernel does. */
function lerp(start: Tensor, end: Tensor, w: number): Tensor {
  return w < 0.5 ? ops.add(start, mul(ops.sub(end, start), w)) : ops.sub(end, mul(ops.sub(end, start), 1 - w));
}

/** The base of the optimizers: parameters, per-parameter state, zeroGrad and the all-or-nothing step. */
export abstract class Optimizer {
  readonly params: Tensor[];
  readonly state = new Map<Tensor, State>();

  constructor(params: Iterable<Tensor>) {
    this.params = [...params];
    if (this.params.length === 0) throw new Error(`webtensor: ${this.constructor.name}: no parameters to optimise`);
  }

  protected abstract update(p: Tensor, grad: Tensor, state: State): [Tensor, State];

  zeroGrad(): void {
    for (const p of this.params) p.zeroGrad();
  }

  /** One update of every parameter that has a gradient (the others are left alone). */
  step(): void {
    const updates = noGrad(() =>
      tidy(() => {
        const out: [Tensor, Tensor, State][] = [];
        for (const p of this.params) {
          const g = p.grad;
          if (!g) continue;
          const [value, st] = this.update(p, g, this.state.get(p) ?? {});
          if (value.shape.join(",") !== p.shape.join(",") || value.dtype !== p.dtype) {
            throw new Error(`webtensor: ${this.constructor.name} step: the gradient of a parameter of shape [${p.shape}] has shape [${g.shape}]`);
          }
          out.push([p, value, st]);
        }
        return out.map(([p, v, st]) => ({ p, v, st }));
      }),
    );
    for (const { p, v, st } of updates) {
      // commit: nothing can fail past here
      const old = this.state.get(p) ?? {};
      p._adopt(v);
      this.state.set(p, st);
      for (const x of Object.values(old)) if (x instanceof Tensor && !Object.values(st).includes(x)) x.dispose();
    }
  }

  /** Frees the optimizer's state tensors (moments, momentum buffers). */
  dispose(): void {
    for (const st of this.state.values()) for (const x of Object.values(st)) if (x instanceof Tensor) x.dispose();
    this.state.clear();
  }
}

export interface SGDOptions {
  lr?: number;
  momentum?: number;
  dampening?: number;
  weightDecay?: number;
  nesterov?: boolean;
  maximize?: boolean;
}

/** torch.optim.SGD: buf = momentum*buf + (1-dampening)*g; p -= lr * (nesterov ? g + momentum*buf : buf). */
export class SGD extends Optimizer {
  readonly options: Required<SGDOptions>;
  constructor(params: Iterable<Tensor>, opts: SGDOptions = {}) {
    super(params);
    this.options = { lr: 1e-3, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false, ...opts };
    const o = this.options;
    if (o.lr < 0) throw new Error(`webtensor: SGD: invalid learning rate ${o.lr}`);
    if (o.momentum < 0) throw new Error(`webtensor: SGD: invalid momentum ${o.momentum}`);
    if (o.weightDecay < 0) throw new Error(`webtensor: SGD: invalid weightDecay ${o.weightDecay}`);
    if (o.nesterov && (o.momentum <= 0 || o.dampening !== 0)) {
      throw new Error("webtensor: SGD: Nesterov momentum requires a momentum and zero dampening");
    }
  }

  protected update(p: Tensor, grad: Tensor, state: State): [Tensor, State] {
    const o = this.options;
    let g = effectiveGrad(p, grad, o.maximize, o.weightDecay);
    const st: State = {};
    if (o.momentum !== 0) {
      const prev = state.momentumBuffer as Tensor | undefined;
      const buf = prev ? ops.add(mul(prev, o.momentum), mul(g, 1 - o.dampening)) : ops.contiguous(g);
      st.momentumBuffer = buf;
      g = o.nesterov ? ops.add(g, mul(buf, o.momentum)) : buf;
    }
    return [ops.sub(p, mul(g, o.lr)), st];
  }
}

export interface AdamOptions {
  lr?: number;
  betas?: [number, number];
  eps?: number;
  weightDecay?: number;
  amsgrad?: boolean;
  maximize?: boolean;
}

/** torch.optim.Adam: m = lerp(m, g, 1-b1); v = b2 v + (1-b2) g^2; p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps). */
export class Adam extends Optimizer {
  readonly options: Required<AdamOptions>;
  protected decoupled = false;
  constructor(params: Iterable<Tensor>, opts: AdamOptions = {}) {
    super(params);
    this.options = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, amsgrad: false, maximize: false, ...opts };
    const { lr, betas, eps, weightDecay } = this.options;
    const name = this.constructor.name;
    if (lr < 0) throw new Error(`webtensor: ${name}: invalid learning rate ${lr}`);
    if (eps < 0) throw new Error(`webtensor: ${name}: invalid epsilon ${eps}`);
    betas.forEach((b, i) => {
      if (!(b >= 0 && b < 1)) throw new Error(`webtensor: ${name}: invalid beta parameter at index ${i}: ${b}`);
    });
    if (weightDecay < 0) throw new Error(`webtensor: ${name}: invalid weightDecay ${weightDecay}`);
  }

  protected update(p: Tensor, grad: Tensor, state: State): [Tensor, State] {
    const { lr, betas, eps, amsgrad, maximize } = this.options;
    let wd = this.options.weightDecay;
    const [b1, b2] = betas;
    let x = p;
    if (this.decoupled) {
      x = mul(x, 1 - lr * wd);
      wd = 0;
    }
    const g = effectiveGrad(p, grad, maximize, wd);
    let m = (state.expAvg as Tensor | undefined) ?? ops.zerosLike(x);
    let v = (state.expAvgSq as Tensor | undefined) ?? ops.zerosLike(x);
    m = lerp(m, g, 1 - b1);
    v = ops.add(mul(v, b2), mul(ops.mul(g, g), 1 - b2));
    const step = ((state.step as number | undefined) ?? 0) + 1;
    const stepSize = lr / (1 - b1 ** step);
    const bc2Sqrt = Math.sqrt(1 - b2 ** step);
    const st: State = { step, expAvg: m, expAvgSq: v };
    let second = v;
    if (amsgrad) {
      second = st.maxExpAvgSq = ops.maximum((state.maxExpAvgSq as Tensor | undefined) ?? ops.zerosLike(x), v);
    }
    let denom = ops.div(ops.sqrt(second), bc2Sqrt);
    if (eps !== 0) denom = ops.add(denom, eps);
    return [ops.sub(x, mul(ops.div(m, denom), stepSize)), st];
  }
}

/** torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr*wd before the update); weightDecay defaults to 0.01. */
export class AdamW extends Adam {
  constructor(params: Iterable<Tensor>, opts: AdamOptions = {}) {
    super(params, { weightDecay: 0.01, ...opts });
    this.decoupled = true;
  }
}
