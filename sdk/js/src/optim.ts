// wt.optim: SGD, Adam, AdamW, RMSprop and Adagrad with torch's defaults and
// update formulas, and torch's learning-rate schedules. The runtime runs
// them (Go's nn optimisers through wt_optimizer_*, the schedules' closed
// forms through wt_lr_schedule), so every SDK computes the same bits; a step
// updates each parameter in place (the Tensor objects and their handles
// stay), in one fused kernel per parameter where the device fuses, and a
// failed step changes nothing. Options are the idiom here: change
// `opt.options.lr` (as the schedulers do) and the next step uses it.

import { native } from "./binding.js";
import { Optimizer, settings, type Setting } from "./optimizer.js";

export { Optimizer } from "./optimizer.js";
export * from "./optim.gen.js";

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
