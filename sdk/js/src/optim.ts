// wt.optim: SGD, Adam, AdamW, RMSprop and Adagrad with torch's defaults and
// update formulas, and torch's learning-rate schedules. The runtime runs
// them (Go's nn optimisers through wt_optimizer_*, the schedules' closed
// forms through wt_lr_schedule), so every SDK computes the same bits; a step
// updates each parameter in place (the Tensor objects and their handles
// stay), in one fused kernel per parameter where the device fuses, and a
// failed step changes nothing. Options are the idiom here: change
// `opt.options.lr` (as the schedulers do) and the next step uses it.

import { ATTR_KIND, maybeNative, native } from "./binding.js";
import type { AttrEntry } from "./binding.js";
import { Tensor } from "./core.js";

type Setting = number | boolean | readonly number[];

/** Settings as the runtime takes them: torch's snake_case names, op attributes. */
function settings(values: Record<string, Setting>): AttrEntry[] {
  return Object.entries(values).map(([k, v]): AttrEntry => {
    const name = k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (typeof v === "boolean") return [name, ATTR_KIND.bool, v];
    if (typeof v === "number") return [name, Number.isInteger(v) ? ATTR_KIND.int : ATTR_KIND.float, v];
    return [name, v.every((x) => Number.isInteger(x)) ? ATTR_KIND.ints : ATTR_KIND.floats, [...v]];
  });
}

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

// An optimiser the program drops without dispose() is freed when collected.
const registry = new FinalizationRegistry<number>((h) => maybeNative()?.optimizerFree(h));

type State = Record<string, Tensor | number>;

/** The base of the optimizers: parameters, options, step, zeroGrad and the state under torch's names (camelCase). */
export abstract class Optimizer {
  readonly params: Tensor[];
  abstract readonly options: { lr: number };
  protected abstract readonly kind: string;
  #h = 0;
  #handles: number[] = [];
  #pushed = "";

  constructor(params: Iterable<Tensor>) {
    this.params = [...params];
  }

