// Datasets and a DataLoader with PyTorch's semantics: the readers (.npy,
// .npz, safetensors, Parquet, image folders), the seeded shuffle, the worker
// goroutines and the batch collation are the runtime's (the Go package data,
// through wt_call's dataset.*, loader.* and data.permutation,
// docs/calls.md), the same as Python's wt.data; this file only wraps handles
// and iterates. A dataset written in JavaScript (a Dataset subclass) is read
// here in the order the runtime's permutation gives, as Python reads its
// own, and batched by defaultCollate (the stack op) or the caller's collate
// function.

import { native } from "./binding.js";
import { Tensor, tensor } from "./core.js";
import { registry } from "./objects.js";
import { stack } from "./ops.gen.js";

/**
 * A map-style dataset written in JavaScript (torch.utils.data.Dataset):
 * subclass it with `length` and `get(index)`, which may return a promise
 * (a fetch). DataLoader reads it in its shuffle order.
 */
export abstract class Dataset<T = unknown> {
  abstract readonly length: number;
  abstract get(index: number): T | Promise<T>;
}

interface Info {
  len: number;
  fields: { name: string; dtype: string; shape: number[] }[];
  classes?: string[];
}

const handles = (hs: number[]) => hs.map((h) => new Tensor(h));

/** A dataset the runtime reads: records are arrays of Tensors, one per field. `dispose()` frees it (the GC does too). */
export class NativeDataset extends Dataset<Tensor[]> {
  #h: number;
  readonly length: number;
  readonly fields: readonly string[];
  readonly dtypes: readonly string[];
  /** One record's shape per field. */
  readonly shapes: readonly (readonly number[])[];
  /** An image folder's class names, a label indexing them. */
  readonly classes: readonly string[] | null;

  /** @internal */
  constructor(handle: number) {
    super();
    this.#h = handle;
    registry.register(this, ["dataset", handle], this);
    const info = native().call<Info>("dataset.info", handle);
    this.length = info.len;
    this.fields = info.fields.map((f) => f.name);
    this.dtypes = info.fields.map((f) => f.dtype);
    this.shapes = info.fields.map((f) => f.shape);
    this.classes = info.classes ?? null;
  }

