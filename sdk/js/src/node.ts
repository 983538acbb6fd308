// The Node runtime: koffi's binding of capi/include/webtensor.h as a Binding.
//
// Every function of the header is declared in abi_prototypes.gen.ts
// (generated from it) and called through `check(status)`, which throws a WebtensorError carrying the
// library's own message (wt_last_error).

import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type * as KoffiNS from "koffi";
import { ABI_VERSION, ERR_BUFFER_TOO_SMALL, OK, callArgsJSON, runtimeError } from "./binding.js";
import type { AttrEntry, Binding, CallArgs, StepCallback } from "./binding.js";
import { DTYPES, dtypeFromCode, lanes } from "./dtype.js";
import type { TypedArray } from "./dtype.js";
import { pin, unpin } from "./lend.js";
import { PROTOTYPES } from "./abi_prototypes.gen.js";

// koffi is CommonJS; createRequire keeps this file plain ESM without
// depending on Node's CJS named-export detection.
const koffi: typeof KoffiNS = createRequire(import.meta.url)("koffi");

/** The wt_attr struct: flat (no unions) so koffi can build it field by field. */
const Attr = koffi.struct("wt_attr", {
  name: "const char *",
  kind: "int32_t",
  i: "int64_t",
  f: "double",
  s: "const char *",
  ints: "const int64_t *",
  floats: "const double *",
  len: "int64_t",
});

// DLPack structs (dlpack.h), only read: the SDK exports CPU tensors through
// wt_to_dlpack_versioned to view their memory without a copy.
const DLDevice = koffi.struct("DLDevice", { device_type: "int32_t", device_id: "int32_t" });
const DLDataType = koffi.struct("DLDataType", { code: "uint8_t", bits: "uint8_t", lanes: "uint16_t" });
const DLTensor = koffi.struct("DLTensor", {
  data: "void *",
  device: DLDevice,
  ndim: "int32_t",
  dtype: DLDataType,
  shape: "int64_t *",
  strides: "int64_t *",
  byte_offset: "uint64_t",
});
const DLManagedTensorVersioned = koffi.struct("DLManagedTensorVersioned", {
  version: koffi.struct("DLPackVersion", { major: "uint32_t", minor: "uint32_t" }),
  manager_ctx: "void *",
  deleter: "void *",
  flags: "uint64_t",
  dl_tensor: DLTensor,
});
const DLPackDeleter = koffi.proto("void wt_dlpack_deleter(void *self)");

type NativeFn = (...args: any[]) => any;
type Native = { [K in keyof typeof PROTOTYPES]: NativeFn };

/** Where the library is loaded from: $WEBTENSOR_LIBRARY, else the package's prebuilds/<platform>-<arch>/. */
export function libraryPath(): string {
  if (process.env.WEBTENSOR_LIBRARY) return process.env.WEBTENSOR_LIBRARY;
  // dist/lib.js -> package root
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  return join(root, "prebuilds", `${process.platform}-${process.arch}`, "libwebtensor.so");
}

let native: Native | null = null;

/** Loads the native library once; throws an Error naming the path and the reason when it cannot. */
function load(): Native {
  if (native) return native;
  const path = libraryPath();
  if (!existsSync(path)) {
    throw new Error(
      `webtensor: the native library ${path} is missing (no prebuild for ${process.platform}-${process.arch}; ` +
        `set WEBTENSOR_LIBRARY to a libwebtensor.so built with \`make capi\`)`,
    );
  }
  let lib;
  try {
    lib = koffi.load(path);
  } catch (e) {
    throw new Error(`webtensor: cannot load the native library ${path}: ${(e as Error).message}`);
  }
  const fns: Record<string, NativeFn> = {};
  for (const [name, proto] of Object.entries(PROTOTYPES)) fns[name] = lib.func(proto);
  const abi = fns.wt_abi_version!() as number;
  if (abi !== ABI_VERSION) {
    throw new Error(`webtensor: ${path} has C ABI version ${abi}, this package needs ${ABI_VERSION}`);
  }
  native = fns as Native;
  return native;
}

/** Throws the library's error for a failed status. */
function check(status: number): void {
  if (status !== OK) {
    const msg = (native!.wt_last_error() as string) || `webtensor: status ${status}`;
    throw runtimeError(status, msg);
  }
}