  /** The runtime's optimizer, made (or made afresh over new handles, keeping its state) and given the current options. */
  protected sync(): number {
    const rt = native();
    const handles = this.params.map((p) => p.handle);
    const opts = settings(this.options as unknown as Record<string, Setting>);
    const key = JSON.stringify(opts);
    if (!this.#h || handles.some((h, i) => h !== this.#handles[i])) {
      const h = rt.optimizerNew(this.kind, handles, opts);
      if (this.#h) {
        const st = rt.optimizerState(this.#h);
        try {
          rt.optimizerLoadState(h, st);
        } finally {
          rt.stateFree(st);
        }
        this.#free();
      }
      this.#h = h;
      this.#handles = handles;
      registry.register(this, h, this);
    } else if (key !== this.#pushed) {
      rt.optimizerSet(this.#h, opts);
    }
    this.#pushed = key;
    return this.#h;
  }

  /** One update of every parameter that has a gradient (the others are left alone). */
  step(): void {
    native().optimizerStep(this.sync());
  }

  zeroGrad(): void {
    native().optimizerZeroGrad(this.sync());
  }

  /** Each updated parameter's state (step, expAvg, ...): new tensors the caller disposes. */
  get state(): Map<Tensor, State> {
    const rt = native();
    const s = rt.optimizerState(this.sync());
    const out = new Map<Tensor, State>();
    try {
      for (let i = 0; i < rt.stateCount(s); i++) {
        const [index, key] = rt.stateName(s, i).split(/\.(.*)/s) as [string, string];
        const p = this.params[Number(index)]!;
        const st = out.get(p) ?? {};
        const t = new Tensor(rt.stateGet(s, i));
        if (key === "step") {
          st.step = Number(t.item());
          t.dispose();
        } else st[camel(key)] = t;
        out.set(p, st);
      }
    } finally {
      rt.stateFree(s);
    }
    return out;
  }

  #free(): void {
    registry.unregister(this);
    native().optimizerFree(this.#h);
    this.#h = 0;
  }

  /** Frees the optimizer's state (moments, momentum buffers); the parameters stay. */
  dispose(): void {
    if (this.#h) this.#free();
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
  protected readonly kind = "sgd";
  readonly options: Required<SGDOptions>;
  constructor(params: Iterable<Tensor>, opts: SGDOptions = {}) {
    super(params);
    this.options = { lr: 1e-3, momentum: 0, dampening: 0, weightDecay: 0, nesterov: false, maximize: false, ...opts };
    this.sync();
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
  protected readonly kind: string = "adam";
  readonly options: Required<AdamOptions>;
  constructor(params: Iterable<Tensor>, opts: AdamOptions = {}) {
    super(params);
    this.options = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, amsgrad: false, maximize: false, ...opts };
    if (new.target === Adam) this.sync();
  }
}

/** torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr*wd before the update); weightDecay defaults to 0.01. */
export class AdamW extends Adam {
  protected override readonly kind = "adamw";
  constructor(params: Iterable<Tensor>, opts: AdamOptions = {}) {
    super(params, { weightDecay: 0.01, ...opts });
    this.sync();
  }
}

export interface RMSpropOptions {
  lr?: number;
  alpha?: number;
  eps?: number;
  weightDecay?: number;
  momentum?: number;
  centered?: boolean;
  maximize?: boolean;
}

/** torch.optim.RMSprop: v = alpha v + (1-alpha) g^2; p -= lr * g / (sqrt(v) + eps), centered and with momentum as torch's. */
export class RMSprop extends Optimizer {
  protected readonly kind = "rmsprop";
  readonly options: Required<RMSpropOptions>;
  constructor(params: Iterable<Tensor>, opts: RMSpropOptions = {}) {
    super(params);
    this.options = { lr: 1e-2, alpha: 0.99, eps: 1e-8, weightDecay: 0, momentum: 0, centered: false, maximize: false, ...opts };
    this.sync();
  }
}

export interface AdagradOptions {
  lr?: number;
  lrDecay?: number;
  weightDecay?: number;
  initialAccumulatorValue?: number;
  eps?: number;
  maximize?: boolean;
}

/** torch.optim.Adagrad: sum += g^2; p -= lr / (1 + (t-1) lrDecay) * g / (sqrt(sum) + eps). */
export class Adagrad extends Optimizer {
  protected readonly kind = "adagrad";
  readonly options: Required<AdagradOptions>;
  constructor(params: Iterable<Tensor>, opts: AdagradOptions = {}) {
    super(params);
    this.options = { lr: 1e-2, lrDecay: 0, weightDecay: 0, initialAccumulatorValue: 0, eps: 1e-10, maximize: false, ...opts };
    this.sync();
  }
}

/**
 * The base of the learning-rate schedules (torch.optim.lr_scheduler's closed
 * forms, computed by the runtime): step() after the optimizer's sets its
 * options.lr for the next step.
 */
export abstract class LRScheduler {
  /** Steps taken (torch's last_epoch). */
  lastEpoch = -1;
  readonly baseLr: number;
  #lastLr = 0;

  constructor(readonly optimizer: Optimizer, private readonly kind: string, private readonly values: Record<string, Setting>) {
    this.baseLr = optimizer.options.lr;
    this.step();
  }

  step(): void {
    this.lastEpoch++;
    this.#lastLr = native().lrSchedule(this.kind, settings(this.values), this.baseLr, this.lastEpoch);
    this.optimizer.options.lr = this.#lastLr;
  }

  /** The rate the optimizer uses now. */
  get lastLr(): number {
    return this.#lastLr;
  }
}

/** lr = base * gamma^floor(epoch / stepSize). */
export class StepLR extends LRScheduler {
  constructor(optimizer: Optimizer, opts: { stepSize: number; gamma?: number }) {
    super(optimizer, "step", { stepSize: opts.stepSize, gamma: opts.gamma ?? 0.1 });
  }
}

/** lr = base * gamma^(milestones passed). */
export class MultiStepLR extends LRScheduler {
  constructor(optimizer: Optimizer, opts: { milestones: number[]; gamma?: number }) {
    super(optimizer, "multistep", { milestones: [...opts.milestones].sort((a, b) => a - b), gamma: opts.gamma ?? 0.1 });
  }
}

/** lr = base * gamma^epoch. */
export class ExponentialLR extends LRScheduler {
  constructor(optimizer: Optimizer, opts: { gamma: number }) {
    super(optimizer, "exponential", { gamma: opts.gamma });
  }
}

/** lr = etaMin + (base - etaMin) * (1 + cos(pi * epoch / tMax)) / 2. */
export class CosineAnnealingLR extends LRScheduler {
  constructor(optimizer: Optimizer, opts: { tMax: number; etaMin?: number }) {
    super(optimizer, "cosine", { tMax: opts.tMax, etaMin: opts.etaMin ?? 0 });
  }
}

/** lr = base * (startFactor + (endFactor - startFactor) * min(epoch, totalIters) / totalIters). */
export class LinearLR extends LRScheduler {
  constructor(optimizer: Optimizer, opts: { startFactor?: number; endFactor?: number; totalIters?: number } = {}) {
    super(optimizer, "linear", { startFactor: opts.startFactor ?? 1 / 3, endFactor: opts.endFactor ?? 1, totalIters: opts.totalIters ?? 5 });
  }
}
