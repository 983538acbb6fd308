// The Tensor class, construction, calling ops by name, tidy and autograd.

import { DTYPES, DataTypeMap, DType, TypedArray, dtypeFromCode, dtypeOfArray, lanes, toDType } from "./dtype.js";
import { ATTR_KIND, maybeNative, native } from "./binding.js";
import type { AttrEntry, AttrKind } from "./binding.js";
import { MAX_RANK, checkElement, checkOptions, checkRank, checkShape, describe } from "./check.js";

/** One complex element, as item() gives it: JS has no complex numbers. */
export interface Complex {
  re: number;
  im: number;
}

/** What an op accepts where a tensor goes: a Tensor, or a number made into a 0-d tensor like its neighbours. */
export type TensorLike = Tensor | number | boolean;
export type AttrValue = number | boolean | string | bigint | readonly number[] | null | undefined;
export type Attrs = Record<string, AttrValue>;

// The safety net: a Tensor the program drops without dispose() frees its
// handle when the garbage collector collects it. dispose() unregisters.
const registry = new FinalizationRegistry<number>((h) => {
  try {
    maybeNative()?.free(h);
  } catch {
    // the process is exiting or the handle is already gone: nothing to do
  }
});

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
    native().free(h);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  get dtype(): DType {
    const h = this.handle; // throws once disposed, cached or not
    this.#dtype ??= dtypeFromCode(native().dtype(h));
    return this.#dtype;
  }

  get shape(): readonly number[] {
    const h = this.handle;
    this.#shape ??= Object.freeze(native().shape(h));
    return this.#shape;
  }

  get ndim(): number {
    return this.shape.length;
  }

  /** Number of elements. */
  get size(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }

  /** Strides in elements. */
  strides(): number[] {
    return native().strides(this.handle);
  }

  isContiguous(): boolean {
    return native().isContiguous(this.handle);
  }

  /** The device name: "cpu", "webgpu:0", ... */
  get device(): string {
    // Cached like dtype and shape: they never change for a handle, and every
    // FFI call costs (see README: koffi's own call stack makes Go look up the
    // thread's stack bounds on each call).
    const h = this.handle;
    this.#device ??= native().device(h);
    return this.#device;
  }

  /**
   * A copy on another device (a new handle to the same tensor when already
   * there). In the browser, a copy off the GPU must wait for it: use toAsync.
   */
  to(device: string): Tensor {
    return new Tensor(native().toDevice(this.handle, device));
  }

  /** to(), waiting for the device where it must (a WebGPU tensor to the CPU in the browser). */
  async toAsync(device: string): Promise<Tensor> {
    return new Tensor(await native().toDeviceAsync(this.handle, device));
  }

  /** A tensor sharing this one's data, cut from the autograd graph. */
  detach(): Tensor {
    return new Tensor(native().detach(this.handle));
  }

  /**
   * The elements in row-major order, copied into a new typed array (c64 and
   * c128: 2 * size values, each element's real then imaginary part). In the
   * browser a WebGPU tensor cannot be read synchronously: use data().
   */
  dataSync<D extends DType = DType>(): DataTypeMap[D] {
    const dt = this.dtype;
    const out = new DTYPES[dt].array(this.size * lanes(dt));
    native().readSync(this.handle, out);
    return out as DataTypeMap[D];
  }

  /**
   * The elements in row-major order as a typed array. For a dense CPU tensor the
   * array views the tensor's memory without a copy (through the ABI's DLPack
   * export; the memory stays valid while the array lives, even after dispose());
   * writing into it changes the tensor. Other tensors are copied. c64 and
   * c128 come as interleaved parts, as from dataSync().
   */
  async data<D extends DType = DType>(): Promise<DataTypeMap[D]> {
    const dt = this.dtype;
    const n = this.size;
    if (this.device === "cpu" && n > 0 && this.isContiguous()) {
      const v = native().view(this.handle, DTYPES[dt].code, n);
      if (v) return v as DataTypeMap[D];
    }
    const out = new DTYPES[dt].array(n * lanes(dt));
    await native().read(this.handle, out);
    return out as DataTypeMap[D];
  }

  /**
   * The single element as a number (bigint for i64 and u64, boolean for bool, {re, im}
   * for c64 and c128); synchronous like dataSync().
   */
  item(): number | bigint | boolean | Complex {
    if (this.size !== 1) throw new Error(`webtensor: item() needs one element, the tensor has ${this.size}`);
    return this.#element(this.dataSync());
  }

  /** item(), waiting for the device (what the browser needs for a WebGPU tensor). */
  async itemAsync(): Promise<number | bigint | boolean | Complex> {
    if (this.size !== 1) throw new Error(`webtensor: item() needs one element, the tensor has ${this.size}`);
    return this.#element(await this.data());
  }

  #element(a: TypedArray): number | bigint | boolean | Complex {
    const dt = this.dtype;
    if (DTYPES[dt].part) return { re: a[0] as number, im: a[1] as number };
    return dt === "bool" ? a[0] !== 0 : a[0]!;
  }

  toString(): string {
    if (this.isDisposed) return "Tensor(<disposed>)";
    return `Tensor(${this.dtype}, [${this.shape.join(", ")}], ${this.device})`;
  }

  // -- autograd

  get requiresGrad(): boolean {
    return native().requiresGrad(this.handle);
  }

  set requiresGrad(on: boolean) {
    native().setRequiresGrad(this.handle, on);
  }

  /** Backpropagates from this tensor (one element, or pass its gradient); gradients accumulate into the leaves. */
  backward(grad?: Tensor): void {
    native().backward(this.handle, grad ? grad.handle : 0);
  }

  /** backward() allowed to wait for the device (the browser's form for graphs with data-dependent backward ops). */
  async backwardAsync(grad?: Tensor): Promise<void> {
    await native().backwardAsync(this.handle, grad ? grad.handle : 0);
  }

  /** The accumulated gradient (a new tensor each time), or null when none. */
  get grad(): Tensor | null {
    const g = native().grad(this.handle);
    return g ? new Tensor(g) : null;
  }

  zeroGrad(): void {
    native().zeroGrad(this.handle);
  }
}

