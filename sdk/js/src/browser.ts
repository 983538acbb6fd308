// The package's browser entry: `import * as wt from "webtensor"` in a
// bundle or a page. The same API as Node, over the Go core compiled to
// WebAssembly; the browser's GPU through WebGPU when it has one.

import { bind } from "./binding.js";
import { device } from "./core.js";
import { loadBrowser } from "./wasm.js";
import type { BrowserInitOptions } from "./wasm.js";
import type { DeviceChoice } from "./choice.js";

export * from "./api.js";
export type { BrowserInitOptions } from "./wasm.js";
export type { DeviceChoice, Calibration } from "./choice.js";

let started: Promise<void> | null = null;
let why = "";
let choice: DeviceChoice | null = null;

/**
 * Fetches and starts webtensor.wasm (by default from the package's
 * dist/wasm/, next to this file) and opens the WebGPU device when the browser
 * has one; without WebGPU it warns and uses the CPU backend. On a software
 * adapter (SwiftShader) it times both on a short workload and keeps the
 * faster (`wt.deviceChoice()` says which and why). `wt.device()` then says
 * which. Calling it again returns the first call's promise.
 */
export function init(options: BrowserInitOptions = {}): Promise<void> {
  started ??= loadBrowser(options).then(
    (r) => {
      bind(r.binding);
      why = r.why;
      choice = r.choice;
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

/**
 * What a page should tell its reader about where its work runs, for the
 * device it asked init() for: why it is not on WebGPU when it asked for
 * WebGPU and did not get it; that the adapter is a software one (the CPU
 * emulating a GPU, SwiftShader in a browser without a GPU) when it runs on
 * one; "" on a hardware GPU, or on the CPU when that is what it asked for.
 */
export function deviceNote(asked: "auto" | "webgpu" | "cpu" = "auto"): string {
  const on = device();
  if (asked === "webgpu" && !on.startsWith("webgpu")) {
    return `No WebGPU here (${why}): the work runs on the CPU backend (WebAssembly).`;
  }
  if (on.startsWith("webgpu") && choice?.software) {
    return `The WebGPU adapter (${choice.adapter}) is a software one: the "GPU" is the CPU emulating it.`;
  }
  return "";
}

/**
 * The default device init() chose and why: a hardware adapter taken as it
 * is, the page's `device` option, no WebGPU, or a software adapter's
 * calibration (its timings, and whether they came from an earlier page's
 * cache). Null before init() has resolved.
 */
export function deviceChoice(): DeviceChoice | null {
  return choice === null ? null : { ...choice, timings: choice.timings && { ...choice.timings } };
}
