// The package's Node entry: `import * as wt from "webtensor"` in Node.

import { readFileSync } from "node:fs";
import { bind, setLoader } from "./binding.js";
import { loadPluginBytes } from "./core.js";
import type { Plugin } from "./core.js";
import { loadNode } from "./node.js";

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