// ---- construction ----------------------------------------------------------------

export interface TensorOptions {
  dtype?: DType;
  device?: string;
  requiresGrad?: boolean;
}

type Nested = number | boolean | bigint | Nested[];

/** Flattens nested arrays into out, recording the shape; path is where data sits, for errors. */
function flatten(data: Nested, shape: number[], path: number[], out: (number | boolean | bigint)[]): void {
  const depth = path.length;
  if (!Array.isArray(data)) {
    if (depth !== shape.length) throw new Error(`webtensor: tensor(): ragged nested array at depth ${depth}`);
    checkElement(data, "", () => path);
    out.push(data);
    return;
  }
  if (depth === MAX_RANK) {
    throw new RangeError(`webtensor: tensor(): arrays nested more than ${MAX_RANK} deep, the most dimensions a tensor may have`);
  }
  if (depth === shape.length) shape.push(data.length);
  else if (shape[depth] !== data.length) throw new Error(`webtensor: tensor(): ragged nested array at depth ${depth}`);
  for (let i = 0; i < data.length; i++) {
    path.push(i);
    flatten(data[i]!, shape, path, out);
    path.pop();
  }
}

/** The index of flat element i in shape, for errors. */
function unravel(i: number, shape: readonly number[]): number[] {
  const index = new Array<number>(shape.length);
  for (let d = shape.length - 1; d >= 0; d--) {
    index[d] = i % shape[d]!;
    i = Math.floor(i / shape[d]!);
  }
  return index;
}

function fromFlat(vals: (number | boolean | bigint)[], dt: DType, shape: readonly number[]): TypedArray {
  const k = lanes(dt);
  const a = new DTYPES[dt].array(vals.length * k) as unknown as (number | bigint)[];
  const integer = !DTYPES[dt].floating && !DTYPES[dt].part && dt !== "bool";
  for (let i = 0; i < vals.length; i++) {
    const v = vals[i]!;
    if (integer) checkElement(v, dt, () => unravel(i, shape));
    // Numbers given for a complex dtype are real parts, as torch.tensor([1.0], dtype=complex64) reads them.
    if (k === 2) a[2 * i] = Number(v);
    else if (dt === "bool") a[i] = v ? 1 : 0; // truthiness, as NumPy's astype(bool): a bool byte is 0 or 1
    else if (dt === "i64" || dt === "u64") a[i] = typeof v === "bigint" ? v : BigInt(Math.trunc(Number(v)));
    else a[i] = Number(v);
  }
  return a as unknown as TypedArray;
}

