// The lifetime of a runtime object behind a handle (a tokenizer, a model, a
// pipeline), shared by multimodal.ts and diffuse.ts: dispose() frees it, a
// FinalizationRegistry frees dropped ones.

import { maybeNative, native } from "./binding.js";
import type { DomainKind } from "./binding.js";
import { Tensor } from "./core.js";

const registry = new FinalizationRegistry<[DomainKind, number]>(([kind, h]) => {
  try {
    maybeNative()?.domainFree(kind, h);
  } catch {
    // already freed, or the runtime is going away
  }
});

/** A runtime object; tensors it returned stay valid after dispose(). */
export class RuntimeObject {
  #h: number;
  readonly #kind: DomainKind;

  /** @internal */
  constructor(kind: DomainKind, handle: number) {
    this.#kind = kind;
    this.#h = handle;
    registry.register(this, [kind, handle], this);
  }

  /** @internal The handle; throws once disposed. */
  get handle(): number {
    if (!this.#h) throw new Error(`webtensor: ${this.#kind.replace("_", " ")} used after dispose()`);
    return this.#h;
  }

  /** Frees the object now; disposing twice is harmless. */
  dispose(): void {
    const h = this.#h;
    if (!h) return;
    this.#h = 0;
    registry.unregister(this);
    native().domainFree(this.#kind, h);
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