/** Calls a function that fills a string buffer, growing the buffer as the library says. */
function readString(fn: NativeFn, ...args: unknown[]): string {
  let cap = 256;
  const needed = new BigUint64Array(1);
  for (;;) {
    const buf = Buffer.alloc(cap);
    const st = fn(...args, buf, cap, needed) as number;
    if (st === ERR_BUFFER_TOO_SMALL && Number(needed[0]) > cap) {
      cap = Number(needed[0]);
      continue;
    }
    check(st);
    const end = buf.indexOf(0);
    return buf.toString("utf8", 0, end < 0 ? cap : end);
  }
}


// DLPack exports that back the arrays view() returns: their deleter runs
// when the array's ArrayBuffer is collected.
const exportRegistry = new FinalizationRegistry<{ managed: unknown; deleter: (p: unknown) => void }>((x) =>
  x.deleter(x.managed),
);

// Typed arrays lent to the library (fromArray): each stays referenced here
// until the library stores 1 into its flag, which it does (from any thread)
// once nothing uses the memory; sweep() drops those.
const lent = new Set<{ data: TypedArray; flag: Int32Array }>();
let sweeper: ReturnType<typeof setInterval> | null = null;

const lentBuffer = (buf: ArrayBufferLike): boolean => [...lent].some((e) => e.data.buffer === buf);

function sweep(): void {
  for (const e of lent) {
    if (Atomics.load(e.flag, 0) === 1) {
      lent.delete(e);
      unpin(e.data, lentBuffer);
    }
  }
  if (lent.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = null;
  }
}

function newHandle(f: (out: BigInt64Array) => number): number {
  const out = new BigInt64Array(1);
  check(f(out));
  return Number(out[0]);
}

/**
 * wt_call, then its result's JSON (wt_call_result_json: capacity 0 to
 * learn the size, then the text), decoded; wt_call_result_free always.
 */
function callJSON(target: string, self: number, args: CallArgs | null | undefined, data: Uint8Array | null | undefined): unknown {
  const lib = native!;
  // koffi passes an empty array as NULL, which is no data; empty data is a real pointer and 0 bytes.
  const ptr = data?.byteLength === 0 ? new Uint8Array(1) : (data ?? null);
  const r = newHandle((o) => lib.wt_call(target, self, callArgsJSON(args), ptr, data?.byteLength ?? 0, o));
  let text: string;
  try {
    const needed = new BigUint64Array(1);
    const st = lib.wt_call_result_json(r, null, 0, needed) as number;
    if (st !== ERR_BUFFER_TOO_SMALL) check(st);
    const buf = Buffer.alloc(Number(needed[0]));
    check(lib.wt_call_result_json(r, buf, buf.length, needed));
    text = buf.toString("utf8", 0, buf.length - 1); // less the NUL
  } catch (e) {
    lib.wt_call_result_free(r);
    throw e;
  }
  check(lib.wt_call_result_free(r));
  return JSON.parse(text);
}

function int32(f: (out: Int32Array) => number): number {
  const v = new Int32Array(1);
  check(f(v));
  return v[0]!;
}

function int64(f: (out: BigInt64Array) => number): number {
  const v = new BigInt64Array(1);
  check(f(v));
  return Number(v[0]);
}

function dims(fn: NativeFn, h: number, n: number): number[] {
  const buf = new BigInt64Array(Math.max(n, 1));
  check(fn(h, buf, n));
  return Array.from(buf.subarray(0, n), Number);
}

/** wt_attr structs for koffi: flat, every field present. */
function attrStructs(attrs: readonly AttrEntry[]): Record<string, unknown>[] {
  return attrs.map(([name, kind, v]) => {
    const a: Record<string, unknown> = { name, kind, i: 0, f: 0, s: null, ints: null, floats: null, len: 0 };
    if (typeof v === "string") a.s = v;
    else if (typeof v === "boolean") a.i = v ? 1 : 0;
    else if (Array.isArray(v)) {
      if (kind === 5) a.ints = BigInt64Array.from(v as number[], (x) => BigInt(x));
      else a.floats = Float64Array.from(v as number[]);
      a.len = v.length;
    } else if (kind === 2) a.f = v;
    else a.i = v;
    return a;
  });
}

