// The seam between the API (core.ts) and the runtime under it: the Node
// entry binds the C ABI through koffi (node.ts), the browser entry binds the
// Go core compiled to WebAssembly (wasm.ts). Both speak in tensor handles
// (integers into the runtime's table) and report failures as
// WebtensorError with the runtime's own message, so core.ts and the
// generated ops are the same code on both.

import type { TypedArray } from "./dtype.js";

// The statuses and the ABI version, generated from the header.
import { ERR_INTERNAL, ERR_UNSUPPORTED } from "./abi.gen.js";
export {
  ABI_VERSION,
  ERR_BUFFER_TOO_SMALL,
  ERR_HANDLE,
  ERR_INTERNAL,
  ERR_INVALID,
  ERR_IO,
  ERR_OUT_OF_MEMORY,
  ERR_UNSUPPORTED,
  OK,
} from "./abi.gen.js";

/** wt_attr_kind codes (capi/include/webtensor.h). */
export const ATTR_KIND = { int: 1, float: 2, bool: 3, string: 4, ints: 5, floats: 6, dtype: 7 } as const;
export type AttrKind = keyof typeof ATTR_KIND;

/** One op attribute as it crosses: name, wt_attr_kind code, and a value already checked against the kind. */
export type AttrEntry = readonly [name: string, kind: number, value: number | bigint | boolean | string | readonly number[]];

const STATUS_NAMES = ["ok", "invalid", "handle", "unsupported", "out_of_memory", "buffer_too_small", "internal", "io"];

/** An error reported by the runtime: `status` is the WT_ERR_* code, the message is the runtime's. */
export class WebtensorError extends Error {
  readonly status: number;
  readonly code: string;
  /** True when the call must wait for the GPU and so needs its async form (browser only: opAsync, backwardAsync, data). */
  readonly needsAsync: boolean;
  constructor(status: number, message: string, needsAsync = false) {
    super(status === ERR_INTERNAL ? `${message} (internal error)` : message);
    this.name = "WebtensorError";
    this.status = status;
    this.code = `WT_ERR_${(STATUS_NAMES[status] ?? "unknown").toUpperCase()}`;
    this.needsAsync = needsAsync;
  }
}

/**
 * A valid request the runtime cannot serve here (WT_ERR_UNSUPPORTED): a
 * device that does not open, a dtype or layout it lacks. Python's
 * wt.UnsupportedError; a WebtensorError too.
 */
export class UnsupportedError extends WebtensorError {
  constructor(message: string, needsAsync = false) {
    super(ERR_UNSUPPORTED, message, needsAsync);
    this.name = "UnsupportedError";
  }
}

/** The error for a failed status: UnsupportedError for WT_ERR_UNSUPPORTED, else a WebtensorError. */
export function runtimeError(status: number, message: string, needsAsync = false): WebtensorError {
  return status === ERR_UNSUPPORTED ? new UnsupportedError(message, needsAsync) : new WebtensorError(status, message, needsAsync);
}

