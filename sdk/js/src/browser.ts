// The package's browser entry: `import * as wt from "webtensor"` in a
// bundle or a page. The same API as Node, over the Go core compiled to
// WebAssembly; the browser's GPU through WebGPU when it has one.

import { bind } from "./binding.js";
import { loadBrowser } from "./wasm.js";
import type { BrowserInitOptions } from "./wasm.js";

export * from "./api.js";
export type { BrowserInitOptions } from "./wasm.js";

let started: Promise<void> | null = null;
let why = "";

/**
 * Fetches and starts webtensor.wasm (by default from the package's
 * dist/wasm/, next to this file) and opens the WebGPU device when the browser
 * has one; without WebGPU it warns and uses the CPU backend. `wt.device()`
 * then says which. Calling it again returns the first call's promise.
 */
export function init(options: BrowserInitOptions = {}): Promise<void> {
  started ??= loadBrowser(options).then(
    (r) => {
      bind(r.binding);
      why = r.why;
    },
    (e) => {
      started = null; // a failed start (a missing file) may be retried
      throw e;
    },
  );
  return started;
}

/** Why the runtime is not on WebGPU ("" when it is). */
export function whyNotWebGPU(): string {
  return why;
}