/** The C ABI as a Binding. */
function nodeBinding(lib: Native): Binding {
  const b: Binding = {
    platform: "node",
    fallbacks: (reset) => readString(lib.wt_fallbacks_json, reset ? 1 : 0),
    setNumThreads: (n) => check(lib.wt_set_num_threads(n)),
    profileStart: (flags) => check(lib.wt_profile_start(flags)),
    profileStop: () => check(lib.wt_profile_stop()),
    profileJSON: () => readString(lib.wt_profile_json),
    getNumThreads: () => int32((o) => lib.wt_get_num_threads(o)),
    version: () => lib.wt_version() as string,
    devices: () => {
      const n = int32((o) => lib.wt_device_count(o));
      return Array.from({ length: n }, (_, i) => readString(lib.wt_device_name, i));
    },
    defaultDevice: () => readString(lib.wt_default_device),
    setDefaultDevice: (d) => check(lib.wt_set_default_device(d)),
    fromData: (data, dtype, shape, device) =>
      newHandle((o) =>
        lib.wt_tensor_from_data(data, data.byteLength, dtype, BigInt64Array.from(shape, BigInt), shape.length, device, o),
      ),
    fromHostBorrowed: (data, dtype, shape) => {
      sweep();
      if (!pin(data)) return null; // the caller copies it (lend.ts)
      const flag = new Int32Array(1);
      let h: number;
      try {
        h = newHandle((o) =>
          lib.wt_tensor_from_host_borrowed(data, data.byteLength, dtype, BigInt64Array.from(shape, BigInt), shape.length, flag, o),
        );
      } catch (e) {
        unpin(data, lentBuffer);
        throw e;
      }
      if (Atomics.load(flag, 0) !== 1) {
        lent.add({ data, flag });
        sweeper ??= setInterval(sweep, 1000).unref();
      } else {
        unpin(data, lentBuffer);
      }
      return h;
    },
    lentArrays: () => {
      check(lib.wt_collect());
      sweep();
      return lent.size;
    },
    free: (h) => check(lib.wt_tensor_free(h)),
    liveTensors: () => int64((o) => lib.wt_live_tensors(o)),
    dtype: (h) => int32((o) => lib.wt_tensor_dtype(h, o)),
    shape: (h) => dims(lib.wt_tensor_shape, h, int32((o) => lib.wt_tensor_ndim(h, o))),
    strides: (h) => dims(lib.wt_tensor_strides, h, int32((o) => lib.wt_tensor_ndim(h, o))),
    device: (h) => readString(lib.wt_tensor_device, h),
    isContiguous: (h) => int32((o) => lib.wt_tensor_is_contiguous(h, o)) === 1,
    readSync: (h, dst) => check(lib.wt_tensor_to_host(h, dst, dst.byteLength)),
    read: async (h, dst) => check(lib.wt_tensor_to_host(h, dst, dst.byteLength)),
    view: (h, dtype, size) => {
      const out: unknown[] = [null];
      check(lib.wt_to_dlpack_versioned(h, out));
      const managed = out[0];
      const m = koffi.decode(managed, DLManagedTensorVersioned) as {
        deleter: unknown;
        dl_tensor: { data: unknown; byte_offset: number | bigint };
      };
      const deleter = koffi.decode(m.deleter, DLPackDeleter) as (p: unknown) => void;
      const dt = dtypeFromCode(dtype);
      const info = DTYPES[dt];
      const off = Number(m.dl_tensor.byte_offset);
      const buf = koffi.view(m.dl_tensor.data, off + size * info.size);
      exportRegistry.register(buf, { managed, deleter });
      return new info.array(buf, off, size * lanes(dt)) as TypedArray; // a complex element is two values
    },
    toDevice: (h, d) => newHandle((o) => lib.wt_tensor_to_device(h, d, o)),
    toDeviceAsync: async (h, d) => newHandle((o) => lib.wt_tensor_to_device(h, d, o)),
    contiguous: (h) => newHandle((o) => lib.wt_tensor_contiguous(h, o)),
    detach: (h) => newHandle((o) => lib.wt_tensor_detach(h, o)),
    op: (name, inputs, attrs) => {
      const handles = BigInt64Array.from(inputs.length ? inputs : [0], BigInt);
      const structs = attrs.length ? attrStructs(attrs) : null;
      let cap = 4;
      for (;;) {
        const outs = new BigInt64Array(cap);
        const n = new Int32Array(1);
        const st = lib.wt_op(name, handles, inputs.length, structs, attrs.length, outs, cap, n) as number;
        if (st === ERR_BUFFER_TOO_SMALL && n[0]! > cap) {
          cap = n[0]!;
          continue;
        }
        check(st);
        return Array.from(outs.subarray(0, n[0]!), Number);
      }
    },
    opAsync: async (name, inputs, attrs) => b.op(name, inputs, attrs),
    manifest: () => readString(lib.wt_manifest_json),
    requiresGrad: (h) => int32((o) => lib.wt_tensor_requires_grad(h, o)) === 1,
    setRequiresGrad: (h, on) => check(lib.wt_tensor_set_requires_grad(h, on ? 1 : 0)),
    backward: (h, g) => check(lib.wt_backward(h, g)),
    backwardAsync: async (h, g) => b.backward(h, g),
    grad: (h) => newHandle((o) => lib.wt_tensor_grad(h, o)),
    zeroGrad: (h) => check(lib.wt_tensor_zero_grad(h)),
    noGradEnter: () => check(lib.wt_no_grad_enter()),
    noGradExit: () => check(lib.wt_no_grad_exit()),
    manualSeed: (seed) => check(lib.wt_manual_seed(seed)),
    liveDLPackExports: () => int64((o) => lib.wt_live_dlpack_exports(o)),
    traceBegin: (inputs) => check(lib.wt_trace_begin(BigInt64Array.from(inputs.length ? inputs : [0], BigInt), inputs.length)),
    traceEnd: (outputs) =>
      newHandle((o) => lib.wt_trace_end(BigInt64Array.from(outputs.length ? outputs : [0], BigInt), outputs.length, o)),
    traceAbort: () => check(lib.wt_trace_abort()),
    graphRun: (g, inputs) => {
      const ins = BigInt64Array.from(inputs.length ? inputs : [0], BigInt);
      let cap = 4;
      for (;;) {
        const outs = new BigInt64Array(cap);
        const n = new Int32Array(1);
        const st = lib.wt_graph_run(g, ins, inputs.length, outs, cap, n) as number;
        if (st === ERR_BUFFER_TOO_SMALL && n[0]! > cap) {
          cap = n[0]!;
          continue;
        }
        check(st);
        return Array.from(outs.subarray(0, n[0]!), Number);
      }
    },
    graphText: (g) => readString(lib.wt_graph_text, g),
    graphFree: (g) => check(lib.wt_graph_free(g)),
    loadPlugin: (wasm, label) => {
      const name = readString(lib.wt_plugin_load_bytes, wasm, wasm.byteLength, label);
      return { name, ops: JSON.parse(readString(lib.wt_plugin_ops, name)) as string[] };
    },
    setTuningPolicy: (plugin, policy) => check(lib.wt_tuning_policy_set(plugin, policy)),
    deviceTuning: (device) => readString(lib.wt_device_tuning_json, device),
    deviceSync: async (device) => check(lib.wt_device_sync(device)),
    deviceInfo: (device) => readString(lib.wt_device_info_json, device),
    deviceEmptyCache: (device) => check(lib.wt_device_empty_cache(device)),
    deviceSetOption: (device, name, value) => check(lib.wt_device_set_option(device, name, value)),
    deviceStream: (device) => {
      const s = new BigUint64Array(1);
      check(lib.wt_device_stream(device, s));
      return s[0]!;
    },
    safetensorsHeader: (prefix, fileSize, name) =>
      readString(lib.wt_safetensors_header, prefix, prefix.byteLength, BigInt(fileSize), name),
    call: <T>(target: string, self: number, args?: CallArgs | null, data?: Uint8Array | null) =>
      callJSON(target, self, args, data) as T,
    callAsync: async <T>(target: string, self: number, args?: CallArgs | null, data?: Uint8Array | null, onStep?: StepCallback | null) => {
      // The C ABI's calls return when the last step is done: a step
      // callback would never be called, so asking for one is an error.
      if (onStep) throw new TypeError("webtensor: onStep is browser-only (the C ABI's wt_call reports no steps)");
      return callJSON(target, self, args, data) as T;
    },
    ...trainingCalls(lib),
  };
  return b;
}