/**
 * The dtype a typed array given to what() holds: dtype when given (which
 * the array must hold: a Float32Array holds f32 or c64's parts, a
 * Uint8Array u8 or bool, a Uint16Array u16 or f16 or bf16 bits), else the array's.
 */
function arrayDType(what: string, data: TypedArray, dtype: DType | undefined): DType {
  const dt = dtype !== undefined ? toDType(dtype) : dtypeOfArray(data);
  if (data instanceof Uint16Array && (dt === "f16" || dt === "bf16" || dt === "u16")) return dt;
  const natural = dtypeOfArray(data);
  if (natural !== dt && !(dt === "bool" && natural === "u8") && DTYPES[dt].part !== natural) {
    const holds = DTYPES[dt].part ? `${DTYPES[dt].part} (the parts of ${dt})` : dt;
    throw new TypeError(`webtensor: ${what}: a ${data.constructor.name} holds ${natural}, not ${holds}; convert it first`);
  }
  return dt;
}

/** The shape of a typed array of dtype dt given to what(): shape, checked against the array's length, or 1-d. */
function arrayShape(what: string, data: TypedArray, dt: DType, shape: readonly number[] | undefined): readonly number[] {
  const k = lanes(dt);
  if (data.length % k !== 0) {
    throw new Error(`webtensor: ${what}: a ${dt} array holds real and imaginary parts interleaved, ${data.length} values are not pairs`);
  }
  shape ??= [data.length / k];
  checkShape(shape);
  const numel = shape.reduce((a, b) => a * b, 1);
  if (numel * k !== data.length) {
    const noun = what === "fromArray()" ? "array" : "data";
    const has = k === 2 ? `${data.length} values (${data.length / 2} complex)` : `${data.length}`;
    throw new Error(`webtensor: ${what}: shape [${shape.join(", ")}] holds ${numel} elements, the ${noun} has ${has}`);
  }
  return shape;
}

/** Checks the values of creation options (their keys are checked by checkOptions). */
function checkCreation(what: string, options: { device?: unknown; requiresGrad?: unknown }): void {
  if (options.device !== undefined && options.device !== null && typeof options.device !== "string") {
    throw new TypeError(`webtensor: ${what}: device is a string such as "cpu" or "webgpu", got ${describe(options.device)}`);
  }
  if (options.requiresGrad !== undefined && typeof options.requiresGrad !== "boolean") {
    throw new TypeError(`webtensor: ${what}: requiresGrad is a boolean, got ${describe(options.requiresGrad)}`);
  }
}

/**
 * A new tensor holding a copy of data: a typed array (with a shape; default:
 * 1-d), nested arrays of numbers/booleans, or a scalar. The copy is the ABI's
 * wt_tensor_from_data; the data's dtype is the typed array's unless options say.
 * A c64 (c128) tensor comes from a Float32Array (Float64Array) of its parts
 * interleaved, real first: 2 * numel values; nested numbers given with a
 * complex dtype are real parts.
 */
export function tensor(data: TypedArray | Nested, shape?: readonly number[], options: TensorOptions = {}): Tensor {
  const rt = native();
  checkOptions("tensor()", options, ["dtype", "device", "requiresGrad"]);
  checkCreation("tensor()", options);
  let arr: TypedArray;
  let dt: DType;
  if (ArrayBuffer.isView(data)) {
    arr = data as TypedArray;
    dt = arrayDType("tensor()", arr, options.dtype);
    shape = arrayShape("tensor()", arr, dt, shape);
  } else {
    const flat: (number | boolean | bigint)[] = [];
    const inferred: number[] = [];
    flatten(data, inferred, [], flat);
    dt = options.dtype !== undefined ? toDType(options.dtype) :
      flat.length && flat.every((v) => typeof v === "boolean") ? "bool" :
      flat.length && flat.every((v) => typeof v === "bigint") ? "i64" : "f32";
    arr = fromFlat(flat, dt, inferred);
    shape = arrayShape("tensor()", arr, dt, shape ?? inferred);
  }
  const t = new Tensor(rt.fromData(arr, DTYPES[dt].code, shape, options.device ?? null));
  if (options.requiresGrad) t.requiresGrad = true;
  return t;
}