  /** @internal */
  get handle(): number {
    if (!this.#h) throw new Error("webtensor: dataset used after dispose()");
    return this.#h;
  }

  /** Record index (negative counts from the end), one Tensor per field, on device (default: the default device). */
  async get(index: number, device?: string): Promise<Tensor[]> {
    return handles(await native().callAsync<number[]>("dataset.get", this.handle, { index, device }));
  }

  /** Frees the dataset; loaders made from it keep it alive. Disposing twice is harmless. */
  dispose(): void {
    const h = this.#h;
    this.#h = 0;
    if (h) {
      registry.unregister(this);
      native().call("dataset.free", h);
    }
  }
}

/** dataset.open: files spec names, or with data one file's bytes (a page has only these). */
const open = (spec: Record<string, unknown>, data?: Uint8Array) =>
  new NativeDataset(native().call<number>("dataset.open", 0, { spec }, data));

/** NumPy .npy files (Node), one field per file named by its stem; record i is row i of every file. */
export function npy(...paths: string[]): NativeDataset {
  return open({ format: "npy", paths });
}

/** The arrays keys of an .npz archive (Node; default: all, in archive order). */
export function npz(path: string, keys?: readonly string[]): NativeDataset {
  return open({ format: "npz", path, keys });
}

/** The tensors keys of a safetensors file (Node; default: all), a record being one index along their first dim. */
export function safetensors(path: string, keys?: readonly string[]): NativeDataset {
  return open({ format: "safetensors", path, keys });
}

/** The columns of a Parquet file (Node; default: all): numbers and equal-length lists of numbers, no nulls. */
export function parquet(path: string, columns?: readonly string[]): NativeDataset {
  return open({ format: "parquet", path, keys: columns });
}

/** torchvision's ImageFolder (Node): root/CLASS/*.png|jpg as (image u8 [C, H, W], label i64). */
export function imageFolder(root: string, options: { mode?: "rgb" | "gray"; size?: [number, number] } = {}): NativeDataset {
  return open({ format: "images", path: root, ...options });
}

/** A dataset from one file's bytes (npy, npz, safetensors or parquet): the browser's way in. */
export function fromBytes(format: string, bytes: Uint8Array, options: { keys?: readonly string[]; name?: string } = {}): NativeDataset {
  return open({ format, keys: options.keys, name: options.name ?? format }, bytes);
}

/** PyTorch's TensorDataset: record i is t[i] of each tensor; the values are copied into the runtime. */
export function TensorDataset(tensors: readonly Tensor[], names?: readonly string[]): NativeDataset {
  return new NativeDataset(native().call<number>("dataset.from_tensors", 0, { tensors: tensors.map((t) => t.handle), names }));
}

/** The record order of shuffled epoch `epoch`: what every loader with this seed reads, in every SDK. */
export function permutation(n: number, seed = 0, epoch = 0): number[] {
  return native().call<number[]>("data.permutation", 0, { n, seed, epoch });
}

/**
 * Stacks samples into a batch as PyTorch's default_collate: Tensors stack
 * along a new first dim (the stack op), numbers become a 1-d tensor (i64
 * when all are integers, as Python ints are, else f32), booleans a bool one,
 * bigints an i64 one, arrays and objects collate field by field, anything
 * else (strings) stays an array.
 */
export function defaultCollate(samples: readonly unknown[]): unknown {
  if (samples.length === 0) throw new Error("webtensor: defaultCollate: no samples");
  const first = samples[0];
  if (first instanceof Tensor) return stack(samples as Tensor[]);
  if (typeof first === "number") {
    const xs = samples as number[];
    return tensor(xs, undefined, { dtype: xs.every((x) => Number.isInteger(x)) ? "i64" : "f32" });
  }
  if (typeof first === "boolean" || typeof first === "bigint") return tensor(samples as boolean[]);
  if (Array.isArray(first)) {
    const n = first.length;
    if (samples.some((s) => !Array.isArray(s) || s.length !== n)) throw new Error("webtensor: defaultCollate: samples have different lengths");
    return Array.from({ length: n }, (_, i) => defaultCollate(samples.map((s) => (s as unknown[])[i])));
  }
  if (first !== null && typeof first === "object" && Object.getPrototypeOf(first) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(first)) out[k] = defaultCollate(samples.map((s) => (s as Record<string, unknown>)[k]));
    return out;
  }
  return [...samples];
}

export interface LoaderOptions<T = unknown> {
  batchSize?: number;
  shuffle?: boolean;
  seed?: number;
  dropLast?: boolean;
  /** Worker goroutines (a NativeDataset); for a JavaScript dataset, batches read concurrently (0: one at a time). */
  numWorkers?: number;
  /** Batches each worker reads ahead. */
  prefetchFactor?: number;
  /** Keep every record as its first read gave it (the dataset must fit 1 GiB): later epochs skip decoding. */
  cache?: boolean;
  device?: string;
  /** Turns a batch's samples into the batch (default: defaultCollate). With it, a NativeDataset is read record by record. */
  collateFn?: (samples: T[]) => unknown;
}

/**
 * PyTorch's DataLoader: `for await (const [x, y] of loader)` reads one
 * epoch, each pass the next epoch (its own shuffle), or the one setEpoch()
 * names. A NativeDataset is loaded by the runtime (its workers, its
 * collation); a JavaScript Dataset is read here, in the same order for the
 * same seed.
 */
export class DataLoader<T = Tensor[]> {
  #h = 0;
  #epoch = 0;
  readonly dataset: Dataset<unknown>;
  readonly #o: LoaderOptions<any>;

