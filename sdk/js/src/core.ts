// The Tensor class, construction, calling ops by name, tidy and autograd.

import { DTYPES, DataTypeMap, DType, TypedArray, dtypeFromCode, dtypeOfArray, toDType } from "./dtype.js";
import {
  ATTR_KIND,
  DLManagedTensorVersioned,
  DLPackDeleter,
  ERR_BUFFER_TOO_SMALL,
  check,
  koffi,
  lib,
  load,
  readString,
} from "./lib.js";

/** What an op accepts where a tensor goes: a Tensor, or a number made into a 0-d tensor like its neighbours. */
export type TensorLike = Tensor | number | boolean;
export type AttrValue = number | boolean | string | bigint | readonly number[] | null | undefined;
export type Attrs = Record<string, AttrValue>;

// The safety net: a Tensor the program drops without dispose() frees its
// handle when the garbage collector collects it. dispose() unregisters.
const registry = new FinalizationRegistry<number>((h) => {
  try {
    lib().wt_tensor_free(h);
  } catch {
    // the process is exiting or the handle is already gone: nothing to do
  }
});

// DLPack exports that back the arrays data() returns: their deleter runs
// when the array's ArrayBuffer is collected.
const exportRegistry = new FinalizationRegistry<{ managed: unknown; deleter: (p: unknown) => void }>((x) =>
  x.deleter(x.managed),
);

// tidy() scopes: tensors made while one is open are disposed when it closes.
const scopes: Set<Tensor>[] = [];

/** An n-dimensional array on a device, backed by a native handle. Free it with dispose() or tidy(). */
export class Tensor {
  #h: number;
  #shape: readonly number[] | undefined;
  #dtype: DType | undefined;
  #device: string | undefined;

  /** @internal wraps a new handle the caller owns. */
  constructor(handle: number) {
    this.#h = handle;
    registry.register(this, handle, this);
    scopes[scopes.length - 1]?.add(this);
  }

