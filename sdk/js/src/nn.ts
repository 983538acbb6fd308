// wt.nn: modules with PyTorch's state-dict names, the layers the other SDKs
// have in common, and initialisation drawn like theirs (the same seed gives
// the same weights in Go, Python, Java and JavaScript).

import { native } from "./binding.js";
import { Tensor, noGrad } from "./core.js";
import type { DType } from "./dtype.js";
import { Module } from "./module.js";
import type { LayerOptions } from "./module.js";
import * as ops from "./ops.gen.js";

export { Module, ModuleList, Parameter } from "./module.js";
export type { LayerOptions } from "./module.js";
export { BatchNorm1d, BatchNorm2d, CrossEntropyLoss, Identity, MultiheadAttention } from "./layers.js";
export type { BatchNormOptions, CrossEntropyLossOptions, MultiheadAttentionOptions, AttentionCallOptions } from "./layers.js";
export * as init from "./init.js";

/**
 * Scales the gradients of params so that their total normType-norm is at
 * most maxNorm (torch.nn.utils.clip_grad_norm_), on the device; returns the
 * total norm before clipping, a 0-d tensor. Parameters without a gradient
 * are skipped.
 */
export function clipGradNorm(params: Iterable<Tensor>, maxNorm: number, normType = 2): Tensor {
  return new Tensor(native().clipGradNorm([...params].map((p) => p.handle), maxNorm, normType));
}

/** Clamps every gradient element of params into [-clip, clip] (torch.nn.utils.clip_grad_value_). */
export function clipGradValue(params: Iterable<Tensor>, clip: number): void {
  native().clipGradValue([...params].map((p) => p.handle), clip);
}

/** U(lo, hi) drawn as Go's nn and Python's init do: rand * (hi - lo) + lo, skipping * 1 and + 0. */
function uniform(shape: readonly number[], lo: number, hi: number, dtype?: DType, device?: string): Tensor {
  return noGrad(() => {
    let u = ops.rand({ shape, dtype, device });
    if (hi - lo !== 1) u = swap(u, ops.mul(u, hi - lo));
    if (lo !== 0) u = swap(u, ops.add(u, lo));
    return u;
  });
}

function swap(old: Tensor, next: Tensor): Tensor {
  old.dispose();
  return next;
}

/** A Linear's or convolution's weight then bias, as torch's reset_parameters draws them: U(+-1/sqrt(fan_in)). */
function defaultWeightAndBias(wShape: number[], biasLen: number | null, dtype?: DType, device?: string): [Tensor, Tensor | null] {
  const fanIn = wShape.slice(1).reduce((a, b) => a * b, 1);
  const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
  const w = uniform(wShape, -bound, bound, dtype, device);
  const b = biasLen === null ? null : uniform([biasLen], -bound, bound, dtype, device);
  return [w, b];
}

/** y = x W^T + b over the last dimension. State: weight (out, in), bias (out). */
export class Linear extends Module {
  constructor(readonly inFeatures: number, readonly outFeatures: number, opts: LayerOptions & { bias?: boolean } = {}) {
    super();
    if (!Number.isInteger(inFeatures) || !Number.isInteger(outFeatures) || inFeatures < 0 || outFeatures < 0) {
      throw new Error(`webtensor: Linear: sizes must be integers >= 0, got in=${inFeatures} out=${outFeatures}`);
    }
    const [w, b] = defaultWeightAndBias([outFeatures, inFeatures], opts.bias === false ? null : outFeatures, opts.dtype, opts.device);
    this.registerParameter("weight", w);
    this.registerParameter("bias", b);
  }

  override forward(x: Tensor): Tensor {
    const wt = ops.transpose(this.param("weight")!);
    const y = ops.matmul(x, wt);
    wt.dispose();
    const b = this.param("bias");
    if (!b) return y;
    const out = ops.add(y, b);
    y.dispose();
    return out;
  }
}

