// The layers Python's wt.nn has beyond nn.ts's: Identity, BatchNorm1d/2d,
// CrossEntropyLoss and MultiheadAttention, composed from the runtime's ops
// as Python's are (same arguments, state-dict names, draws and results).
//
// Linear is imported from nn.ts, which re-exports this file: the cycle is
// safe because Linear is only used inside constructors, after both files
// have run.

import { Tensor, noGrad, tensor, tidy } from "./core.js";
import * as init from "./init.js";
import { Module, assignInPlace } from "./module.js";
import type { LayerOptions } from "./module.js";
import { Linear } from "./nn.js";
import * as ops from "./ops.gen.js";

/** Returns its input (a placeholder layer); constructor arguments are accepted and ignored, as torch's. */
export class Identity extends Module<[Tensor], Tensor> {
  constructor(..._args: unknown[]) {
    super();
  }

  override forward(x: Tensor): Tensor {
    return x;
  }
}

export interface BatchNormOptions extends LayerOptions {
  /** Added to the variance (default 1e-5). */
  eps?: number;
  /** Weight of a batch's statistics in the running ones (default 0.1); null keeps a cumulative average. */
  momentum?: number | null;
  /** A learned per-channel scale and shift (default true). */
  affine?: boolean;
  /** Keep running statistics for eval() (default true); without, batch statistics are used always. */
  trackRunningStats?: boolean;
}

/**
 * Per-channel normalisation of (N, C, ...) with batch statistics while
 * training and the running ones in eval(). State: weight, bias,
 * running_mean, running_var, num_batches_tracked (torch's names).
 */
class BatchNorm extends Module<[Tensor], Tensor> {
  readonly eps: number;
  readonly momentum: number | null;

  constructor(readonly numFeatures: number, opts: BatchNormOptions = {}) {
    super();
    if (!Number.isInteger(numFeatures) || numFeatures < 1) {
      throw new Error(`webtensor: ${new.target.name}: numFeatures must be an integer >= 1, got ${numFeatures}`);
    }
    this.eps = opts.eps ?? 1e-5;
    this.momentum = opts.momentum === undefined ? 0.1 : opts.momentum;
    const like = { shape: [numFeatures], dtype: opts.dtype, device: opts.device };
    const affine = opts.affine ?? true;
    this.registerParameter("weight", affine ? ops.ones(like) : null);
    this.registerParameter("bias", affine ? ops.zeros(like) : null);
    const track = opts.trackRunningStats ?? true;
    this.registerBuffer("running_mean", track ? ops.zeros(like) : null);
    this.registerBuffer("running_var", track ? ops.ones(like) : null);
    this.registerBuffer("num_batches_tracked", track ? ops.zeros({ shape: [], dtype: "i64", device: opts.device }) : null);
  }

  override forward(x: Tensor): Tensor {
    const w = this.param("weight");
    const b = this.param("bias");
    const rm = this.buffer("running_mean");
    const rv = this.buffer("running_var");
    const count = this.buffer("num_batches_tracked");
    if (!rm || !rv || !count) return first(ops.batchNorm(x, null, null, w, b, { training: true, eps: this.eps }));
    if (!this.training) return first(ops.batchNorm(x, rm, rv, w, b, { training: false, eps: this.eps }));
    const cumulative = this.momentum === null;
    const [y, mean, variance] = ops.batchNorm(x, rm, rv, w, b, { training: true, momentum: cumulative ? 1 : this.momentum!, eps: this.eps });
    try {
      // The running statistics change in place, as torch's buffers do: a
      // state dict or a holder of the tensors sees the new values.
      noGrad(() =>
        tidy(() => {
          const next = ops.add(count, 1);
          let m = mean!;
          let v = variance!;
          if (cumulative) { // running = running + (batch - running) / batches seen
            const n = ops.cast(next, { dtype: m.dtype });
            m = ops.add(rm, ops.div(ops.sub(m, rm), n));
            v = ops.add(rv, ops.div(ops.sub(v, rv), n));
          }
          assignInPlace([[count, next], [rm, m], [rv, v]], this.constructor.name);
        }),
      );
    } finally {
      mean!.dispose();
      variance!.dispose();
    }
    return y!;
  }
}

/** The first output of a multi-output op; the others are freed. */
function first(outs: Tensor[]): Tensor {
  for (const t of outs.slice(1)) t.dispose();
  return outs[0]!;
}

/** BatchNorm over (N, C) or (N, C, L). */
export class BatchNorm1d extends BatchNorm {}
/** BatchNorm over (N, C, H, W). */
export class BatchNorm2d extends BatchNorm {}

export interface CrossEntropyLossOptions {
  /** Per-class weights (C,); the module keeps its own handle to them (state "weight"). */
  weight?: Tensor | null;
  /** Targets of this class count for nothing (default -100). */
  ignoreIndex?: number;
  /** "mean" (default), "sum" or "none". */
  reduction?: "mean" | "sum" | "none";
  /** Mixes the targets with the uniform distribution (default 0). */
  labelSmoothing?: number;
}

