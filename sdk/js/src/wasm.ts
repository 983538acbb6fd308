// The browser runtime: the Go core compiled to WebAssembly (sdk/js/wasm),
// started with Go's wasm_exec.js, as a Binding. The module exports the C
// ABI's functions (capi/include/webtensor.h) under their header names on
// globalThis.__webtensor (sdk/js/wasm/doc.go says how each reads in
// JavaScript), so this file maps Binding onto them as node.ts maps it onto
// the native library. Each returns its value or an Error with a `status`,
// which becomes a WebtensorError here.

import { ABI_VERSION, ERR_INVALID, callArgsJSON, runtimeError } from "./binding.js";
import type { AttrEntry, Binding, CallArgs, StepCallback } from "./binding.js";
import type { TypedArray } from "./dtype.js";
import { chooseDevice } from "./choice.js";
import type { Calibration, DeviceChoice } from "./choice.js";

/** The module's functions: webtensor.h's (sdk/js/wasm/table.go), their async twins and wt_browser_init. */
interface GoCalls {
  wt_browser_init(preferGPU: boolean): Promise<[string, string, string, boolean]>;
  wt_browser_calibrate(): Promise<Calibration>;
  wt_tensor_to_host_async(h: number, dst: Uint8Array): Promise<void>;
  wt_tensor_to_device_async(h: number, device: string): Promise<number>;
  wt_op_async(name: string, inputs: number[], attrs: unknown[]): Promise<number[]>;
  wt_backward_async(h: number, grad: number): Promise<void>;
  wt_state_to_bytes_async(s: number): Promise<Uint8Array>;
  wt_device_sync_async(device: string): Promise<void>;
  wt_call_async(target: string, self: number, args: string | null, data: Uint8Array | null, onStep?: StepCallback | null): Promise<number>;
  [sync: string]: unknown;
}

type GoClass = new () => { importObject: WebAssembly.Imports; run(instance: WebAssembly.Instance): Promise<void> };

export interface BrowserInitOptions {
  /** Where webtensor.wasm is; default: next to this file (the package's dist/wasm/). */
  wasmURL?: string | URL;
  /** Where Go's wasm_exec.js is; default: next to webtensor.wasm. */
  wasmExecURL?: string | URL;
  /**
   * The CPU backend's wasm SIMD kernels (webtensor-simd.wasm, next to
   * webtensor.wasm); false runs the pure-Go kernels. Without the file, or
   * in a browser without wasm SIMD, the Go kernels run.
   */
  simd?: boolean;
  /**
   * "auto" (default): WebGPU on a hardware adapter; on a software one
   * (SwiftShader) whichever of WebGPU and the CPU backend a short calibration
   * finds faster (cached per adapter and version); the CPU with a warning
   * when the browser has no WebGPU. "webgpu": WebGPU whenever it opens;
   * "cpu": the CPU backend.
   */
  device?: "auto" | "webgpu" | "cpu";
}

function rethrow(e: unknown): never {
  if (e instanceof Error) {
    const x = e as Error & { status?: number; needsAsync?: boolean };
    throw runtimeError(x.status ?? ERR_INVALID, e.message, x.needsAsync ?? false);
  }
  throw e;
}

async function settle<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    rethrow(e);
  }
}

const plainAttrs = (attrs: readonly AttrEntry[]) =>
  attrs.map(([n, k, v]) => [n, k, typeof v === "bigint" ? Number(v) : v]);

