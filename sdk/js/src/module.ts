// nn's Module, Parameter and ModuleList: the model tree and its state dict,
// in a file of their own so the layer files (nn.ts, layers.ts) can extend
// Module without importing each other.

import { WebtensorError, native } from "./binding.js";
import { Tensor, tensor, unscope } from "./core.js";
import type { DType } from "./dtype.js";
import { stateOf } from "./serialize.js";

export interface LayerOptions {
  dtype?: DType;
  device?: string;
}

/**
 * The base of every layer: parameters, buffers and child modules by name,
 * train/eval, state dicts. In and Out type forward's arguments and result:
 * a plain layer takes tensors and returns one; MultiheadAttention returns a
 * pair.
 */
export class Module<In extends unknown[] = Tensor[], Out = Tensor> {
  training = true;
  readonly #params = new Map<string, Tensor | null>();
  readonly #buffers = new Map<string, Tensor | null>();
  readonly #children = new Map<string, Module<any, any>>();

  /** Computes the layer; subclasses override it. */
  forward(..._inputs: In): Out {
    throw new Error(`webtensor: ${this.constructor.name} does not define forward()`);
  }

  /** Calls forward (what `model(x)` is in PyTorch). */
  call(...inputs: In): Out {
    return this.forward(...inputs);
  }