/** The cross_entropy op as a module: logits (N, C, ...) or (C,) against class indices or probabilities. */
export class CrossEntropyLoss extends Module<[Tensor, Tensor], Tensor> {
  readonly ignoreIndex: number;
  readonly reduction: "mean" | "sum" | "none";
  readonly labelSmoothing: number;

  constructor(opts: CrossEntropyLossOptions = {}) {
    super();
    this.registerBuffer("weight", opts.weight ? opts.weight.detach() : null);
    this.ignoreIndex = opts.ignoreIndex ?? -100;
    this.reduction = opts.reduction ?? "mean";
    this.labelSmoothing = opts.labelSmoothing ?? 0;
  }

  override forward(input: Tensor, target: Tensor): Tensor {
    return ops.crossEntropy(input, target, this.buffer("weight"), {
      reduction: this.reduction, ignoreIndex: this.ignoreIndex, labelSmoothing: this.labelSmoothing,
    });
  }
}

export interface MultiheadAttentionOptions extends LayerOptions {
  /** Dropout on the attention weights while training (default 0). */
  dropout?: number;
  /** Biases on the projections (default true). */
  bias?: boolean;
  /** Inputs are (N, L, E) rather than (L, N, E) (default false). */
  batchFirst?: boolean;
}

export interface AttentionCallOptions {
  /** (N, S) or (S,): true (bool) where a key is padding and not attended; a float mask is added. */
  keyPaddingMask?: Tensor | null;
  /** Return the attention weights too (default true); without, the fused attention op runs. */
  needWeights?: boolean;
  /** (L, S) or (N·H, L, S): true (bool) where attention is NOT allowed; a float mask is added. */
  attnMask?: Tensor | null;
  /** Average the weights over heads (default true). */
  averageAttnWeights?: boolean;
  /** Mask out the future (top-left aligned, as torch's). */
  isCausal?: boolean;
}

/**
 * torch.nn.MultiheadAttention with equal query, key and value widths.
 * State: in_proj_weight (3E, E), in_proj_bias (3E), out_proj.weight,
 * out_proj.bias. forward returns [output, weights or null].
 */
export class MultiheadAttention extends Module<[Tensor, Tensor, Tensor, AttentionCallOptions?], [Tensor, Tensor | null]> {
  readonly headDim: number;
  readonly dropout: number;
  readonly batchFirst: boolean;
  readonly outProj: Linear;

  constructor(readonly embedDim: number, readonly numHeads: number, opts: MultiheadAttentionOptions = {}) {
    super();
    if (!Number.isInteger(embedDim) || !Number.isInteger(numHeads) || embedDim < 1 || numHeads < 1 || embedDim % numHeads) {
      throw new Error(`webtensor: MultiheadAttention: embedDim (${embedDim}) must be a positive multiple of numHeads (${numHeads})`);
    }
    this.headDim = embedDim / numHeads;
    this.dropout = opts.dropout ?? 0;
    this.batchFirst = opts.batchFirst ?? false;
    const e = embedDim;
    const like = { dtype: opts.dtype, device: opts.device };
    // The Go package's order of draws: the xavier in-projection, then
    // out_proj as a Linear (whose bias is then zeroed).
    const w = ops.zeros({ shape: [3 * e, e], ...like });
    this.registerParameter("in_proj_weight", w);
    init.xavierUniform_(w);
    const bias = opts.bias ?? true;
    this.registerParameter("in_proj_bias", bias ? ops.zeros({ shape: [3 * e], ...like }) : null);
    this.outProj = new Linear(e, e, { bias, ...like });
    this.registerModule("out_proj", this.outProj);
    const ob = this.outProj.param("bias");
    if (ob) init.constant_(ob, 0);
  }

