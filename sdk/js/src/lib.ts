// The koffi binding of capi/include/webtensor.h and the error mapping.
//
// Every function of the header that the SDK uses is declared here once; the
// rest of the package calls them through `check(status)`, which throws a
// WebtensorError carrying the library's own message (wt_last_error).

import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type * as KoffiNS from "koffi";

// koffi is CommonJS; createRequire keeps this file plain ESM without
// depending on Node's CJS named-export detection.
const koffi: typeof KoffiNS = createRequire(import.meta.url)("koffi");

export const OK = 0;
export const ERR_INVALID = 1;
export const ERR_HANDLE = 2;
export const ERR_UNSUPPORTED = 3;
export const ERR_OUT_OF_MEMORY = 4;
export const ERR_BUFFER_TOO_SMALL = 5;
export const ERR_INTERNAL = 6;
export const ABI_VERSION = 1;

export const ATTR_KIND = { int: 1, float: 2, bool: 3, string: 4, ints: 5, floats: 6, dtype: 7 } as const;

const STATUS_NAMES = ["ok", "invalid", "handle", "unsupported", "out_of_memory", "buffer_too_small", "internal"];

/** An error reported by the native library: `status` is the WT_ERR_* code, the message is the library's. */
export class WebtensorError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, message: string) {
    super(message);
    this.name = "WebtensorError";
    this.status = status;
    this.code = `WT_ERR_${(STATUS_NAMES[status] ?? "unknown").toUpperCase()}`;
  }
}

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
export const DLManagedTensorVersioned = koffi.struct("DLManagedTensorVersioned", {
  version: koffi.struct("DLPackVersion", { major: "uint32_t", minor: "uint32_t" }),
  manager_ctx: "void *",
  deleter: "void *",
  flags: "uint64_t",
  dl_tensor: DLTensor,
});
export const DLPackDeleter = koffi.proto("void wt_dlpack_deleter(void *self)");

const PROTOTYPES = {
  wt_version: "const char *wt_version()",
  wt_abi_version: "int32_t wt_abi_version()",
  wt_build_info: "int32_t wt_build_info(_Out_ uint8_t *buf, size_t cap, _Out_ size_t *needed)",
  wt_last_error: "const char *wt_last_error()",
  wt_device_count: "int32_t wt_device_count(_Out_ int32_t *count)",
  wt_device_name: "int32_t wt_device_name(int32_t index, _Out_ uint8_t *buf, size_t cap, _Out_ size_t *needed)",
  wt_default_device: "int32_t wt_default_device(_Out_ uint8_t *buf, size_t cap, _Out_ size_t *needed)",
  wt_set_default_device: "int32_t wt_set_default_device(const char *device)",
  wt_tensor_from_data:
    "int32_t wt_tensor_from_data(const void *data, size_t nbytes, int32_t dtype, const int64_t *shape, int32_t ndim, const char *device, _Out_ int64_t *out)",
  wt_tensor_retain: "int32_t wt_tensor_retain(int64_t t)",
  wt_tensor_free: "int32_t wt_tensor_free(int64_t t)",
  wt_live_tensors: "int32_t wt_live_tensors(_Out_ int64_t *count)",
  wt_tensor_ndim: "int32_t wt_tensor_ndim(int64_t t, _Out_ int32_t *ndim)",
  wt_tensor_shape: "int32_t wt_tensor_shape(int64_t t, _Out_ int64_t *shape, int32_t cap)",
  wt_tensor_strides: "int32_t wt_tensor_strides(int64_t t, _Out_ int64_t *strides, int32_t cap)",
  wt_tensor_numel: "int32_t wt_tensor_numel(int64_t t, _Out_ int64_t *numel)",
  wt_tensor_dtype: "int32_t wt_tensor_dtype(int64_t t, _Out_ int32_t *dtype)",
  wt_tensor_device: "int32_t wt_tensor_device(int64_t t, _Out_ uint8_t *buf, size_t cap, _Out_ size_t *needed)",
  wt_tensor_is_contiguous: "int32_t wt_tensor_is_contiguous(int64_t t, _Out_ int32_t *c)",
  wt_tensor_to_host: "int32_t wt_tensor_to_host(int64_t t, _Out_ void *dst, size_t cap)",
  wt_tensor_contiguous: "int32_t wt_tensor_contiguous(int64_t t, _Out_ int64_t *out)",
  wt_tensor_to_device: "int32_t wt_tensor_to_device(int64_t t, const char *device, _Out_ int64_t *out)",
  wt_op:
    "int32_t wt_op(const char *name, const int64_t *inputs, int32_t n_inputs, const wt_attr *attrs, int32_t n_attrs, _Out_ int64_t *outputs, int32_t out_cap, _Out_ int32_t *n_outputs)",
  wt_manifest_json: "int32_t wt_manifest_json(_Out_ uint8_t *buf, size_t cap, _Out_ size_t *needed)",
  wt_tensor_set_requires_grad: "int32_t wt_tensor_set_requires_grad(int64_t t, int32_t on)",
  wt_tensor_requires_grad: "int32_t wt_tensor_requires_grad(int64_t t, _Out_ int32_t *on)",
  wt_backward: "int32_t wt_backward(int64_t t, int64_t grad)",
  wt_tensor_grad: "int32_t wt_tensor_grad(int64_t t, _Out_ int64_t *grad)",
  wt_tensor_zero_grad: "int32_t wt_tensor_zero_grad(int64_t t)",
  wt_tensor_detach: "int32_t wt_tensor_detach(int64_t t, _Out_ int64_t *out)",
  wt_no_grad_enter: "int32_t wt_no_grad_enter()",
  wt_no_grad_exit: "int32_t wt_no_grad_exit()",
  wt_manual_seed: "int32_t wt_manual_seed(uint64_t seed)",
  wt_to_dlpack_versioned: "int32_t wt_to_dlpack_versioned(int64_t t, _Out_ void **out)",
  wt_live_dlpack_exports: "int32_t wt_live_dlpack_exports(_Out_ int64_t *count)",
} as const;

type NativeFn = (...args: any[]) => any;
export type Native = { [K in keyof typeof PROTOTYPES]: NativeFn };

/** Where the library is loaded from: $WEBTENSOR_LIBRARY, else the package's prebuilds/<platform>-<arch>/. */
export function libraryPath(): string {
  if (process.env.WEBTENSOR_LIBRARY) return process.env.WEBTENSOR_LIBRARY;
  // dist/lib.js -> package root
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  return join(root, "prebuilds", `${process.platform}-${process.arch}`, "libwebtensor.so");
}

let native: Native | null = null;

/** Loads the native library once; throws an Error naming the path and the reason when it cannot. */
export function load(): Native {
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

/** The loaded library; throws (like load) before init() has succeeded. */
export function lib(): Native {
  return native ?? load();
}

/** Throws the library's error for a failed status. */
export function check(status: number): void {
  if (status !== OK) {
    const msg = (native!.wt_last_error() as string) || `webtensor: status ${status}`;
    throw new WebtensorError(status, status === ERR_INTERNAL ? `${msg} (internal error)` : msg);
  }
}

/** Calls a function that fills a string buffer, growing the buffer as the library says. */
export function readString(fn: NativeFn, ...args: unknown[]): string {
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

export { koffi, Attr };
