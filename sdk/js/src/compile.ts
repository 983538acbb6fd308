// Graph capture: wt.trace and wt.compile over the runtime's IR (core/ir in
// Go; the C ABI's wt_trace_begin / wt_trace_end in Node). The ops a function
// calls on its first run are recorded, the graph is simplified (constants
// folded, common subexpressions merged, dead ops dropped) and, where the
// device can, elementwise chains become single kernels; later calls with
// the same input signature replay it without running the JavaScript.

import { maybeNative, native } from "./binding.js";
import { Tensor } from "./core.js";

type Result = Tensor | Tensor[];

const graphRegistry = new FinalizationRegistry<number>((g) => {
  try {
    maybeNative()?.graphFree(g);
  } catch {
    // already freed, or the runtime is going away
  }
});

/** A captured graph. `toString()` prints it; `dispose()` frees it (the GC does too). */
export class Graph {
  #g: number;
  readonly #array: boolean;

  /** @internal */
  constructor(handle: number, array: boolean) {
    this.#g = handle;
    this.#array = array;
    graphRegistry.register(this, handle, this);
  }

  /** @internal */
  get handle(): number {
    if (!this.#g) throw new Error("webtensor: graph used after dispose()");
    return this.#g;
  }

  /** Replays the graph on inputs of the captured shapes and dtypes. */
  run(...inputs: Tensor[]): Result {
    if (!this.#g) throw new Error("webtensor: graph used after dispose()");
    const outs = native().graphRun(this.#g, inputs.map((t) => t.handle)).map((h) => new Tensor(h));
    return this.#array ? outs : outs[0]!;
  }

  toString(): string {
    return this.#g ? native().graphText(this.#g) : "Graph(<disposed>)";
  }

  dispose(): void {
    const g = this.#g;
    if (!g) return;
    this.#g = 0;
    graphRegistry.unregister(this);
    native().graphFree(g);
  }
}

function flatten(out: unknown): { tensors: Tensor[]; array: boolean } {
  if (out instanceof Tensor) return { tensors: [out], array: false };
  if (Array.isArray(out) && out.every((t) => t instanceof Tensor)) return { tensors: out, array: true };
  throw new TypeError("webtensor: compile: the function must return a Tensor or an array of Tensors");
}

/**
 * Runs fn(...examples) once, recording its ops; returns the graph and fn's
 * (eager) result. Tensors fn uses that are not arguments are captured as
 * constants: pass what changes between calls as an argument. Control flow is
 * taken as it went on this call.
 */
export function trace<R extends Result>(fn: (...inputs: Tensor[]) => R, ...examples: Tensor[]): { graph: Graph; result: R } {
  examples.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new TypeError(`webtensor: compile: argument ${i} is not a Tensor`);
  });
  const rt = native();
  rt.traceBegin(examples.map((t) => t.handle));
  let result: R;
  let flat: { tensors: Tensor[]; array: boolean };
  try {
    result = fn(...examples);
    flat = flatten(result);
  } catch (e) {
    rt.traceAbort();
    throw e;
  }
  const g = rt.traceEnd(flat.tensors.map((t) => t.handle));
  return { graph: new Graph(g, flat.array), result };
}

/** @internal The key of a compiled function's graph for inputs: their shapes, dtypes and devices. */
export function signature(inputs: readonly Tensor[]): string {
  return JSON.stringify(inputs.map((t) => (t instanceof Tensor ? [t.shape, t.dtype, t.device] : null)));
}

/** fn compiled: one graph per input signature (shapes, dtypes, devices), captured on its first call. */
export function compile<R extends Result>(fn: (...inputs: Tensor[]) => R): ((...inputs: Tensor[]) => R) & { graphs: Map<string, Graph> } {
  const graphs = new Map<string, Graph>();
  const compiled = (...inputs: Tensor[]): R => {
    const key = signature(inputs);
    const g = graphs.get(key);
    if (g) return g.run(...inputs) as R;
    const { graph, result } = trace(fn, ...inputs);
    graphs.set(key, graph);
    return result;
  };
  return Object.assign(compiled, { graphs });
}
