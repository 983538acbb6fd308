// What both entries (index.ts for Node, browser.ts) export besides init().

export {
  Tensor, tensor, fromArray, lentArrays, op, op1, opAsync, tidy, dispose, noGrad, manualSeed, liveTensors, liveDLPackExports,
  version, devices, device, defaultDevice, setDefaultDevice, fallbacks, profile, setNumThreads, getNumThreads, manifest, loadPluginBytes, setTuningPolicy,
  deviceTuning, Plugin, Scope, scope, isTensor, call, synchronize,
} from "./core.js";
export type { TensorLike, TensorOptions, Attrs, AttrValue, Fallback, TuningDecision, Complex } from "./core.js";
export { DType } from "./dtype.js";
export type { DTypeInfo, TypedArray, DataTypeMap } from "./dtype.js";
export { WebtensorError, UnsupportedError } from "./binding.js";
export * from "./ops.gen.js";
export * as nn from "./nn.js";
export * as optim from "./optim.js";
export { save, load } from "./serialize.js";
export { Graph, compile, trace } from "./compile.js";
export * as onnx from "./onnx.js";
export * as multimodal from "./multimodal.js";
export * as diffuse from "./diffuse.js";
export * as data from "./data.js";
export * as cuda from "./cuda.js";
export * as auto from "./auto.js";
