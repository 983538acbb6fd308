// The package's Node entry: `import * as wt from "webtensor"` in Node.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { bind, native, setLoader } from "./binding.js";
import { loadPluginBytes, setTuningPolicy as setTuningPolicyOf } from "./core.js";
import type { Plugin } from "./core.js";
import { libraryPath, loadNode } from "./node.js";
import { setDefaultPolicyModule } from "./auto.js";
import { entriesOf, readState, stateOf } from "./serialize.js";
import type { Module } from "./nn.js";
import type { Tensor } from "./core.js";

export * from "./api.js";
export { libraryPath } from "./node.js";

// Node can load the library synchronously, so calls before init() work too.
setLoader(loadNode);

// wt.auto's default policy: the one the package ships in prebuilds/, else
// the library finds build/plugins/policy-auto.wasm from the working folder
// (a source checkout after `make plugins`).
const shippedAutoPolicy = join(dirname(libraryPath()), "..", "policy-auto.wasm");
if (existsSync(shippedAutoPolicy)) setDefaultPolicyModule(shippedAutoPolicy);

/**
 * Loads the native library (prebuilds/<platform>-<arch>/libwebtensor.so, or
 * $WEBTENSOR_LIBRARY). Async so that the browser build, which must fetch and
 * compile its WebAssembly, shares this API; in Node the load itself is
 * synchronous. Rejects with an Error naming the path when the library is
 * missing or has another ABI version.
 */
export async function init(): Promise<void> {
  bind(loadNode());
}

/** Loads a WebAssembly plugin from a .wasm file path or its bytes; its ops then run like built-in ones. */
export function loadPlugin(wasm: string | Uint8Array): Plugin {
  if (typeof wasm === "string") {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(wasm);
    } catch (e) {
      throw new Error(`webtensor: cannot read plugin ${wasm}: ${(e as Error).message}`);
    }
    return loadPluginBytes(bytes, wasm);
  }
  return loadPluginBytes(wasm);
}

const policyPlugins = new Map<string, Plugin>();

/**
 * The kernel-variant tuning policy the package ships
 * (plugins-wasm/policies/kernel-variant, in prebuilds/).
 */
export function defaultPolicyPath(): string {
  return join(dirname(libraryPath()), "..", "policy-kernel-variant.wasm");
}

/**
 * Makes the WebGPU tuner ask a tuning policy which kernel variant to try:
 * a loaded Plugin, the path of a policy module, "default" (the one the
 * package ships) or null (time every variant, the default).
 */
export function setTuningPolicy(plugin: Plugin | string | null = "default", policy = ""): void {
  if (typeof plugin === "string") {
    const path = resolve(plugin === "default" ? defaultPolicyPath() : plugin);
    if (!policyPlugins.has(path)) policyPlugins.set(path, loadPlugin(path));
    plugin = policyPlugins.get(path)!;
  }
  setTuningPolicyOf(plugin, policy);
}

/**
 * Saves a model's (or a state dict's) checkpoint to path as safetensors. The
 * runtime writes the file beside path, syncs and renames it into place, so a
 * failed save never replaces a good file, and first removes the temporaries
 * of earlier saves to path that were killed mid-write.
 */
export async function saveFile(state: Module | Map<string, Tensor> | Record<string, Tensor>, path: string): Promise<void> {
  const s = stateOf(entriesOf(state), { format: "pt" });
  try {
    native().stateSave(s, path);
  } finally {
    native().stateFree(s);
  }
}

/** Reads a safetensors checkpoint (from any SDK or PyTorch) into name -> Tensor on device. */
export function loadFile(path: string, device?: string): Map<string, Tensor> {
  return readState(native().stateLoad(path, device ?? null, false));
}
