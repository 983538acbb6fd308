// wt.nn.init: torch.nn.init's initialisers. The formulas and the draws are
// the runtime's (Go's nn package, through wt_nn_init), so a seed gives the
// same weights here as in Go, Python and Java. Each replaces the values
// behind the tensor's handle in place (a parameter stays a leaf that
// requires its gradient, and keeps it) and returns the tensor; the trailing
// underscore says so, as in torch.

import { ATTR_KIND, native } from "./binding.js";
import type { AttrEntry } from "./binding.js";
import type { Tensor } from "./core.js";

function init(t: Tensor, method: string, settings: Record<string, number | string | undefined>): Tensor {
  const entries: AttrEntry[] = [];
  for (const [name, v] of Object.entries(settings)) {
    if (v === undefined) continue;
    entries.push([name, typeof v === "string" ? ATTR_KIND.string : ATTR_KIND.float, v]);
  }
  native().nnInit(t.handle, method, entries);
  return t;
}

/** torch's fan modes: keep the variance of activations (fan_in) or of gradients (fan_out). */
export type FanMode = "fan_in" | "fan_out";

/**
 * torch.nn.init.calculate_gain: the scale that keeps activations' variance
 * through a nonlinearity (linear, identity, sigmoid, conv names, tanh, relu,
 * leaky_relu, selu); param is leaky_relu's negative slope (default 0.01).
 */
export function calculateGain(nonlinearity: string, param?: number): number {
  return native().nnCalculateGain(nonlinearity, param ?? 0.01);
}

/** U(a, b). */
export function uniform_(t: Tensor, a = 0, b = 1): Tensor {
  return init(t, "uniform", { a, b });
}

/** N(mean, std²). */
export function normal_(t: Tensor, mean = 0, std = 1): Tensor {
  return init(t, "normal", { mean, std });
}

/** Every element val. */
export function constant_(t: Tensor, val: number): Tensor {
  return init(t, "constant", { val });
}

export function zeros_(t: Tensor): Tensor {
  return constant_(t, 0);
}

export function ones_(t: Tensor): Tensor {
  return constant_(t, 1);
}

/** U(-a, a) with a = gain·sqrt(6 / (fan_in + fan_out)); t needs at least 2 dims. */
export function xavierUniform_(t: Tensor, gain = 1): Tensor {
  return init(t, "xavier_uniform", { gain });
}

/** N(0, std²) with std = gain·sqrt(2 / (fan_in + fan_out)). */
export function xavierNormal_(t: Tensor, gain = 1): Tensor {
  return init(t, "xavier_normal", { gain });
}

export interface KaimingOptions {
  /** leaky_relu's negative slope (default 0). */
  a?: number;
  /** Default "fan_in". */
  mode?: FanMode;
  /** Default "leaky_relu". */
  nonlinearity?: string;
}

/** U(-b, b) with b = sqrt(3)·gain/sqrt(fan). */
export function kaimingUniform_(t: Tensor, options: KaimingOptions = {}): Tensor {
  return init(t, "kaiming_uniform", { a: options.a, mode: options.mode, nonlinearity: options.nonlinearity });
}

/** N(0, std²) with std = gain/sqrt(fan). */
export function kaimingNormal_(t: Tensor, options: KaimingOptions = {}): Tensor {
  return init(t, "kaiming_normal", { a: options.a, mode: options.mode, nonlinearity: options.nonlinearity });
}