  /** The wt_tensor handle; throws once disposed. */
  get handle(): number {
    if (!this.#h) throw new Error("webtensor: tensor used after dispose()");
    return this.#h;
  }

  /** True once dispose() has run. */
  get isDisposed(): boolean {
    return this.#h === 0;
  }

  /** Frees the native tensor now. Disposing twice is harmless; any other use afterwards throws. */
  dispose(): void {
    const h = this.#h;
    if (!h) return;
    this.#h = 0;
    registry.unregister(this);
    check(lib().wt_tensor_free(h));
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  get dtype(): DType {
    if (this.#dtype === undefined) {
      const v = new Int32Array(1);
      check(lib().wt_tensor_dtype(this.handle, v));
      this.#dtype = dtypeFromCode(v[0]!);
    }
    return this.#dtype;
  }

  get shape(): readonly number[] {
    if (this.#shape === undefined) {
      const n = this.ndim;
      const buf = new BigInt64Array(Math.max(n, 1));
      check(lib().wt_tensor_shape(this.handle, buf, n));
      this.#shape = Object.freeze(Array.from(buf.subarray(0, n), Number));
    }
    return this.#shape;
  }

  get ndim(): number {
    const v = new Int32Array(1);
    check(lib().wt_tensor_ndim(this.handle, v));
    return v[0]!;
  }

  /** Number of elements. */
  get size(): number {
    const v = new BigInt64Array(1);
    check(lib().wt_tensor_numel(this.handle, v));
    return Number(v[0]);
  }

  /** Strides in elements. */
  strides(): number[] {
    const n = this.ndim;
    const buf = new BigInt64Array(Math.max(n, 1));
    check(lib().wt_tensor_strides(this.handle, buf, n));
    return Array.from(buf.subarray(0, n), Number);
  }

  isContiguous(): boolean {
    const v = new Int32Array(1);
    check(lib().wt_tensor_is_contiguous(this.handle, v));
    return v[0] === 1;
  }

  /** The device name: "cpu", "webgpu:0", ... */
  get device(): string {
    // Cached like dtype and shape: they never change for a handle, and every
    // FFI call costs (see README: koffi's own call stack makes Go look up the
    // thread's stack bounds on each call).
    this.#device ??= readString(lib().wt_tensor_device, this.handle);
    return this.#device;
  }

  #newHandle(fn: string, ...args: unknown[]): Tensor {
    const out = new BigInt64Array(1);
    check((lib() as unknown as Record<string, (...a: unknown[]) => number>)[fn]!(this.handle, ...args, out));
    return new Tensor(Number(out[0]));
  }

  /** A copy on another device (a new handle to the same tensor when already there). */
  to(device: string): Tensor {
    return this.#newHandle("wt_tensor_to_device", device);
  }

  /** A tensor sharing this one's data, cut from the autograd graph. */
  detach(): Tensor {
    return this.#newHandle("wt_tensor_detach");
  }

  /** The elements in row-major order, copied into a new typed array (waits for the device). */
  dataSync<D extends DType = DType>(): DataTypeMap[D] {
    const dt = this.dtype;
    const n = this.size;
    const out = new DTYPES[dt].array(n);
    check(lib().wt_tensor_to_host(this.handle, out, n * DTYPES[dt].size));
    return out as DataTypeMap[D];
  }

  /**
   * The elements in row-major order as a typed array. For a dense CPU tensor the
   * array views the tensor's memory without a copy (through the ABI's DLPack
   * export; the memory stays valid while the array lives, even after dispose());
   * writing into it changes the tensor. Other tensors are copied.
   */
  async data<D extends DType = DType>(): Promise<DataTypeMap[D]> {
    return this.#view() as DataTypeMap[D];
  }

  #view(): TypedArray {
    const dt = this.dtype;
    if (this.handle && (this.device !== "cpu" || this.size === 0 || !this.isContiguous())) return this.dataSync();
    const out: unknown[] = [null];
    check(lib().wt_to_dlpack_versioned(this.handle, out));
    const managed = out[0];
    const m = koffi.decode(managed, DLManagedTensorVersioned) as {
      deleter: unknown;
      dl_tensor: { data: unknown; byte_offset: number | bigint };
    };
    const deleter = koffi.decode(m.deleter, DLPackDeleter) as (p: unknown) => void;
    const info = DTYPES[dt];
    const off = Number(m.dl_tensor.byte_offset);
    const buf = koffi.view(m.dl_tensor.data, off + this.size * info.size);
    exportRegistry.register(buf, { managed, deleter });
    return new info.array(buf, off, this.size);
  }

  /** The single element as a number (bigint for i64, boolean for bool). */
  item(): number | bigint | boolean {
    if (this.size !== 1) throw new Error(`webtensor: item() needs one element, the tensor has ${this.size}`);
    const v = this.dataSync()[0]!;
    return this.dtype === "bool" ? v !== 0 : v;
  }

  toString(): string {
    if (this.isDisposed) return "Tensor(<disposed>)";
    return `Tensor(${this.dtype}, [${this.shape.join(", ")}], ${this.device})`;
  }

  // -- autograd

  get requiresGrad(): boolean {
    const v = new Int32Array(1);
    check(lib().wt_tensor_requires_grad(this.handle, v));
    return v[0] === 1;
  }

  set requiresGrad(on: boolean) {
    check(lib().wt_tensor_set_requires_grad(this.handle, on ? 1 : 0));
  }

  /** Backpropagates from this tensor (one element, or pass its gradient); gradients accumulate into the leaves. */
  backward(grad?: Tensor): void {
    check(lib().wt_backward(this.handle, grad ? grad.handle : 0));
  }

  /** The accumulated gradient (a new tensor each time), or null when none. */
  get grad(): Tensor | null {
    const out = new BigInt64Array(1);
    check(lib().wt_tensor_grad(this.handle, out));
    return out[0] ? new Tensor(Number(out[0])) : null;
  }

  zeroGrad(): void {
    check(lib().wt_tensor_zero_grad(this.handle));
  }
}

// ---- construction ----------------------------------------------------------------

export interface TensorOptions {
  dtype?: DType;
  device?: string;
  requiresGrad?: boolean;
}

type Nested = number | boolean | bigint | Nested[];