function bytes(a: TypedArray): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function wasmBinding(go: GoCalls): Binding {
  const call = <T>(name: string, ...args: unknown[]): T => {
    const r = (go[name] as (...a: unknown[]) => unknown)(...args);
    if (r instanceof Error) rethrow(r);
    return r as T;
  };
  // A wt_call's result: its JSON decoded, the result freed.
  const result = (r: number): unknown => {
    try {
      return JSON.parse(call<string>("wt_call_result_json", r));
    } finally {
      call("wt_call_result_free", r);
    }
  };
  const abi = call<number>("wt_abi_version");
  if (abi !== ABI_VERSION) throw new Error(`webtensor: webtensor.wasm has C ABI version ${abi}, this package needs ${ABI_VERSION}`);
  return {
    platform: "browser",
    version: () => call<string>("wt_version"),
    devices: () => Array.from({ length: call<number>("wt_device_count") }, (_, i) => call<string>("wt_device_name", i)),
    defaultDevice: () => call<string>("wt_default_device"),
    setDefaultDevice: (d) => call("wt_set_default_device", d),
    fromData: (data, dtype, shape, device) => call<number>("wt_tensor_from_data", bytes(data), dtype, [...shape], device),
    fromHostBorrowed: () => null, // the module's memory is its own: fromArray copies
    lentArrays: () => 0,
    free: (h) => call("wt_tensor_free", h),
    liveTensors: () => call<number>("wt_live_tensors"),
    dtype: (h) => call<number>("wt_tensor_dtype", h),
    shape: (h) => call<number[]>("wt_tensor_shape", h),
    strides: (h) => call<number[]>("wt_tensor_strides", h),
    device: (h) => call<string>("wt_tensor_device", h),
    isContiguous: (h) => call<boolean>("wt_tensor_is_contiguous", h),
    readSync: (h, dst) => call("wt_tensor_to_host", h, bytes(dst)),
    read: (h, dst) => settle(go.wt_tensor_to_host_async(h, bytes(dst))),
    view: () => null, // the module's memory moves when it grows: reads copy
    toDevice: (h, d) => call<number>("wt_tensor_to_device", h, d),
    toDeviceAsync: (h, d) => settle(go.wt_tensor_to_device_async(h, d)),
    contiguous: (h) => call<number>("wt_tensor_contiguous", h),
    detach: (h) => call<number>("wt_tensor_detach", h),
    op: (name, inputs, attrs) => call<number[]>("wt_op", name, [...inputs], plainAttrs(attrs)),
    opAsync: (name, inputs, attrs) => settle(go.wt_op_async(name, [...inputs], plainAttrs(attrs))),
    manifest: () => call<string>("wt_manifest_json"),
    requiresGrad: (h) => call<boolean>("wt_tensor_requires_grad", h),
    setRequiresGrad: (h, on) => call("wt_tensor_set_requires_grad", h, on),
    backward: (h, g) => call("wt_backward", h, g),
    backwardAsync: (h, g) => settle(go.wt_backward_async(h, g)),
    grad: (h) => call<number>("wt_tensor_grad", h),
    zeroGrad: (h) => call("wt_tensor_zero_grad", h),
    noGradEnter: () => call("wt_no_grad_enter"),
    noGradExit: () => call("wt_no_grad_exit"),
    manualSeed: (seed) => call("wt_manual_seed", seed.toString()), // uint64 crosses as a decimal string
    liveDLPackExports: () => 0, // no DLPack in the browser
    fallbacks: (reset) => call<string>("wt_fallbacks_json", reset),
    setNumThreads: (n) => call("wt_set_num_threads", n),
    profileStart: (flags) => call("wt_profile_start", flags),
    profileStop: () => call("wt_profile_stop"),
    profileJSON: () => call<string>("wt_profile_json"),
    getNumThreads: () => call<number>("wt_get_num_threads"),
    traceBegin: (inputs) => call("wt_trace_begin", [...inputs]),
    traceEnd: (outputs) => call<number>("wt_trace_end", [...outputs]),
    traceAbort: () => call("wt_trace_abort"),
    graphRun: (g, inputs) => call<number[]>("wt_graph_run", g, [...inputs]),
    graphText: (g) => call<string>("wt_graph_text", g),
    graphFree: (g) => call("wt_graph_free", g),
    loadPlugin: () => {
      throw new Error("webtensor: WebAssembly plugins run in Node (the browser build has no plugin host)");
    },
    setTuningPolicy: () => {
      throw new Error("webtensor: tuning policies are WebAssembly plugins, which run in Node (the browser build has no plugin host)");
    },
    deviceTuning: (device) => call<string>("wt_device_tuning_json", device),
    deviceSync: (device) => settle(go.wt_device_sync_async(device)),
    deviceInfo: (device) => call<string>("wt_device_info_json", device),
    deviceEmptyCache: (device) => call("wt_device_empty_cache", device),
    deviceSetOption: (device, name, value) => call("wt_device_set_option", device, name, value),
    deviceStream: (device) => BigInt(call<string>("wt_device_stream", device)), // uint64 crosses as a decimal string
    call: <T>(target: string, self: number, args?: CallArgs | null, data?: Uint8Array | null) =>
      result(call<number>("wt_call", target, self, callArgsJSON(args), data ?? null)) as T,
    callAsync: async <T>(target: string, self: number, args?: CallArgs | null, data?: Uint8Array | null, onStep?: StepCallback | null) =>
      result(await settle(go.wt_call_async(target, self, callArgsJSON(args), data ?? null, onStep ?? null))) as T,
    nnInit: (h, method, s) => call("wt_nn_init", h, method, plainAttrs(s)),
    nnCalculateGain: (nonlinearity, param) => call<number>("wt_nn_calculate_gain", nonlinearity, param),
    safetensorsHeader: (prefix, fileSize, name) => call<string>("wt_safetensors_header", prefix, fileSize, name),
    optimizerNew: (kind, params, s) => call<number>("wt_optimizer_new", kind, [...params], plainAttrs(s)),
    optimizerSet: (opt, s) => call("wt_optimizer_set", opt, plainAttrs(s)),
    optimizerStep: (opt) => call("wt_optimizer_step", opt),
    optimizerZeroGrad: (opt) => call("wt_optimizer_zero_grad", opt),
    optimizerState: (opt) => call<number>("wt_optimizer_state", opt),
    optimizerLoadState: (opt, state) => call("wt_optimizer_load_state", opt, state),
    optimizerFree: (opt) => call("wt_optimizer_free", opt),
    lrSchedule: (kind, s, base, step) => call<number>("wt_lr_schedule", kind, plainAttrs(s), base, step),
    clipGradNorm: (params, maxNorm, normType) => call<number>("wt_clip_grad_norm", [...params], maxNorm, normType),
    clipGradValue: (params, clip) => call("wt_clip_grad_value", [...params], clip),
    stateNew: () => call<number>("wt_state_new"),
    stateFree: (s) => call("wt_state_free", s),
    statePut: (s, name, t) => call("wt_state_put", s, name, t),
    stateCount: (s) => call<number>("wt_state_count", s),
    stateName: (s, i) => call<string>("wt_state_name", s, i),
    stateGet: (s, i) => call<number>("wt_state_get", s, i),
    stateSetMetadata: (s, k, v) => call("wt_state_set_metadata", s, k, v),
    stateMetadataCount: (s) => call<number>("wt_state_metadata_count", s),
    stateMetadataKey: (s, i) => call<string>("wt_state_metadata_key", s, i),
    stateMetadataValue: (s, i) => call<string>("wt_state_metadata_value", s, i),
    stateSave: () => {
      throw new Error("webtensor: the browser has no file system: save() gives the checkpoint's bytes");
    },
    stateToBytes: (s) => settle(go.wt_state_to_bytes_async(s)),
    stateLoad: () => {
      throw new Error("webtensor: the browser has no file system: load() reads a checkpoint's bytes");
    },
    stateFromBytes: (bytes, device, name) => call<number>("wt_state_from_bytes", bytes, device, name),
    stateAssign: (module, values, strict, name) => call("wt_state_assign", module, values, strict, name),
  };
}

