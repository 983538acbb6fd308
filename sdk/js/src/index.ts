// The package's entry: `import * as wt from "webtensor"`.

import { load } from "./lib.js";

export {
  Tensor, tensor, op, op1, tidy, dispose, noGrad, manualSeed, liveTensors, liveDLPackExports,
  version, devices, defaultDevice, setDefaultDevice, manifest,
} from "./core.js";
export type { TensorLike, TensorOptions, Attrs, AttrValue } from "./core.js";
export type { DType, TypedArray, DataTypeMap } from "./dtype.js";
export { WebtensorError, libraryPath } from "./lib.js";
export * from "./ops.gen.js";

/**
 * Loads the native library (prebuilds/<platform>-<arch>/libwebtensor.so, or
 * $WEBTENSOR_LIBRARY). Async so that a WebAssembly backend can share this
 * API; on Node the load itself is synchronous. Rejects with an Error naming
 * the path when the library is missing or has another ABI version.
 */
export async function init(): Promise<void> {
  load();
}