/**
 * A CPU tensor that shares a typed array's memory, as torch.from_numpy
 * shares a NumPy array's: no copy, and writes through either side are seen
 * by the other. The package keeps the array alive until the runtime has
 * let go of it (after every tensor, view and result sharing it is gone),
 * and pins its ArrayBuffer (Node): from then on postMessage and
 * structuredClone copy it instead of transferring it, and transfer() throws
 * while the tensor uses it, since detaching it would free the tensor's
 * memory. In the browser the WebAssembly module has its own memory, and a
 * resizable ArrayBuffer could shrink: those are copied.
 * f16 and bf16 come as raw bits in a Uint16Array and need {dtype}; c64 and
 * c128 as a Float32Array or Float64Array of interleaved parts, with {dtype}.
 */
export function fromArray(data: TypedArray, shape?: readonly number[], options: { dtype?: DType; requiresGrad?: boolean } = {}): Tensor {
  const rt = native();
  if (!ArrayBuffer.isView(data)) throw new TypeError(`webtensor: fromArray() takes a typed array, got ${describe(data)}`);
  checkOptions("fromArray()", options, ["dtype", "requiresGrad"]);
  checkCreation("fromArray()", options);
  const dt = arrayDType("fromArray()", data, options.dtype);
  shape = arrayShape("fromArray()", data, dt, shape);
  const h = rt.fromHostBorrowed(data, DTYPES[dt].code, shape);
  const t = new Tensor(h ?? rt.fromData(data, DTYPES[dt].code, shape, "cpu"));
  if (options.requiresGrad) t.requiresGrad = true;
  return t;
}

/** Typed arrays lent by fromArray that the runtime still uses (Node; for leak checks). Runs a collection first. */
export function lentArrays(): number {
  return native().lentArrays();
}

/**
 * A 0-d tensor for a JS number next to `ref`: ref's dtype when it holds x
 * without losing its kind (a complex ref holds any number, as x + 0i).
 */
function scalarLike(x: number | boolean, ref: Tensor | undefined): Tensor {
  const device = ref?.device;
  if (typeof x === "boolean") return tensor([x], [], { dtype: "bool", device });
  if (ref) {
    const dt = ref.dtype;
    if (DTYPES[dt].floating || DTYPES[dt].part || (Number.isInteger(x) && dt !== "bool")) return tensor([x], [], { dtype: dt, device });
  }
  return tensor([x], [], { dtype: "f32", device });
}

// ---- ops by name -----------------------------------------------------------------

interface OpSpec {
  name: string;
  attrs: { name: string; kind: AttrKind }[];
}
let specs: Map<string, OpSpec> | null = null;

/** The op manifest (every op, its inputs, attributes, dtypes and backends) from the loaded library. */
export function manifest(): { version: number; ops: OpSpec[] } {
  return JSON.parse(native().manifest());
}

const kindsCache = new Map<string, Map<string, AttrKind> | null>();

function attrKinds(op: string): Map<string, AttrKind> | null {
  let k = kindsCache.get(op);
  if (k === undefined) {
    specs ??= new Map(manifest().ops.map((o) => [o.name, o]));
    const s = specs.get(op);
    k = s ? new Map(s.attrs.map((a) => [a.name, a.kind])) : null;
    if (s) kindsCache.set(op, k); // plugin ops may appear later: not cached while unknown
  }
  return k;
}

/** Forgets the manifest (after a plugin registers new ops). */
export function refreshManifest(): void {
  specs = null;
  kindsCache.clear();
}

/** Guess an attribute's kind from its value (ops missing from the manifest, e.g. plugin ops). */
function guessKind(v: AttrValue): AttrKind {
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "string";
  if (typeof v === "bigint") return "int";
  if (Array.isArray(v)) return v.every((x) => Number.isInteger(x)) ? "ints" : "floats";
  return Number.isInteger(v) ? "int" : "float";
}