function flatten(data: Nested, shape: number[], depth: number, out: (number | boolean | bigint)[]): void {
  if (!Array.isArray(data)) {
    if (depth !== shape.length) throw new Error(`webtensor: tensor(): ragged nested array at depth ${depth}`);
    out.push(data);
    return;
  }
  if (depth === shape.length) shape.push(data.length);
  else if (shape[depth] !== data.length) throw new Error(`webtensor: tensor(): ragged nested array at depth ${depth}`);
  for (const x of data) flatten(x, shape, depth + 1, out);
}

function fromFlat(vals: (number | boolean | bigint)[], dt: DType): TypedArray {
  const a = new DTYPES[dt].array(vals.length);
  for (let i = 0; i < vals.length; i++) {
    const v = vals[i]!;
    (a as unknown as (number | bigint)[])[i] =
      dt === "i64" ? BigInt(typeof v === "boolean" ? Number(v) : typeof v === "number" ? Math.trunc(v) : v) : Number(v);
  }
  return a;
}

function checkShape(shape: readonly number[]): BigInt64Array {
  if (!Array.isArray(shape)) throw new TypeError(`webtensor: shape must be an array of integers, got ${String(shape)}`);
  for (const s of shape) {
    if (!Number.isInteger(s) || s < 0) throw new TypeError(`webtensor: bad shape [${shape.join(", ")}]: extents are integers >= 0`);
  }
  return BigInt64Array.from(shape, (s) => BigInt(s));
}

/**
 * A new tensor holding a copy of data: a typed array (with a shape; default:
 * 1-d), nested arrays of numbers/booleans, or a scalar. The copy is the ABI's
 * wt_tensor_from_data; the data's dtype is the typed array's unless options say.
 */
export function tensor(data: TypedArray | Nested, shape?: readonly number[], options: TensorOptions = {}): Tensor {
  load();
  let arr: TypedArray;
  let dt: DType;
  if (ArrayBuffer.isView(data)) {
    const given = options.dtype !== undefined ? toDType(options.dtype) : dtypeOfArray(data as TypedArray);
    const natural = data instanceof Uint16Array ? given : dtypeOfArray(data as TypedArray);
    if (natural !== given && !(given === "bool" && natural === "u8")) {
      throw new TypeError(`webtensor: tensor(): a ${data.constructor.name} holds ${natural}, not ${given}; convert it first`);
    }
    arr = data as TypedArray;
    dt = given;
    shape ??= [arr.length];
  } else {
    const flat: (number | boolean | bigint)[] = [];
    const inferred: number[] = [];
    flatten(data, inferred, 0, flat);
    dt = options.dtype !== undefined ? toDType(options.dtype) :
      flat.length && flat.every((v) => typeof v === "boolean") ? "bool" :
      flat.length && flat.every((v) => typeof v === "bigint") ? "i64" : "f32";
    arr = fromFlat(flat, dt);
    shape ??= inferred;
  }
  const sh = checkShape(shape);
  const numel = shape.reduce((a, b) => a * b, 1);
  if (numel !== arr.length) {
    throw new Error(`webtensor: tensor(): shape [${shape.join(", ")}] holds ${numel} elements, the data has ${arr.length}`);
  }
  const out = new BigInt64Array(1);
  check(lib().wt_tensor_from_data(arr, arr.byteLength, DTYPES[dt].code, sh, shape.length, options.device ?? null, out));
  const t = new Tensor(Number(out[0]));
  if (options.requiresGrad) t.requiresGrad = true;
  return t;
}

/** A 0-d tensor for a JS number next to `ref`: ref's dtype when it holds x without losing its kind. */
function scalarLike(x: number | boolean, ref: Tensor | undefined): Tensor {
  const device = ref?.device;
  if (typeof x === "boolean") return tensor([x], [], { dtype: "bool", device });
  if (ref) {
    const dt = ref.dtype;
    if (DTYPES[dt].floating || (Number.isInteger(x) && dt !== "bool")) return tensor([x], [], { dtype: dt, device });
  }
  return tensor([x], [], { dtype: "f32", device });
}

// ---- ops by name -----------------------------------------------------------------

