// The package's Node entry: `import * as wt from "webtensor"` in Node.

import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, lstatSync, openSync, readFileSync, readdirSync, renameSync, unlinkSync, writeSync } from "node:fs";
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
 * save never replaces a good file; the temporaries of earlier saves to path
 * that were killed mid-write are removed first (removeStaleTemps).
 */
export async function saveFile(state: Module | Map<string, Tensor> | Record<string, Tensor>, path: string): Promise<void> {
  const bytes = await save(state);
  removeStaleTemps(path);
  const tmp = join(dirname(path), `${tempPrefix(path)}${process.pid}-${randomBytes(6).toString("hex")}`);
  const fd = openSync(tmp, "wx");
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
  return load(bytes, device, path);
}

// A temporary without its writer's PID in its name (an older version's) is
// stale once untouched this long (core/safetensors/save.go).
const STALE_AFTER_MS = 3600_000;

/** What every SDK names a save's temporary beside path, before the writer's PID. */
function tempPrefix(path: string): string {
  return `.${basename(path)}.tmp-`;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"; // alive, under another user
  }
}

/**
 * Removes the temporaries of earlier saves to path whose writer has exited
 * (a save killed mid-write left one, up to the checkpoint's size, forever),
 * or, for names without a PID, untouched for an hour; a save in progress in a
 * live process is left alone. Best effort, as Go's safetensors.RemoveStaleTemps.
 */
function removeStaleTemps(path: string): void {
  const dir = dirname(path);
  const prefix = tempPrefix(path);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const full = join(dir, name);
    try {
      const st = lstatSync(full);
      if (!st.isFile()) continue;
      const m = /^([0-9]+)-/.exec(name.slice(prefix.length));
      const stale = m && Number(m[1]) > 0 ? !pidAlive(Number(m[1])) : Date.now() - st.mtimeMs > STALE_AFTER_MS;
      if (stale) unlinkSync(full);
    } catch {
      // gone already, or not ours to remove
    }
  }
}
