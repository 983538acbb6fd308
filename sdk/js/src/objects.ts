// The lifetime of a runtime object behind a handle (a tokenizer, a model, a
// pipeline, a dataset), shared by multimodal.ts, diffuse.ts, onnx.ts and
// data.ts: dispose() frees it, a FinalizationRegistry frees dropped ones.
// The objects are freed, and their methods run, through wt_call's
// `${kind}.${method}` (docs/calls.md).

import { maybeNative, native } from "./binding.js";
import type { CallArgs, StepCallback } from "./binding.js";
import { Tensor } from "./core.js";

/** The objects whose methods are wt_call targets, by their kind (the target's prefix). */
export type CallKind =
  | "tokenizer"
  | "image_processor"
  | "sentence_encoder"
  | "clip"
  | "whisper"
  | "whisper_stream"
  | "timesformer"
  | "conformer"
  | "speecht5"
  | "diffusion"
  | "onnx"
  | "dataset"
  | "loader";

/** Frees a dropped object's handle through `${kind}.free` (data.ts's classes register too). */
export const registry = new FinalizationRegistry<[CallKind, number]>(([kind, h]) => {
  try {
    maybeNative()?.call(`${kind}.free`, h);
  } catch {
    // already freed, or the runtime is going away
  }
});

/** A runtime object; tensors it returned stay valid after dispose(). */
export class RuntimeObject {
  #h: number;
  readonly #kind: CallKind;

  /** @internal */
  constructor(kind: CallKind, handle: number) {
    this.#kind = kind;
    this.#h = handle;
    registry.register(this, [kind, handle], this);
  }

  /** @internal The handle; throws once disposed. */
  get handle(): number {
    if (!this.#h) {
      const what = this.#kind === "onnx" ? "onnx model" : this.#kind.replace("_", " ");
      throw new Error(`webtensor: ${what} used after dispose()`);
    }
    return this.#h;
  }

  /** @internal wt_call's `${kind}.${method}` on this object: the result's JSON, decoded. */
  protected call<T>(method: string, args?: CallArgs): T {
    return native().call<T>(`${this.#kind}.${method}`, this.handle, args);
  }

  /** @internal call for a method that may wait for the device; onStep: a sampling call's progress (browser only). */
  protected callAsync<T>(method: string, args?: CallArgs, onStep?: StepCallback): Promise<T> {
    return native().callAsync<T>(`${this.#kind}.${method}`, this.handle, args, null, onStep);
  }

  /** Frees the object now; disposing twice is harmless. */
  dispose(): void {
    const h = this.#h;
    if (!h) return;
    this.#h = 0;
    registry.unregister(this);
    native().call(`${this.#kind}.free`, h);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/** The handle of a Tensor argument, named in the TypeError when it is not one. */
export function tensorHandle(t: unknown, what: string): number {
  if (!(t instanceof Tensor)) throw new TypeError(`webtensor: ${what} must be a Tensor`);
  return t.handle;
}