interface OpSpec {
  name: string;
  attrs: { name: string; kind: keyof typeof ATTR_KIND }[];
}
let specs: Map<string, OpSpec> | null = null;

/** The op manifest (every op, its inputs, attributes, dtypes and backends) from the loaded library. */
export function manifest(): { version: number; ops: OpSpec[] } {
  return JSON.parse(readString(load().wt_manifest_json));
}

function attrKinds(op: string): Map<string, keyof typeof ATTR_KIND> | null {
  specs ??= new Map(manifest().ops.map((o) => [o.name, o]));
  const s = specs.get(op);
  return s ? new Map(s.attrs.map((a) => [a.name, a.kind])) : null;
}

/** Guess an attribute's kind from its value (ops missing from the manifest, e.g. plugin ops). */
function guessKind(v: AttrValue): keyof typeof ATTR_KIND {
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  if (typeof v === "bigint") return "int";
  if (Array.isArray(v)) return v.every((x) => Number.isInteger(x)) ? "ints" : "floats";
  return Number.isInteger(v) ? "int" : "float";
}

function attrStruct(op: string, name: string, kind: keyof typeof ATTR_KIND, v: AttrValue): Record<string, unknown> {
  const a: Record<string, unknown> = { name, kind: ATTR_KIND[kind], i: 0, f: 0, s: null, ints: null, floats: null, len: 0 };
  const bad = (want: string) =>
    new TypeError(`webtensor: ${op}: attribute ${name} is ${want}, got ${typeof v === "string" ? JSON.stringify(v) : String(v)}`);
  switch (kind) {
    case "int":
      if (typeof v === "bigint") a.i = v;
      else if (typeof v === "number" && Number.isInteger(v)) a.i = v;
      else throw bad("an integer");
      break;
    case "float":
      if (typeof v !== "number") throw bad("a number");
      a.f = v;
      break;
    case "bool":
      if (typeof v !== "boolean") throw bad("a boolean");
      a.i = v ? 1 : 0;
      break;
    case "string":
      if (typeof v !== "string") throw bad("a string");
      a.s = v;
      break;
    case "dtype":
      a.i = DTYPES[toDType(v)].code;
      break;
    case "ints": {
      const xs = typeof v === "number" ? [v] : v;
      if (!Array.isArray(xs) || !xs.every((x) => Number.isInteger(x))) throw bad("an array of integers");
      a.ints = BigInt64Array.from(xs as number[], (x) => BigInt(x));
      a.len = xs.length;
      break;
    }
    case "floats": {
      const xs = typeof v === "number" ? [v] : v;
      if (!Array.isArray(xs) || !xs.every((x) => typeof x === "number")) throw bad("an array of numbers");
      a.floats = Float64Array.from(xs as number[]);
      a.len = xs.length;
      break;
    }
  }
  return a;
}

/**
 * Calls the registry op `name` (built-in or plugin) and returns all its
 * outputs. inputs: tensors, numbers (0-d tensors like their neighbours) or
 * null for an absent optional input; attrs: by name, null/undefined left out.
 */
export function op(name: string, inputs: readonly (TensorLike | null | undefined)[] = [], attrs: Attrs = {}): Tensor[] {
  load();
  const kinds = attrKinds(name);
  const structs: Record<string, unknown>[] = [];
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined) continue;
    let kind = kinds?.get(k);
    if (kinds && !kind) {
      const known = [...kinds.keys()].join(", ") || "none";
      throw new Error(`webtensor: op ${name} has no attribute ${k} (attributes: ${known})`);
    }
    kind ??= guessKind(v);
    structs.push(attrStruct(name, k, kind, v));
  }
  const ref = inputs.find((x): x is Tensor => x instanceof Tensor);
  const temps: Tensor[] = [];
  try {
    const handles = new BigInt64Array(Math.max(inputs.length, 1));
    inputs.forEach((x, i) => {
      if (x instanceof Tensor) handles[i] = BigInt(x.handle);
      else if (x === null || x === undefined) handles[i] = 0n;
      else if (typeof x === "number" || typeof x === "boolean") {
        const t = scalarLike(x, ref);
        temps.push(t);
        handles[i] = BigInt(t.handle);
      } else throw new TypeError(`webtensor: ${name}: input ${i} is not a tensor or a number: ${String(x)}`);
    });
    let cap = 4;
    for (;;) {
      const outs = new BigInt64Array(cap);
      const n = new Int32Array(1);
      const st = lib().wt_op(name, handles, inputs.length, structs.length ? structs : null, structs.length, outs, cap, n);
      if (st === ERR_BUFFER_TOO_SMALL && n[0]! > cap) {
        cap = n[0]!;
        continue;
      }
      check(st);
      return Array.from(outs.subarray(0, n[0]!), (h) => new Tensor(Number(h)));
    }
  } finally {
    for (const t of temps) t.dispose();
  }
}