function attrEntry(op: string, name: string, kind: AttrKind, v: AttrValue): AttrEntry {
  const bad = (want: string) => new TypeError(`webtensor: ${op}: attribute ${name} is ${want}, got ${describe(v)}`);
  const code = ATTR_KIND[kind];
  switch (kind) {
    case "int":
      if (typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v))) return [name, code, v];
      throw bad("an integer");
    case "float":
      if (typeof v !== "number") throw bad("a number");
      return [name, code, v];
    case "bool":
      if (typeof v !== "boolean") throw bad("a boolean");
      return [name, code, v];
    case "string":
      if (typeof v !== "string") throw bad("a string");
      return [name, code, v];
    case "dtype":
      return [name, code, DTYPES[toDType(v)].code];
    case "ints": {
      const xs = typeof v === "number" ? [v] : v;
      if (!Array.isArray(xs) || !xs.every((x) => Number.isInteger(x))) throw bad("an array of integers");
      return [name, code, xs as number[]];
    }
    case "floats": {
      const xs = typeof v === "number" ? [v] : v;
      if (!Array.isArray(xs) || !xs.every((x) => typeof x === "number")) throw bad("an array of numbers");
      return [name, code, xs as number[]];
    }
  }
}

interface Prepared {
  handles: number[];
  entries: AttrEntry[];
  temps: Tensor[];
}

/** Checks the attributes against the manifest and turns the inputs into handles (numbers into 0-d temporaries). */
function prepare(name: string, inputs: readonly (TensorLike | null | undefined)[], attrs: Attrs): Prepared {
  const kinds = attrKinds(name);
  const entries: AttrEntry[] = [];
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined) continue;
    let kind = kinds?.get(k);
    if (kinds && !kind) {
      const known = [...kinds.keys()].join(", ") || "none";
      throw new TypeError(`webtensor: op ${name} has no attribute ${k} (attributes: ${known})`);
    }
    kind ??= guessKind(v);
    if (k === "shape" && kind === "ints" && Array.isArray(v)) checkRank(v, `${name}: attribute shape`);
    entries.push(attrEntry(name, k, kind, v));
  }
  const ref = inputs.find((x): x is Tensor => x instanceof Tensor);
  const temps: Tensor[] = [];
  try {
    const handles = inputs.map((x, i) => {
      if (x instanceof Tensor) return x.handle;
      if (x === null || x === undefined) return 0;
      if (typeof x === "number" || typeof x === "boolean") {
        const t = scalarLike(x, ref);
        temps.push(t);
        return t.handle;
      }
      throw new TypeError(`webtensor: ${name}: input ${i} is not a tensor or a number: ${String(x)}`);
    });
    return { handles, entries, temps };
  } catch (e) {
    for (const t of temps) t.dispose();
    throw e;
  }
}

/**
 * Calls the registry op `name` (built-in or plugin) and returns all its
 * outputs. inputs: tensors, numbers (0-d tensors like their neighbours) or
 * null for an absent optional input; attrs: by name, null/undefined left out.
 * In the browser an op that must read GPU memory to go on (an output shape
 * that depends on the data, such as nonzero) throws a WebtensorError with
 * needsAsync set: call it through opAsync.
 */
export function op(name: string, inputs: readonly (TensorLike | null | undefined)[] = [], attrs: Attrs = {}): Tensor[] {
  const rt = native();
  const p = prepare(name, inputs, attrs);
  try {
    return rt.op(name, p.handles, p.entries).map((h) => new Tensor(h));
  } finally {
    for (const t of p.temps) t.dispose();
  }
}

/**
 * op() allowed to wait for the device: what the browser needs for ops that
 * read GPU memory to go on. In Node it is op() in a promise. Tensors it makes
 * do not join an enclosing tidy() (which cannot span an await).
 */