  override forward(query: Tensor, key: Tensor, value: Tensor, opts: AttentionCallOptions = {}): [Tensor, Tensor | null] {
    const needWeights = opts.needWeights ?? true;
    const isCausal = opts.isCausal ?? false;
    return tidy(() => {
      const batched = query.ndim === 3;
      let [q, k, v] = [query, key, value];
      if (!batched) [q, k, v] = [q, k, v].map((t) => ops.unsqueeze(t, { axis: 0 })) as [Tensor, Tensor, Tensor];
      else if (!this.batchFirst) [q, k, v] = [q, k, v].map((t) => ops.transpose(t, { dim0: 0, dim1: 1 })) as [Tensor, Tensor, Tensor];
      const [n, tq] = [q.shape[0]!, q.shape[1]!];
      const s = k.shape[1]!;
      const [qp, kp, vp] = this.#project(query === key && key === value, q, k, v);
      const [qh, kh, vh] = [this.#heads(qp, n, tq), this.#heads(kp, n, s), this.#heads(vp, n, s)];
      let bias = this.#bias(opts, isCausal, n, tq, s, batched, qh);
      const scale = 1 / Math.sqrt(Math.max(this.headDim, 1));
      const p = this.training ? this.dropout : 0;
      let weights: Tensor | null = null;
      let out: Tensor;
      if (needWeights || p > 0) {
        let scores = ops.mul(ops.matmul(qh, ops.transpose(kh, { dim0: -2, dim1: -1 })), scale);
        if (isCausal && !bias) bias = causalBias(tq, s, scores);
        if (bias) scores = ops.add(scores, bias);
        weights = ops.softmax(scores, { axis: -1 });
        if (p > 0) weights = ops.dropout(weights, { p, training: true });
        out = ops.matmul(weights, vh);
      } else {
        out = ops.scaledDotProductAttention(qh, kh, vh, bias, { isCausal: isCausal && !bias, scale });
      }
      out = ops.reshape(ops.permute(out, { dims: [0, 2, 1, 3] }), { shape: [n, tq, this.embedDim] });
      out = this.outProj.forward(out);
      if (!batched) out = ops.squeeze(out, { axes: [0] });
      else if (!this.batchFirst) out = ops.transpose(out, { dim0: 0, dim1: 1 });
      if (!needWeights) return [out, null];
      if (opts.averageAttnWeights ?? true) weights = ops.mean(weights!, { axes: [1] });
      if (!batched) weights = ops.squeeze(weights!, { axes: [0] });
      return [out, weights];
    });
  }

  /** The three projections: one matmul with the stacked weight for self-attention, else its rows each. */
  #project(selfAttention: boolean, q: Tensor, k: Tensor, v: Tensor): [Tensor, Tensor, Tensor] {
    const e = this.embedDim;
    const w = this.param("in_proj_weight")!;
    const b = this.param("in_proj_bias");
    const part = (t: Tensor, axis: number, i: number) => ops.slice(t, { axis, start: i * e, stop: (i + 1) * e });
    if (selfAttention) {
      const both = linear(q, w, b);
      return [part(both, -1, 0), part(both, -1, 1), part(both, -1, 2)];
    }
    const proj = (x: Tensor, i: number) => linear(x, part(w, 0, i), b ? part(b, 0, i) : null);
    return [proj(q, 0), proj(k, 1), proj(v, 2)];
  }

  /** (N, T, E) -> (N, H, T, E/H). */
  #heads(x: Tensor, n: number, t: number): Tensor {
    return ops.permute(ops.reshape(x, { shape: [n, t, this.numHeads, this.headDim] }), { dims: [0, 2, 1, 3] });
  }

  /** The masks as one float bias broadcastable to (N, H, L, S), or null. */
  #bias(opts: AttentionCallOptions, isCausal: boolean, n: number, tq: number, s: number, batched: boolean, like: Tensor): Tensor | null {
    const { attnMask, keyPaddingMask } = opts;
    if (!attnMask && !keyPaddingMask) return null;
    let bias: Tensor | null = null;
    if (attnMask) {
      bias = scoreBias(attnMask, like);
      if (attnMask.ndim === 3) bias = ops.reshape(bias, { shape: [n, this.numHeads, tq, s] });
    }
    if (keyPaddingMask) {
      let kp = scoreBias(keyPaddingMask, like);
      if (!batched) kp = ops.unsqueeze(kp, { axis: 0 });
      kp = ops.reshape(kp, { shape: [n, 1, 1, s] });
      bias = bias ? ops.add(bias, kp) : kp;
    }
    if (isCausal) bias = ops.add(bias!, causalBias(tq, s, like));
    return bias;
  }
}

/** x W^T + b, as Linear computes it. */
function linear(x: Tensor, w: Tensor, b: Tensor | null): Tensor {
  const y = ops.matmul(x, ops.transpose(w));
  return b ? ops.add(y, b) : y;
}

/** A bool mask (true: masked out) as 0 / -inf in like's dtype; a float mask in like's dtype. */
function scoreBias(mask: Tensor, like: Tensor): Tensor {
  const at = { shape: [], dtype: like.dtype, device: like.device };
  if (mask.dtype === "bool") return ops.where(mask, ops.full({ ...at, value: -Infinity }), ops.full({ ...at, value: 0 }));
  return mask.dtype === like.dtype ? mask : ops.cast(mask, { dtype: like.dtype });
}

/** The (L, S) mask with -inf above the diagonal (top-left aligned, as torch's is_causal), in like's dtype. */
function causalBias(l: number, s: number, like: Tensor): Tensor {
  const vals = new Float32Array(l * s);
  for (let i = 0; i < l; i++) for (let j = i + 1; j < s; j++) vals[i * s + j] = -Infinity;
  const m = tensor(vals, [l, s], { device: like.device });
  return like.dtype === "f32" ? m : ops.cast(m, { dtype: like.dtype });
}