/** The SIMD module's exports (sdk/js/wasm/simd/gemm.c and math.c) that Go imports. */
const simdKernelNames = ["sgemm_macro", "unary_f32", "exp_sum_f32", "softmax_row_f32", "pack_a4_f32", "layer_norm_row_f32"] as const;
type SimdKernels = Record<(typeof simdKernelNames)[number], (...args: number[]) => number | void>;

/** The SIMD kernels' module, or why there is none (a missing file, no wasm SIMD). */
async function simdModule(url: URL): Promise<WebAssembly.Module | string> {
  try {
    const res = await fetch(url);
    if (!res.ok) return `${url}: HTTP ${res.status}`;
    return await WebAssembly.compile(await res.arrayBuffer());
  } catch (e) {
    return `${url}: ${(e as Error).message}`;
  }
}

/**
 * The imports a webtensor.wasm built with -tags wtsimd needs
 * (backends/cpu/gemm_wasmsimd.go, ew_wasmsimd.go): they forward to the SIMD module once it
 * is instantiated on the Go instance's memory, which exists only after Go's
 * module is; until then, and when it is absent, available() says 0 and Go
 * runs its own kernels.
 */
function simdImports(): { imports: WebAssembly.ModuleImports; attach(k: SimdKernels): void } {
  let kernels: SimdKernels | null = null;
  const imports: WebAssembly.ModuleImports = { available: () => (kernels ? 1 : 0) };
  for (const name of simdKernelNames) imports[name] = (...a: number[]) => kernels![name](...a);
  return { imports, attach: (k) => (kernels = k) };
}

