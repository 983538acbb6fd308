// ONNX models: wt.onnx.load(bytes) imports a model with the runtime's
// importer (the Go package onnx, through wt_call's onnx.* in Node and the
// browser, docs/calls.md), and model.run({name: tensor}) runs it;
// model.runValues also carries ONNX sequences (arrays of tensors) and
// optionals (null when empty). Every check and every error is the
// runtime's; this file only turns a record of tensors into the handles (or
// the flat handles and layout) the runtime takes.

import { native } from "./binding.js";
import { Tensor } from "./core.js";
import { RuntimeObject } from "./objects.js";

type Dim = number | string | null;

/** What a declared input or output is; dtype and shape describe the tensors inside. */
export type Kind = "tensor" | "sequence" | "optional_tensor" | "optional_sequence" | "strings";

/** A value runValues takes and returns: a tensor, a sequence (an array of tensors) or null (an empty optional). */
export type Value = Tensor | readonly Tensor[] | null;

/** A declared input or output: a dim is a number, a symbolic name (ONNX's dim_param) or null (undeclared). */
export class ValueInfo {
  /** @internal Model makes them from the runtime's onnx.info. */
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

/** Where each input's or output's tensors are in a flat list: an index, a list of them (a sequence), or null. */
type Layout = Record<string, number | number[] | null>;

interface Info {
  opset: number;
  device: string;
  inputs: Declared[];
  outputs: Declared[];
}

const values = (ds: Declared[]) => Object.freeze(ds.map((d) => new ValueInfo(d.name, d.dtype, d.shape, d.kind)));

/** An imported ONNX model. `dispose()` frees it (the GC does too); tensors it returned stay valid. */
export class Model extends RuntimeObject {
  /** The inputs a caller supplies (initializers excluded), in the model's order. */
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
  /** The default domain's opset version. */
  readonly opset: number;
  /** Where the weights live and the operators run. */
  readonly device: string;

  /** @internal */
  constructor(handle: number) {
    super("onnx", handle);
    const info = this.call<Info>("info");
    this.inputs = values(info.inputs);
    this.outputs = values(info.outputs);
    this.opset = info.opset;
    this.device = info.device;
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
    const handles: Record<string, number> = {};
    for (const [n, t] of Object.entries(inputs)) {
      if (!(t instanceof Tensor)) throw new TypeError(`webtensor: onnx input ${JSON.stringify(n)} is not a Tensor`);
      handles[n] = t.handle;
    }
    const outs = await this.callAsync<number[]>("run", { inputs: handles });
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
    const flat: number[] = [];
    const index = (name: string, t: unknown) => {
      if (!(t instanceof Tensor)) {
        throw new TypeError(
          `webtensor: onnx input ${JSON.stringify(name)} must be a Tensor, an array of tensors (a sequence) or null (an empty optional)`,
        );
      }
      return flat.push(t.handle) - 1;
    };
    const layout: Layout = {};
    for (const [name, v] of Object.entries(inputs)) {
      layout[name] = v === null ? null : Array.isArray(v) ? v.map((t) => index(name, t)) : index(name, v);
    }
    const out = await this.callAsync<{ layout: Layout; tensors: number[] }>("run_values", { tensors: flat, layout });
    const tensors = out.tensors.map((h) => new Tensor(h));
    const res: Record<string, Tensor | Tensor[] | null> = {};
    for (const [name, v] of Object.entries(out.layout)) {
      res[name] = v === null ? null : Array.isArray(v) ? v.map((i) => tensors[i]!) : tensors[v]!;
    }
    return res;
  }
}

/**
 * Imports an ONNX model from its bytes or, in Node, a file path (whose
 * folder external data files are read from), its weights on device (default:
 * the default device). An unsupported operator or a malformed file rejects
 * with a WebtensorError naming the node and the problem.
 */
export async function load(source: Uint8Array | string, options: { device?: string } = {}): Promise<Model> {
  const { device } = options;
  if (typeof source === "string") return new Model(await native().callAsync<number>("onnx.load", 0, { path: source, device }));
  if (!(source instanceof Uint8Array)) throw new TypeError("webtensor: onnx.load takes a Uint8Array of the model's bytes or a path");
  return new Model(await native().callAsync<number>("onnx.load", 0, { device }, source));
}