/** op() for single-output ops: the first output. */
export function op1(name: string, inputs: readonly (TensorLike | null | undefined)[] = [], attrs: Attrs = {}): Tensor {
  return op(name, inputs, attrs)[0]!;
}

// ---- scopes, autograd, process --------------------------------------------------

type Kept = Tensor | Kept[] | { [k: string]: Kept } | void | number | string | boolean | null | undefined;

function collect(x: unknown, into: Set<Tensor>): void {
  if (x instanceof Tensor) into.add(x);
  else if (Array.isArray(x)) for (const y of x) collect(y, into);
  else if (x && typeof x === "object") for (const y of Object.values(x)) collect(y, into);
}

/**
 * Runs fn and disposes every tensor made inside it except those it returns
 * (a tensor, or arrays/objects of them), which move to the enclosing tidy.
 * fn must be synchronous: tensors made after an await would escape the scope.
 */
export function tidy<T extends Kept>(fn: () => T): T {
  const made = new Set<Tensor>();
  scopes.push(made);
  let result: T;
  try {
    result = fn();
  } catch (e) {
    scopes.pop();
    for (const t of made) t.dispose();
    throw e;
  }
  scopes.pop();
  if (result instanceof Promise) {
    for (const t of made) t.dispose();
    throw new Error("webtensor: tidy() takes a synchronous function; it returned a Promise");
  }
  const keep = new Set<Tensor>();
  collect(result, keep);
  for (const t of made) if (!keep.has(t)) t.dispose();
  const outer = scopes[scopes.length - 1];
  if (outer) for (const t of keep) if (made.has(t)) outer.add(t);
  return result;
}

/** Disposes every tensor in a value (tensor, arrays or objects of them). */
export function dispose(x: unknown): void {
  const s = new Set<Tensor>();
  collect(x, s);
  for (const t of s) t.dispose();
}

/** Runs fn with autograd recording off (process-wide, as in the ABI). */
export function noGrad<T>(fn: () => T): T {
  check(load().wt_no_grad_enter());
  try {
    return fn();
  } finally {
    check(lib().wt_no_grad_exit());
  }
}

/** Resets the global Philox generator: the same seed gives the same random tensors in every SDK. */
export function manualSeed(seed: number | bigint): void {
  check(load().wt_manual_seed(BigInt.asUintN(64, BigInt(seed))));
}

/** Number of live native tensor handles in the process (for leak checks). */
export function liveTensors(): number {
  const v = new BigInt64Array(1);
  check(load().wt_live_tensors(v));
  return Number(v[0]);
}

/** Number of DLPack exports (arrays from data()) whose memory is still held. */
export function liveDLPackExports(): number {
  const v = new BigInt64Array(1);
  check(load().wt_live_dlpack_exports(v));
  return Number(v[0]);
}

export function version(): string {
  return load().wt_version() as string;
}

/** The devices whose backend opens here, best first ("cpu", "webgpu:0", ...). */
export function devices(): string[] {
  const n = new Int32Array(1);
  check(load().wt_device_count(n));
  return Array.from({ length: n[0]! }, (_, i) => readString(lib().wt_device_name, i));
}

export function defaultDevice(): string {
  return readString(load().wt_default_device);
}

export function setDefaultDevice(device: string): void {
  check(load().wt_set_default_device(device));
}
