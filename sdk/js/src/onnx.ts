// ONNX models: wt.onnx.load(bytes) imports a model with the runtime's
// importer (the Go package onnx, through the C ABI's wt_onnx_* in Node and
// the WebAssembly module in the browser), and model.run({name: tensor})
// runs it; model.runValues also carries ONNX sequences (arrays of tensors)
// and optionals (null when empty). Every check and every error is the
// runtime's; this file only turns a record of tensors into the names and
// handles (or the flat handles and JSON layout) the runtime takes.

import { maybeNative, native } from "./binding.js";
import { Tensor } from "./core.js";

type Dim = number | string | null;

/** What a declared input or output is; dtype and shape describe the tensors inside. */
export type Kind = "tensor" | "sequence" | "optional_tensor" | "optional_sequence" | "strings";

/** A value runValues takes and returns: a tensor, a sequence (an array of tensors) or null (an empty optional). */
export type Value = Tensor | readonly Tensor[] | null;

/** A declared input or output: a dim is a number, a symbolic name (ONNX's dim_param) or null (undeclared). */
export class ValueInfo {
  /** @internal Model makes them from the runtime's wt_onnx_info_json. */
  constructor(
    readonly name: string,
    /** "f32", "i64", ...; "" when the model does not declare it. */
    readonly dtype: string,
    /** null when the model does not declare the rank. */
    readonly shape: readonly Dim[] | null,
    readonly kind: Kind = "tensor",
  ) {
    Object.freeze(this.shape);
    Object.freeze(this);
  }
}

interface Declared {
  name: string;
  kind: Kind;
  dtype: string;
  shape: Dim[] | null;
}

interface Info {
  opset: number;
  device: string;
  inputs: Declared[];
  outputs: Declared[];
}

const values = (ds: Declared[]) => Object.freeze(ds.map((d) => new ValueInfo(d.name, d.dtype, d.shape, d.kind)));

const modelRegistry = new FinalizationRegistry<number>((m) => {
  try {
    maybeNative()?.onnxFree(m);
  } catch {
    // already freed, or the runtime is going away
  }
});

/** An imported ONNX model. `dispose()` frees it (the GC does too); tensors it returned stay valid. */
export class Model {
  #m: number;
  /** The inputs a caller supplies (initializers excluded), in the model's order. */
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
  /** The default domain's opset version. */
  readonly opset: number;
  /** Where the weights live and the operators run. */
  readonly device: string;

  /** @internal */
  constructor(handle: number) {
    this.#m = handle;
    const info = JSON.parse(native().onnxInfo(handle)) as Info;
    this.inputs = values(info.inputs);
    this.outputs = values(info.outputs);
    this.opset = info.opset;
    this.device = info.device;
    modelRegistry.register(this, handle, this);
  }

  get inputNames(): string[] {
    return this.inputs.map((v) => v.name);
  }

  get outputNames(): string[] {
    return this.outputs.map((v) => v.name);
  }

  /**
   * Runs the model on named inputs (an initializer the graph lists as an
   * input may be given too, to override it) and resolves to the outputs by
   * name, in the model's order. Inputs on another device are copied to the
   * model's.
   */
  async run(inputs: Readonly<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
    if (!this.#m) throw new Error("webtensor: onnx model used after dispose()");
    const names = Object.keys(inputs);
    const handles = names.map((n) => {
      const t = inputs[n];
      if (!(t instanceof Tensor)) throw new TypeError(`webtensor: onnx input ${JSON.stringify(n)} is not a Tensor`);
      return t.handle;
    });
    const outs = await native().onnxRun(this.#m, names, handles);
    const res: Record<string, Tensor> = {};
    this.outputs.forEach((o, i) => (res[o.name] = new Tensor(outs[i]!)));
    return res;
  }

  /**
   * Runs a model whose inputs or outputs may be ONNX sequences or optionals
   * (any model: run is the shorter way for tensors only, and refuses the
   * others naming them). An input is a Tensor, an array of tensors for a
   * sequence, or null for an empty optional (an optional holding a value is
   * given as that value); the outputs resolve by name, in the model's order,
   * the same way.
   */
  async runValues(inputs: Readonly<Record<string, Value>>): Promise<Record<string, Tensor | Tensor[] | null>> {
    if (!this.#m) throw new Error("webtensor: onnx model used after dispose()");
    const flat: number[] = [];
    const index = (name: string, t: unknown) => {
      if (!(t instanceof Tensor)) {
        throw new TypeError(
          `webtensor: onnx input ${JSON.stringify(name)} must be a Tensor, an array of tensors (a sequence) or null (an empty optional)`,
        );
      }
      return flat.push(t.handle) - 1;
    };
    const layout: Record<string, number | number[] | null> = {};
    for (const [name, v] of Object.entries(inputs)) {
      layout[name] = v === null ? null : Array.isArray(v) ? v.map((t) => index(name, t)) : index(name, v);
    }
    const out = await native().onnxRunValues(this.#m, flat, JSON.stringify(layout));
    const tensors = out.tensors.map((h) => new Tensor(h));
    const res: Record<string, Tensor | Tensor[] | null> = {};
    for (const [name, v] of Object.entries(JSON.parse(out.layout) as Record<string, number | number[] | null>)) {
      res[name] = v === null ? null : Array.isArray(v) ? v.map((i) => tensors[i]!) : tensors[v]!;
    }
    return res;
  }

  dispose(): void {
    const m = this.#m;
    if (!m) return;
    this.#m = 0;
    modelRegistry.unregister(this);
    native().onnxFree(m);
  }
}

/**
 * Imports an ONNX model from its bytes or, in Node, a file path (whose
 * folder external data files are read from), its weights on device (default:
 * the default device). An unsupported operator or a malformed file rejects
 * with a WebtensorError naming the node and the problem.
 */
export async function load(source: Uint8Array | string, options: { device?: string } = {}): Promise<Model> {
  const rt = native();
  const device = options.device ?? null;
  if (typeof source === "string") return new Model(rt.onnxLoad(source, device));
  if (!(source instanceof Uint8Array)) throw new TypeError("webtensor: onnx.load takes a Uint8Array of the model's bytes or a path");
  return new Model(await rt.onnxLoadBytes(source, device));
}