/** What the API needs from a runtime. Every call throws WebtensorError on failure. */
export interface Binding {
  /** "node" (libwebtensor.so) or "browser" (webtensor.wasm). */
  readonly platform: "node" | "browser";
  version(): string;
  devices(): string[];
  defaultDevice(): string;
  setDefaultDevice(device: string): void;
  /** A new tensor holding a copy of data (dtype code, shape, device or null for the default). */
  fromData(data: TypedArray, dtype: number, shape: readonly number[], device: string | null): number;
  /**
   * A CPU tensor sharing data's memory (no copy), or null where the runtime
   * cannot share JavaScript memory (the browser's module has its own) or
   * cannot keep it in place (a resizable ArrayBuffer, which could shrink).
   */
  fromHostBorrowed(data: TypedArray, dtype: number, shape: readonly number[]): number | null;
  /** Collects, then returns how many lent arrays the runtime still uses. */
  lentArrays(): number;
  free(h: number): void;
  liveTensors(): number;
  dtype(h: number): number;
  shape(h: number): number[];
  strides(h: number): number[];
  device(h: number): string;
  isContiguous(h: number): boolean;
  /** Copies the elements (row-major) into dst; in the browser only for tensors that need no GPU wait. */
  readSync(h: number, dst: TypedArray): void;
  /** Copies the elements into dst, waiting for the device. */
  read(h: number, dst: TypedArray): Promise<void>;
  /** A typed array viewing a dense CPU tensor's memory without a copy, or null where that is not possible. */
  view(h: number, dtype: number, size: number): TypedArray | null;
  toDevice(h: number, device: string): number;
  toDeviceAsync(h: number, device: string): Promise<number>;
  contiguous(h: number): number;
  detach(h: number): number;
  op(name: string, inputs: readonly number[], attrs: readonly AttrEntry[]): number[];
  /** op() where it may wait for the device (in the browser: on its own goroutine). */
  opAsync(name: string, inputs: readonly number[], attrs: readonly AttrEntry[]): Promise<number[]>;
  manifest(): string;
  requiresGrad(h: number): boolean;
  setRequiresGrad(h: number, on: boolean): void;
  backward(h: number, grad: number): void;
  backwardAsync(h: number, grad: number): Promise<void>;
  /** The gradient's new handle, or 0 when there is none. */
  grad(h: number): number;
  zeroGrad(h: number): void;
  noGradEnter(): void;
  noGradExit(): void;
  manualSeed(seed: bigint): void;
  liveDLPackExports(): number;
  /** wt_fallbacks_json: op calls that ran off their device, as JSON; reset clears the counts after reading. */
  fallbacks(reset: boolean): string;
  /** wt_profile_start / wt_profile_stop / wt_profile_json: an op-call trace (flags 1: sync after each op). */
  profileStart(flags: number): void;
  profileStop(): void;
  profileJSON(): string;
  /** wt_set_num_threads / wt_get_num_threads: the CPU backend's thread count (n <= 0: the default). */
  setNumThreads(n: number): void;
  getNumThreads(): number;
  /** Graph capture (the C ABI's wt_trace_begin / wt_trace_end): records the ops called in between. */
  traceBegin(inputs: readonly number[]): void;
  /** Ends the capture: a graph handle from the inputs to these outputs. */
  traceEnd(outputs: readonly number[]): number;
  traceAbort(): void;
  graphRun(graph: number, inputs: readonly number[]): number[];
  graphText(graph: number): string;
  graphFree(graph: number): void;
  /** Loads a WebAssembly plugin (label names it in errors); returns its name and op names. Node only. */
  loadPlugin(wasm: Uint8Array, label: string): { name: string; ops: string[] };
  /** wt_tuning_policy_set: the WebGPU tuner asks a loaded plugin's policy ("" plugin: none). Node only. */
  setTuningPolicy(plugin: string, policy: string): void;
  /** wt_device_tuning_json: a device's kernel-variant decisions as JSON. */
  deviceTuning(device: string): string;
  /** wt_device_sync: waits for the device's queued work (async: the browser must yield to the GPU). */
  deviceSync(device: string): Promise<void>;
  /** wt_device_info_json: what the device is and, for CUDA, its memory and libraries. */
  deviceInfo(device: string): string;
  /** wt_device_empty_cache: cached, unused device memory back to the driver. */
  deviceEmptyCache(device: string): void;
  /** wt_device_set_option: a device's switch ("allow_tf32" on CUDA). */
  deviceSetOption(device: string, name: string, value: number): void;
  /** wt_device_stream: the CUstream the device queues work on, as an integer. */
  deviceStream(device: string): bigint;
  /**
   * wt_call: the domain library method target ("kind.method",
   * docs/calls.md) on the object self (0 for a load or a plain function),
   * with args by name (callArgsJSON) and data, the bytes a loader reads.
   * Returns the result's JSON decoded; the tensors in it are new handles the
   * caller owns. The result is freed before this returns.
   */
  call<T = unknown>(target: string, self: number, args?: CallArgs | null, data?: Uint8Array | null): T;
  /**
   * call for what may wait for the device (in the browser: on its own
   * goroutine). onStep (browser only: the C ABI takes no callback; Node
   * rejects it) is a diffusion sampling call's progress, told after each
   * denoising step once its work is done on the device.
   */
  callAsync<T = unknown>(
    target: string,
    self: number,
    args?: CallArgs | null,
    data?: Uint8Array | null,
    onStep?: StepCallback | null,
  ): Promise<T>;
  /** wt_nn_init: the tensor behind h gets the initialiser's values (Go's nn draws them), in place. */
  nnInit(h: number, method: string, settings: readonly AttrEntry[]): void;
  /** wt_nn_calculate_gain: torch.nn.init.calculate_gain (param: leaky_relu's slope). */
  nnCalculateGain(nonlinearity: string, param: number): number;
  /**
   * Checks a safetensors file with the runtime's validator (the C ABI's
   * wt_safetensors_header): prefix is its first bytes (at least the 8-byte
   * length and the header), fileSize its length, name what errors call it.
   * Returns the layout as JSON; a malformed file throws WebtensorError
   * (WT_ERR_INVALID) naming the file and the problem.
   */
  safetensorsHeader(prefix: Uint8Array, fileSize: number, name: string): string;