async function fetchModule(url: URL): Promise<WebAssembly.Module> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`webtensor: cannot fetch ${url}: ${(e as Error).message}`);
  }
  if (!res.ok) throw new Error(`webtensor: cannot fetch ${url}: HTTP ${res.status} (is webtensor.wasm served there?)`);
  try {
    return await WebAssembly.compileStreaming(res);
  } catch {
    // a server that does not say application/wasm: compile the bytes
    const again = await fetch(url);
    return WebAssembly.compile(await again.arrayBuffer());
  }
}

/** Fetches, compiles and starts the Go module, chooses the default device; resolves when its calls are ready. */
export async function loadBrowser(opts: BrowserInitOptions = {}): Promise<{ binding: Binding; choice: DeviceChoice; why: string }> {
  const wasmURL = new URL(opts.wasmURL ?? "./wasm/webtensor.wasm", import.meta.url);
  const execURL = new URL(opts.wasmExecURL ?? "./wasm_exec.js", wasmURL);
  const g = globalThis as unknown as { Go?: GoClass; __webtensor?: GoCalls; __webtensorReady?: (c: GoCalls) => void };
  if (!g.Go) {
    try {
      await import(/* @vite-ignore */ execURL.href);
    } catch (e) {
      throw new Error(`webtensor: cannot load Go's wasm_exec.js from ${execURL}: ${(e as Error).message}`);
    }
    if (!g.Go) throw new Error(`webtensor: ${execURL} did not define Go (is it Go's wasm_exec.js?)`);
  }
  const [module, simd] = await Promise.all([
    fetchModule(wasmURL),
    opts.simd === false ? Promise.resolve("turned off (init({simd: false}))") : simdModule(new URL("./webtensor-simd.wasm", wasmURL)),
  ]);
  const go = new g.Go!();
  const ready = new Promise<GoCalls>((resolve) => (g.__webtensorReady = resolve));
  const forward = simdImports();
  go.importObject["webtensor_simd"] = forward.imports;
  const instance = await WebAssembly.instantiate(module, go.importObject);
  // Attached before go.run: the CPU backend asks available() in its init.
  let simdWhy = typeof simd === "string" ? simd : "";
  if (typeof simd !== "string") {
    try {
      const memory = instance.exports["mem"] as WebAssembly.Memory;
      const k = await WebAssembly.instantiate(simd, { env: { memory } });
      forward.attach(k.exports as unknown as SimdKernels);
    } catch (e) {
      simdWhy = `cannot instantiate it on the Go module's memory: ${(e as Error).message}`;
    }
  }
  const exited = go.run(instance).then(() => {
    throw new Error("webtensor: the WebAssembly module exited");
  });
  const calls = await Promise.race([ready, exited]);
  const binding = wasmBinding(calls);
  const hasGPU = typeof navigator !== "undefined" && "gpu" in navigator && !!(navigator as { gpu?: unknown }).gpu;
  const want = opts.device ?? "auto";
  if (want === "webgpu" && !hasGPU) {
    console.warn("webtensor: this browser has no WebGPU (navigator.gpu); using the CPU backend");
  }
  const [device, why, adapter, software] = await settle(calls.wt_browser_init(want !== "cpu" && hasGPU));
  if (hasGPU && why && want !== "cpu") console.warn(`webtensor: WebGPU is not used (${why}); using the CPU backend`);
  const cpuKernels = simdWhy ? `Go (no wasm SIMD kernels: ${simdWhy})` : "wasm SIMD (webtensor-simd.wasm)";
  const opened = { want, hasGPU, device, why, adapter, software, cpuKernels, simd: !simdWhy };
  const choice = await chooseDevice(binding, opened, () =>
    settle(calls.wt_browser_calibrate()),
  );
  return { binding, choice, why: choice.device.startsWith("webgpu") ? "" : choice.reason };
}
