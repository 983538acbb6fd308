// The package's Node entry: `import * as wt from "webtensor"` in Node.

import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { bind, setLoader } from "./binding.js";
import { loadPluginBytes } from "./core.js";
import type { Plugin } from "./core.js";
import { loadNode } from "./node.js";
import { load, save } from "./serialize.js";
import type { Module } from "./nn.js";
import type { Tensor } from "./core.js";

export * from "./api.js";
export { libraryPath } from "./node.js";

// Node can load the library synchronously, so calls before init() work too.
setLoader(loadNode);

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

/**
 * Saves a model's (or a state dict's) checkpoint to path as safetensors. The
 * file is written beside path, synced and renamed into place, so a failed
 * save never replaces a good file.
 */
export async function saveFile(state: Module | Map<string, Tensor> | Record<string, Tensor>, path: string): Promise<void> {
  const bytes = await save(state);
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}`);
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
}

/** Reads a safetensors checkpoint (from any SDK or PyTorch) into name -> Tensor on device. */
export function loadFile(path: string, device?: string): Map<string, Tensor> {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(`webtensor: cannot read checkpoint ${path}: ${(e as Error).message}`);
  }
  try {
    return load(bytes, device);
  } catch (e) {
    (e as Error).message = (e as Error).message.replace("webtensor: load:", `webtensor: load ${path}:`);
    throw e;
  }
}