/** 2-D convolution over NCHW. State: weight (out, in/groups, kh, kw), bias (out). */
export class Conv2d extends Module {
  readonly options: { stride: number[]; padding: number[]; dilation: number[]; groups: number };
  constructor(inChannels: number, outChannels: number, kernelSize: number | [number, number],
    opts: LayerOptions & { stride?: number | number[]; padding?: number | number[]; dilation?: number | number[]; groups?: number; bias?: boolean } = {}) {
    super();
    const groups = opts.groups ?? 1;
    if (inChannels < 1 || outChannels < 1 || groups < 1 || inChannels % groups || outChannels % groups) {
      throw new Error(`webtensor: Conv2d: channels (${inChannels}, ${outChannels}) must be >= 1 and divisible by groups ${groups}`);
    }
    const k = typeof kernelSize === "number" ? [kernelSize, kernelSize] : kernelSize;
    const list = (v: number | number[] | undefined, d: number) => (v === undefined ? [d] : typeof v === "number" ? [v] : v);
    this.options = { stride: list(opts.stride, 1), padding: list(opts.padding, 0), dilation: list(opts.dilation, 1), groups };
    const [w, b] = defaultWeightAndBias([outChannels, inChannels / groups, ...k], opts.bias === false ? null : outChannels, opts.dtype, opts.device);
    this.registerParameter("weight", w);
    this.registerParameter("bias", b);
  }

  override forward(x: Tensor): Tensor {
    return ops.conv2d(x, this.param("weight")!, this.param("bias"), this.options);
  }
}

/** Normalises the trailing dims. State: weight (ones), bias (zeros). */
export class LayerNorm extends Module {
  readonly normalizedShape: number[];
  constructor(normalizedShape: number | number[], readonly eps = 1e-5, opts: LayerOptions = {}) {
    super();
    this.normalizedShape = typeof normalizedShape === "number" ? [normalizedShape] : normalizedShape;
    this.registerParameter("weight", ops.ones({ shape: this.normalizedShape, dtype: opts.dtype, device: opts.device }));
    this.registerParameter("bias", ops.zeros({ shape: this.normalizedShape, dtype: opts.dtype, device: opts.device }));
  }

  override forward(x: Tensor): Tensor {
    return ops.layerNorm(x, this.param("weight"), this.param("bias"), { normalizedShape: this.normalizedShape, eps: this.eps });
  }
}

/** A lookup table. State: weight (num, dim) from N(0, 1). */
export class Embedding extends Module {
  constructor(num: number, dim: number, opts: LayerOptions = {}) {
    super();
    this.registerParameter("weight", noGrad(() => ops.randn({ shape: [num, dim], dtype: opts.dtype, device: opts.device })));
  }

  override forward(indices: Tensor): Tensor {
    return ops.embedding(this.param("weight")!, indices);
  }
}

/** Zeroes elements with probability p while training (scaling the rest by 1/(1-p)); the identity in eval(). */
export class Dropout extends Module {
  constructor(readonly p = 0.5) {
    super();
    if (!(p >= 0 && p <= 1)) throw new Error(`webtensor: Dropout: p must be in [0, 1], got ${p}`);
  }

  override forward(x: Tensor): Tensor {
    return ops.dropout(x, { p: this.p, training: this.training });
  }
}

/** An activation as a module (no state). */
class Activation extends Module {
  constructor(readonly fn: (x: Tensor) => Tensor) {
    super();
  }

  override forward(x: Tensor): Tensor {
    return this.fn(x);
  }
}

export class ReLU extends Activation {
  constructor() {
    super((x) => ops.relu(x));
  }
}
export class GELU extends Activation {
  constructor() {
    super((x) => ops.gelu(x));
  }
}
export class Tanh extends Activation {
  constructor() {
    super((x) => ops.tanh(x));
  }
}
export class Sigmoid extends Activation {
  constructor() {
    super((x) => ops.sigmoid(x));
  }
}
export class SiLU extends Activation {
  constructor() {
    super((x) => ops.silu(x));
  }
}
/** Flattens every dim from the second on: (N, ...) -> (N, prod(...)). */
export class Flatten extends Activation {
  constructor() {
    super((x) => ops.reshape(x, { shape: [x.shape[0] ?? 1, -1] }));
  }
}

/** Runs its modules in order; their parameters are named "0.weight", "1.bias", ... as in PyTorch. */
export class Sequential extends Module {
  constructor(...layers: Module[]) {
    super();
    layers.forEach((m, i) => this.registerModule(String(i), m));
  }

  /**
   * The intermediate results' handles are freed as soon as the next layer has
   * used them: the autograd graph keeps what backward needs on its own.
   */
  override forward(x: Tensor): Tensor {
    let y = x;
    for (const m of this.children()) {
      const next = m.forward(y);
      if (y !== x && y !== next) y.dispose(); // a layer may return its input (Identity)
      y = next;
    }
    return y;
  }
}