/** The training and state-dict calls of the Binding (webtensor.h's wt_optimizer_*, wt_state_*, ...). */
function trainingCalls(lib: Native) {
  const settings = (attrs: readonly AttrEntry[]) => (attrs.length ? attrStructs(attrs) : null);
  const list = (hs: readonly number[]) => BigInt64Array.from(hs.length ? hs : [0], BigInt);
  return {
    optimizerNew: (kind: string, params: readonly number[], s: readonly AttrEntry[]) =>
      newHandle((o) => lib.wt_optimizer_new(kind, list(params), params.length, settings(s), s.length, o)),
    optimizerSet: (opt: number, s: readonly AttrEntry[]) => check(lib.wt_optimizer_set(opt, settings(s), s.length)),
    optimizerStep: (opt: number) => check(lib.wt_optimizer_step(opt)),
    optimizerZeroGrad: (opt: number) => check(lib.wt_optimizer_zero_grad(opt)),
    optimizerState: (opt: number) => newHandle((o) => lib.wt_optimizer_state(opt, o)),
    optimizerLoadState: (opt: number, state: number) => check(lib.wt_optimizer_load_state(opt, state)),
    optimizerFree: (opt: number) => check(lib.wt_optimizer_free(opt)),
    lrSchedule: (kind: string, s: readonly AttrEntry[], base: number, step: number) => {
      const lr = new Float64Array(1);
      check(lib.wt_lr_schedule(kind, settings(s), s.length, base, step, lr));
      return lr[0]!;
    },
    clipGradNorm: (params: readonly number[], maxNorm: number, normType: number) =>
      newHandle((o) => lib.wt_clip_grad_norm(list(params), params.length, maxNorm, normType, o)),
    clipGradValue: (params: readonly number[], clip: number) =>
      check(lib.wt_clip_grad_value(list(params), params.length, clip)),
    nnInit: (h: number, method: string, s: readonly AttrEntry[]) => check(lib.wt_nn_init(h, method, settings(s), s.length)),
    nnCalculateGain: (nonlinearity: string, param: number) => {
      const g = new Float64Array(1);
      check(lib.wt_nn_calculate_gain(nonlinearity, param, g));
      return g[0]!;
    },
    stateNew: () => newHandle((o) => lib.wt_state_new(o)),
    stateFree: (s: number) => check(lib.wt_state_free(s)),
    statePut: (s: number, name: string, t: number) => check(lib.wt_state_put(s, name, t)),
    stateCount: (s: number) => int32((o) => lib.wt_state_count(s, o)),
    stateName: (s: number, i: number) => readString(lib.wt_state_name, s, i),
    stateGet: (s: number, i: number) => newHandle((o) => lib.wt_state_get(s, i, o)),
    stateSetMetadata: (s: number, k: string, v: string) => check(lib.wt_state_set_metadata(s, k, v)),
    stateMetadataCount: (s: number) => int32((o) => lib.wt_state_metadata_count(s, o)),
    stateMetadataKey: (s: number, i: number) => readString(lib.wt_state_metadata_key, s, i),
    stateMetadataValue: (s: number, i: number) => readString(lib.wt_state_metadata_value, s, i),
    stateSave: (s: number, path: string) => check(lib.wt_state_save(s, path)),
    stateToBytes: async (s: number) => {
      const needed = new BigUint64Array(1);
      const st = lib.wt_state_to_bytes(s, null, 0, needed) as number;
      if (st !== ERR_BUFFER_TOO_SMALL) check(st);
      const out = new Uint8Array(Number(needed[0]));
      check(lib.wt_state_to_bytes(s, out, out.length, needed));
      return out;
    },
    stateLoad: (path: string, device: string | null, metadataOnly: boolean) =>
      newHandle((o) => lib.wt_state_load(path, device, metadataOnly ? 1 : 0, o)),
    stateFromBytes: (bytes: Uint8Array, device: string | null, name: string) =>
      newHandle((o) => lib.wt_state_from_bytes(bytes, bytes.byteLength, device, name, o)),
    stateAssign: (module: number, values: number, strict: boolean, name: string) =>
      check(lib.wt_state_assign(module, values, strict ? 1 : 0, name)),
  };
}

let binding: Binding | null = null;

/** Loads libwebtensor.so (once) and returns it as a Binding. */
export function loadNode(): Binding {
  binding ??= nodeBinding(load());
  return binding;
}