  constructor(dataset: Dataset<unknown>, options: LoaderOptions<any> = {}) {
    this.dataset = dataset;
    const o = (this.#o = options);
    const batch = o.batchSize ?? 1;
    if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`webtensor: batchSize must be an integer >= 1, got ${batch}`);
    if (dataset instanceof NativeDataset && !o.collateFn) {
      const options = {
        batch_size: o.batchSize, shuffle: o.shuffle, seed: o.seed, drop_last: o.dropLast,
        workers: o.numWorkers, prefetch: o.prefetchFactor, cache: o.cache, device: o.device,
      };
      this.#h = native().call<number>("loader.new", 0, { dataset: dataset.handle, options });
      registry.register(this, ["loader", this.#h], this);
    } else if (!(dataset instanceof Dataset)) {
      throw new TypeError("webtensor: DataLoader takes a NativeDataset or a Dataset subclass");
    }
  }

  /** Batches per epoch. */
  get length(): number {
    if (this.#h) return native().call<number>("loader.len", this.#h);
    const n = this.dataset.length;
    const b = this.#o.batchSize ?? 1;
    return this.#o.dropLast ? Math.floor(n / b) : Math.ceil(n / b);
  }

  /** The epoch the next pass reads; passes count on from it. */
  setEpoch(epoch: number): void {
    if (epoch < 0 || !Number.isInteger(epoch)) throw new RangeError(`webtensor: epoch must be a non-negative integer, got ${epoch}`);
    this.#epoch = epoch;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    const epoch = this.#epoch++;
    if (!(this.dataset instanceof NativeDataset) || this.#o.collateFn) {
      yield* this.#read(epoch) as AsyncGenerator<T>;
      return;
    }
    const h = this.#live();
    native().call("loader.epoch", h, { epoch });
    for (;;) {
      const hs = await native().callAsync<number[]>("loader.next", h);
      if (hs.length === 0) return;
      yield handles(hs) as T;
    }
  }

  /** One epoch of a dataset read here: its batches in permutation order, up to numWorkers·prefetchFactor in flight. */
  async *#read(epoch: number): AsyncGenerator<unknown> {
    const o = this.#o;
    const n = this.dataset.length;
    const size = o.batchSize ?? 1;
    const order = o.shuffle ? permutation(n, o.seed ?? 0, epoch) : Array.from({ length: n }, (_, i) => i);
    const end = o.dropLast ? n - (n % size) : n;
    const batches: number[][] = [];
    for (let i = 0; i < end; i += size) batches.push(order.slice(i, i + size));
    const window = Math.max(1, (o.numWorkers ?? 0) * (o.prefetchFactor ?? 2));
    const pending: Promise<unknown>[] = [];
    let next = 0;
    while (next < batches.length || pending.length) {
      while (next < batches.length && pending.length < window) pending.push(this.#batch(batches[next++]!));
      yield await pending.shift();
    }
  }

  async #batch(idx: number[]): Promise<unknown> {
    const ds = this.dataset;
    const native = ds instanceof NativeDataset;
    const samples = await Promise.all(idx.map((i) => (native ? ds.get(i, this.#o.device) : ds.get(i))));
    const batch = (this.#o.collateFn ?? defaultCollate)(samples);
    if (native) { // the records' tensors are this loader's: free those the batch does not hold
      const kept = new Set<unknown>();
      const walk = (x: unknown): void => {
        if (x instanceof Tensor) kept.add(x);
        else if (Array.isArray(x)) x.forEach(walk);
        else if (x && typeof x === "object") Object.values(x).forEach(walk);
      };
      walk(batch);
      for (const t of (samples as Tensor[][]).flat()) if (!kept.has(t)) t.dispose();
    }
    return batch;
  }

  #live(): number {
    if (!this.#h) throw new Error("webtensor: DataLoader used after dispose()");
    return this.#h;
  }

  /** @internal */
  get handle(): number {
    return this.#live();
  }

  /** Stops the runtime's workers; batches already read stay valid. Disposing twice is harmless. */
  dispose(): void {
    const h = this.#h;
    this.#h = 0;
    if (h) {
      registry.unregister(this);
      native().call("loader.free", h);
    }
  }
}