  #checkName(name: string): void {
    if (!name || name.includes(".")) throw new Error(`webtensor: invalid name ${JSON.stringify(name)} (non-empty, without '.')`);
    if (this.#params.has(name) || this.#buffers.has(name) || this.#children.has(name)) {
      throw new Error(`webtensor: ${name} is registered twice`);
    }
  }

  /** Registers a parameter (null: an absent one, such as a bias turned off); it is made to require gradients. */
  protected registerParameter(name: string, t: Tensor | null): void {
    this.#checkName(name);
    if (t) {
      t.requiresGrad = true;
      unscope(t); // the module's from now on, even when made inside a tidy() or scope()
    }
    this.#params.set(name, t);
  }

  /**
   * Registers state that is not trained (BatchNorm's running statistics):
   * in the state dict after the parameters, freed with the module, never
   * handed to an optimizer. null: an absent one.
   */
  protected registerBuffer(name: string, t: Tensor | null): void {
    this.#checkName(name);
    if (t) unscope(t);
    this.#buffers.set(name, t);
  }

  protected registerModule(name: string, m: Module<any, any>): void {
    this.#checkName(name);
    this.#children.set(name, m);
  }

  /** The parameter called name; throws when there is none. */
  param(name: string): Tensor | null {
    if (!this.#params.has(name)) throw new Error(`webtensor: ${this.constructor.name} has no parameter ${name}`);
    return this.#params.get(name)!;
  }

  /** The buffer called name; throws when there is none. */
  buffer(name: string): Tensor | null {
    if (!this.#buffers.has(name)) throw new Error(`webtensor: ${this.constructor.name} has no buffer ${name}`);
    return this.#buffers.get(name)!;
  }

  /** [name, parameter] pairs in registration order, children's as "child.name". */
  namedParameters(prefix = ""): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    for (const [n, t] of this.#params) if (t) out.push([prefix + n, t]);
    for (const [n, m] of this.#children) out.push(...m.namedParameters(`${prefix}${n}.`));
    return out;
  }

  parameters(): Tensor[] {
    return this.namedParameters().map(([, t]) => t);
  }

  /** [name, buffer] pairs, as namedParameters. */
  namedBuffers(prefix = ""): [string, Tensor][] {
    const out: [string, Tensor][] = [];
    for (const [n, t] of this.#buffers) if (t) out.push([prefix + n, t]);
    for (const [n, m] of this.#children) out.push(...m.namedBuffers(`${prefix}${n}.`));
    return out;
  }

  buffers(): Tensor[] {
    return this.namedBuffers().map(([, t]) => t);
  }

  children(): Module<any, any>[] {
    return [...this.#children.values()];
  }

  /**
   * The state by PyTorch-style name: each module's parameters, then its
   * buffers, then its children's, as torch orders them. The tensors
   * themselves, not copies.
   */
  stateDict(prefix = ""): Map<string, Tensor> {
    const out = new Map<string, Tensor>();
    for (const [n, t] of this.#params) if (t) out.set(prefix + n, t);
    for (const [n, t] of this.#buffers) if (t) out.set(prefix + n, t);
    for (const [n, m] of this.#children) for (const [k, t] of m.stateDict(`${prefix}${n}.`)) out.set(k, t);
    return out;
  }

  /**
   * Copies a state dict (from wt.load or another model) into this model's
   * parameters and buffers, on their devices; the tensor objects (and their
   * handles) stay. Strict: every name must match and every shape and dtype
   * agree, else nothing is changed and one error lists every problem.
   */
  loadStateDict(state: Map<string, Tensor> | Record<string, Tensor>): void {
    const rt = native();
    const mine = stateOf(this.stateDict());
    try {
      const given = stateOf(state instanceof Map ? state : Object.entries(state));
      try {
        rt.stateAssign(mine, given, true, this.constructor.name);
      } catch (e) {
        if (e instanceof WebtensorError) throw new WebtensorError(e.status, `loadStateDict: ${e.message}`);
        throw e;
      } finally {
        rt.stateFree(given);
      }
    } finally {
      rt.stateFree(mine);
    }
  }

  /** Training mode (dropout active, batch statistics) on this module and its children. */
  train(on = true): this {
    this.training = on;
    for (const m of this.#children.values()) m.train(on);
    return this;
  }

  eval(): this {
    return this.train(false);
  }

  zeroGrad(): void {
    for (const p of this.parameters()) p.zeroGrad();
  }

  /** Frees every parameter and buffer. */
  dispose(): void {
    for (const p of this.parameters()) p.dispose();
    for (const b of this.buffers()) b.dispose();
  }
}

/**
 * @internal Moves each value into the tensor behind its target's handle
 * (the runtime's wt_state_assign), all or none: the targets keep their
 * handles, so every holder of one (a state dict, an optimizer) sees the new
 * value, as a torch buffer updated in place. Values stay the caller's.
 */
export function assignInPlace(pairs: readonly (readonly [target: Tensor, value: Tensor])[], module: string): void {
  const rt = native();
  const targets = stateOf(pairs.map(([t], i): [string, Tensor] => [String(i), t]));
  try {
    const values = stateOf(pairs.map(([, v], i): [string, Tensor] => [String(i), v]));
    try {
      rt.stateAssign(targets, values, true, module);
    } finally {
      rt.stateFree(values);
    }
  } finally {
    rt.stateFree(targets);
  }
}

/**
 * A trainable tensor: a leaf that requires a gradient (torch.nn.Parameter).
 * `new Parameter(t)` shares t's values cut from its graph; nested arrays or
 * a typed array (with tensor()'s shape and options) are copied in first.
 */
export class Parameter extends Tensor {
  constructor(data: Tensor | Parameters<typeof tensor>[0], requiresGrad = true) {
    super(Parameter.#leaf(data));
    if (requiresGrad) this.requiresGrad = true;
  }

  static #leaf(data: Tensor | Parameters<typeof tensor>[0]): number {
    if (data instanceof Tensor) return native().detach(data.handle);
    const t = tensor(data);
    try {
      return native().detach(t.handle);
    } finally {
      t.dispose();
    }
  }
}

/** A list of sub-modules registered as "0", "1", ...; like torch's, it has no forward of its own. */
export class ModuleList extends Module<any[], any> {
  #n = 0;

  constructor(modules: Iterable<Module<any, any>> = []) {
    super();
    this.extend(modules);
  }

  append(m: Module<any, any>): this {
    if (!(m instanceof Module)) throw new TypeError(`webtensor: ModuleList: ${String(m)} is not a Module`);
    this.registerModule(String(this.#n++), m);
    return this;
  }

  extend(modules: Iterable<Module<any, any>>): this {
    for (const m of modules) this.append(m);
    return this;
  }

  get length(): number {
    return this.#n;
  }

  /** Module i (negative counts from the end), undefined out of range. */
  at(i: number): Module<any, any> | undefined {
    return this.children().at(i);
  }

  [Symbol.iterator](): Iterator<Module<any, any>> {
    return this.children()[Symbol.iterator]();
  }
}