  // Training (webtensor.h's wt_optimizer_*, wt_lr_schedule, wt_clip_grad_*):
  // settings are attributes as an op's; an optimiser updates the tensors
  // behind its parameter handles in place (the handles stay the same).
  optimizerNew(kind: string, params: readonly number[], settings: readonly AttrEntry[]): number;
  optimizerSet(opt: number, settings: readonly AttrEntry[]): void;
  optimizerStep(opt: number): void;
  optimizerZeroGrad(opt: number): void;
  /** The optimiser's state as a new state dict ("<index>.<name>" entries). */
  optimizerState(opt: number): number;
  optimizerLoadState(opt: number, state: number): void;
  optimizerFree(opt: number): void;
  lrSchedule(kind: string, settings: readonly AttrEntry[], base: number, step: number): number;
  /** Clips in place on the device; returns the total norm's handle (a 0-d tensor). */
  clipGradNorm(params: readonly number[], maxNorm: number, normType: number): number;
  clipGradValue(params: readonly number[], clip: number): void;

  // State dicts and checkpoints (wt_state_*): named tensors with metadata.
  stateNew(): number;
  stateFree(s: number): void;
  statePut(s: number, name: string, t: number): void;
  stateCount(s: number): number;
  stateName(s: number, i: number): string;
  /** Entry i's tensor under a new handle. */
  stateGet(s: number, i: number): number;
  stateSetMetadata(s: number, key: string, value: string): void;
  stateMetadataCount(s: number): number;
  stateMetadataKey(s: number, i: number): string;
  stateMetadataValue(s: number, i: number): string;
  /** Writes the safetensors file atomically (Node only: the browser has no file system). */
  stateSave(s: number, path: string): void;
  /** The safetensors file's bytes, waiting for the device. */
  stateToBytes(s: number): Promise<Uint8Array>;
  /** Reads a safetensors file (Node only); metadataOnly reads just its header. */
  stateLoad(path: string, device: string | null, metadataOnly: boolean): number;
  stateFromBytes(bytes: Uint8Array, device: string | null, name: string): number;
  /** Points the handles put into module at the values of the same names, all or none. */
  stateAssign(module: number, values: number, strict: boolean, moduleName: string): void;
}

/** Told after each denoising step of a sampling call: step counts from 1 to steps. */
export type StepCallback = (step: number, steps: number) => void;

/**
 * A wt_call's arguments by name (docs/calls.md): tensors and objects as
 * their handles; an undefined entry is left out, which takes the default.
 */
export type CallArgs = Readonly<Record<string, unknown>>;

/**
 * args as the JSON object wt_call reads, null for none: undefined entries
 * are dropped, NaN and the infinities (which JSON has not) go as "nan",
 * "inf" and "-inf", and a bigint as its exact integer.
 */
export function callArgsJSON(args: CallArgs | null | undefined): string | null {
  return args == null ? null : (toJSON(args) ?? null);
}

function toJSON(v: unknown): string | undefined {
  switch (typeof v) {
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
    case "bigint":
      return v.toString();
    case "number":
      return Number.isFinite(v) ? JSON.stringify(v) : Number.isNaN(v) ? '"nan"' : v > 0 ? '"inf"' : '"-inf"';
    case "string":
    case "boolean":
      return JSON.stringify(v);
  }
  if (v === null) return "null";
  if (Array.isArray(v) || ArrayBuffer.isView(v)) {
    return `[${Array.from(v as ArrayLike<unknown>, (x) => toJSON(x) ?? "null").join(",")}]`;
  }
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v as object)) {
    const j = toJSON(x);
    if (j !== undefined) parts.push(`${JSON.stringify(k)}:${j}`);
  }
  return `{${parts.join(",")}}`;
}

let bound: Binding | null = null;
let loader: (() => Binding) | null = null;

/** Installs the runtime (the entries' init() does this). */
export function bind(b: Binding): void {
  bound = b;
}

/** Sets how to load the runtime on first use without init(): Node can load synchronously, the browser cannot. */
export function setLoader(f: () => Binding): void {
  loader = f;
}

/** The runtime; throws when it is not loaded and cannot be loaded synchronously. */
export function native(): Binding {
  if (!bound && loader) bound = loader();
  if (!bound) throw new Error("webtensor: call `await wt.init()` first (the runtime is not loaded)");
  return bound;
}

/** The runtime if one is bound, for the finalizers (which must not throw). */
export function maybeNative(): Binding | null {
  return bound;
}