export async function opAsync(name: string, inputs: readonly (TensorLike | null | undefined)[] = [], attrs: Attrs = {}): Promise<Tensor[]> {
  const rt = native();
  const p = prepare(name, inputs, attrs);
  try {
    const hs = await rt.opAsync(name, p.handles, p.entries);
    return hs.map((h) => new Tensor(h));
  } finally {
    for (const t of p.temps) t.dispose();
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

/**
 * A scope, Python's `with wt.scope() as s:`: every tensor made while it is
 * open is disposed when it closes, except those passed to keep() (which
 * then belong to the enclosing scope or tidy). `using s = wt.scope();`
 * closes it at the end of the block; otherwise call close() in a finally.
 * Scopes and tidy() nest: close the innermost first.
 */
export class Scope {
  readonly #made = new Set<Tensor>();
  readonly #kept = new Set<Tensor>();
  #open = true;

  /** @internal use scope() */
  constructor() {
    scopes.push(this.#made);
  }

  /** Keeps t past close(); returns it. */
  keep<T extends Tensor>(t: T): T {
    this.#kept.add(t);
    return t;
  }

  close(): void {
    if (!this.#open) return;
    if (scopes[scopes.length - 1] !== this.#made) throw new Error("webtensor: scope closed while an inner scope or tidy() is open");
    this.#open = false;
    scopes.pop();
    const outer = scopes[scopes.length - 1];
    for (const t of this.#made) {
      if (!this.#kept.has(t)) t.dispose();
      else outer?.add(t);
    }
    this.#made.clear();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * @internal Takes t out of every open tidy() and scope(): state that must
 * outlive them (a module's parameters and buffers), as Python's modules
 * adopt theirs.
 */
export function unscope(t: Tensor): void {
  for (const s of scopes) s.delete(t);
}

/** Opens a Scope (see there). */
export function scope(): Scope {
  return new Scope();
}

/** Whether x is a webtensor Tensor (torch.is_tensor). */
export function isTensor(x: unknown): x is Tensor {
  return x instanceof Tensor;
}

/**
 * Runs the registry op `name` (built-in or a plugin's) as Python's wt.call
 * does: one output comes back as a Tensor, several as an array. op() always
 * returns the array.
 */
export function call(name: string, inputs: readonly (TensorLike | null | undefined)[] = [], attrs: Attrs = {}): Tensor | Tensor[] {
  const outs = op(name, inputs, attrs);
  return outs.length === 1 ? outs[0]! : outs;
}

/**
 * Waits for every op queued on device (WebGPU, CUDA; the CPU has no queue)
 * and rejects with a check a kernel failed since the last wait (an index
 * out of range).
 */
export async function synchronize(device: string = defaultDevice()): Promise<void> {
  await native().deviceSync(device);
}

/** Disposes every tensor in a value (tensor, arrays or objects of them). */
export function dispose(x: unknown): void {
  const s = new Set<Tensor>();
  collect(x, s);
  for (const t of s) t.dispose();
}

/** Runs fn with autograd recording off (process-wide, as in the ABI). */
export function noGrad<T>(fn: () => T): T {
  const rt = native();
  rt.noGradEnter();
  try {
    return fn();
  } finally {
    rt.noGradExit();
  }
}

/** Resets the global Philox generator: the same seed gives the same random tensors in every SDK. */
export function manualSeed(seed: number | bigint): void {
  native().manualSeed(BigInt.asUintN(64, BigInt(seed)));
}

/** Number of live native tensor handles in the process (for leak checks). */
export function liveTensors(): number {
  return native().liveTensors();
}

/** Number of DLPack exports (arrays from data()) whose memory is still held. */
export function liveDLPackExports(): number {
  return native().liveDLPackExports();
}

export function version(): string {
  return native().version();
}

/** The devices whose backend opens here, best first ("cpu", "webgpu:0", ...). */
export function devices(): string[] {
  return native().devices();
}

/**
 * One entry of fallbacks(): calls of an op on a device that ran on the CPU
 * instead (kind "cpu": the device has no kernel for it), or whose device
 * kernel did declared work on the host (kind "host", reason saying what;
 * docs/ops.md lists those).
 */
export interface Fallback {
  readonly device: string;
  readonly op: string;
  readonly count: number;
  readonly kind: "cpu" | "host";
  readonly reason?: string;
}

/**
 * The op calls that ran on the CPU instead of their device, and those whose
 * device kernel did host-side work, since the start or the last reset;
 * reset clears the counts after reading them.
 */
export function fallbacks(reset = false): Fallback[] {
  const raw = JSON.parse(native().fallbacks(reset)) as Array<Omit<Fallback, "kind"> & { kind?: Fallback["kind"] }>;
  // Libraries before the kind field counted CPU fallbacks only.
  return raw.map((f) => Object.freeze({ ...f, kind: f.kind ?? "cpu" }));
}

/**
 * Records every op call of fn (op, device, shapes, dtypes, bytes, time,
 * device memory) and returns the Chrome trace as JSON text, which Perfetto
 * opens and `webtensor flame` draws; sync waits for the device after each
 * op so GPU ops carry their execution time. The recording is the runtime's
 * (the C ABI's wt_profile_*), the same in every SDK.
 */
export async function profile(fn: () => unknown | Promise<unknown>, opts: { sync?: boolean } = {}): Promise<string> {
  const b = native();
  b.profileStart(opts.sync ? 1 : 0);
  try {
    await fn();
  } finally {
    b.profileStop();
  }
  return b.profileJSON();
}

/**
 * Sets how many threads the CPU backend's kernels use, like
 * torch.set_num_threads; n <= 0 restores the default (the machine's cores,
 * or WEBTENSOR_NUM_THREADS). The browser build runs on one thread.
 */
export function setNumThreads(n: number): void {
  if (!Number.isInteger(n)) throw new TypeError(`webtensor: setNumThreads needs an integer, got ${n}`);
  native().setNumThreads(n);
}

/** The threads a CPU op may use now. */
export function getNumThreads(): number {
  return native().getNumThreads();
}

export function defaultDevice(): string {
  return native().defaultDevice();
}

export function setDefaultDevice(device: string): void {
  native().setDefaultDevice(device);
}

/** The device new tensors go to ("webgpu:0" when the runtime uses the GPU, else "cpu"). */
export function device(): string {
  return native().defaultDevice();
}

/** A loaded WebAssembly plugin: its ops run like built-in ones (wt.op works too, by full name). */
export class Plugin {
  /** Full op names, "<plugin>.<op>". */
  readonly ops: readonly string[];

  /** @internal loadPlugin() and loadPluginBytes() make them. */
  constructor(readonly name: string, ops: readonly string[]) {
    this.ops = Object.freeze([...ops]);
    Object.freeze(this);
  }

  /** Calls one of the plugin's ops by its short or full name; returns every output. */
  call(o: string, inputs: readonly (TensorLike | null | undefined)[], attrs: Attrs = {}): Tensor[] {
    const full = o.includes(".") ? o : `${this.name}.${o}`;
    if (!this.ops.includes(full)) throw new Error(`webtensor: plugin ${this.name} has no op ${o} (ops: ${this.ops.join(", ")})`);
    return op(full, inputs, attrs);
  }
}

/** One kernel-variant decision of a device's tuner (deviceTuning). */
export interface TuningDecision {
  /** The variant in use. */
  readonly variant: string;
  /** Each variant measured, in nanoseconds. */
  readonly timings_ns?: Readonly<Record<string, number>>;
  /** When a tuning policy was asked: its name, what it proposed and why, and whether the proposal won. */
  readonly policy?: string;
  readonly proposed?: string;
  readonly reason?: string;
  readonly kept?: boolean;
  readonly error?: string;
}

/**
 * Makes the WebGPU tuner of every device ask a loaded plugin's tuning policy
 * which kernel variant to try (the proposal is still timed and kept only when
 * faster); null goes back to timing every variant. `policy` names one of the
 * module's policies when it has several. Node only.
 */
export function setTuningPolicy(plugin: Plugin | null, policy = ""): void {
  native().setTuningPolicy(plugin ? plugin.name : "", policy);
}

/** A device's kernel-variant decisions, keyed "op|class"; {} for a device that tunes nothing (the CPU). */
export function deviceTuning(device = "webgpu"): Record<string, TuningDecision> {
  return JSON.parse(native().deviceTuning(device)) as Record<string, TuningDecision>;
}

/** Loads a plugin module (bytes of a .wasm built for plugins-wasm/ABI.md) into the runtime's sandbox. */
export function loadPluginBytes(wasm: Uint8Array, label = "plugin.wasm"): Plugin {
  const { name, ops } = native().loadPlugin(wasm, label);
  refreshManifest();
  return new Plugin(name, ops);
}
