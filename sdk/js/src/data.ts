// Datasets and a DataLoader with PyTorch's semantics: the readers (.npy,
// .npz, safetensors, Parquet, image folders), the seeded shuffle, the worker
// goroutines and the batch collation are the runtime's (the Go package data,
// through the C ABI's wt_dataset_* and wt_loader_*), the same as Python's
// wt.data; this file only wraps handles and iterates.

import { maybeNative, native } from "./binding.js";
import { Tensor } from "./core.js";

interface Info {
  len: number;
  fields: { name: string; dtype: string; shape: number[] }[];
  classes?: string[];
}

const datasetRegistry = new FinalizationRegistry<number>((h) => {
  try {
    maybeNative()?.datasetFree(h);
  } catch {
    // already freed, or the runtime is going away
  }
});

const loaderRegistry = new FinalizationRegistry<number>((h) => {
  try {
    maybeNative()?.loaderFree(h);
  } catch {
    // already freed, or the runtime is going away
  }
});

/** A dataset the runtime reads: records are arrays of Tensors, one per field. `dispose()` frees it (the GC does too). */
export class NativeDataset {
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
    this.#h = handle;
    const info = JSON.parse(native().datasetInfo(handle)) as Info;
    this.length = info.len;
    this.fields = info.fields.map((f) => f.name);
    this.dtypes = info.fields.map((f) => f.dtype);
    this.shapes = info.fields.map((f) => f.shape);
    this.classes = info.classes ?? null;
    datasetRegistry.register(this, handle, this);
  }

  /** @internal */
  get handle(): number {
    if (!this.#h) throw new Error("webtensor: dataset used after dispose()");
    return this.#h;
  }

  /** Record index (negative counts from the end), one Tensor per field, on device (default: the default device). */
  async get(index: number, device?: string): Promise<Tensor[]> {
    const i = index < 0 ? index + this.length : index;
    const hs = await native().datasetGet(this.handle, i, device ?? null);
    return hs.map((h) => new Tensor(h));
  }

  /** Frees the dataset; loaders made from it keep it alive. Disposing twice is harmless. */
  dispose(): void {
    const h = this.#h;
    this.#h = 0;
    if (h) {
      datasetRegistry.unregister(this);
      native().datasetFree(h);
    }
  }
}

const open = (spec: Record<string, unknown>) => new NativeDataset(native().datasetOpen(JSON.stringify(spec)));

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
  const spec = JSON.stringify({ format, keys: options.keys, name: options.name ?? format });
  return new NativeDataset(native().datasetOpenBytes(spec, bytes));
}

/** PyTorch's TensorDataset: record i is t[i] of each tensor; the values are copied into the runtime. */
export function TensorDataset(tensors: readonly Tensor[], names?: readonly string[]): NativeDataset {
  return new NativeDataset(native().datasetFromTensors(tensors.map((t) => t.handle), names ?? null));
}

/** The record order of shuffled epoch `epoch`: what every loader with this seed reads, in every SDK. */
export function permutation(n: number, seed = 0, epoch = 0): number[] {
  return native().dataPermutation(n, seed, epoch);
}

export interface LoaderOptions {
  batchSize?: number;
  shuffle?: boolean;
  seed?: number;
  dropLast?: boolean;
  /** Worker goroutines; 0 reads each batch when asked for. */
  numWorkers?: number;
  /** Batches each worker reads ahead. */
  prefetchFactor?: number;
  /** Keep every record as its first read gave it (the dataset must fit 1 GiB): later epochs skip decoding. */
  cache?: boolean;
  device?: string;
}

/**
 * PyTorch's DataLoader over a NativeDataset: `for await (const [x, y] of loader)`
 * reads one epoch, each pass the next epoch (its own shuffle), or the one
 * setEpoch() names.
 */
export class DataLoader {
  #h: number;
  #epoch = 0;
  readonly dataset: NativeDataset;

  constructor(dataset: NativeDataset, options: LoaderOptions = {}) {
    this.dataset = dataset;
    const o = options;
    const json = JSON.stringify({
      batch_size: o.batchSize, shuffle: o.shuffle, seed: o.seed, drop_last: o.dropLast,
      workers: o.numWorkers, prefetch: o.prefetchFactor, cache: o.cache, device: o.device,
    });
    this.#h = native().loaderNew(dataset.handle, json);
    loaderRegistry.register(this, this.#h, this);
  }

  /** Batches per epoch. */
  get length(): number {
    return native().loaderLen(this.#live());
  }

  /** The epoch the next pass reads; passes count on from it. */
  setEpoch(epoch: number): void {
    if (epoch < 0 || !Number.isInteger(epoch)) throw new RangeError(`webtensor: epoch must be a non-negative integer, got ${epoch}`);
    this.#epoch = epoch;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Tensor[]> {
    const h = this.#live();
    native().loaderEpoch(h, this.#epoch++);
    for (;;) {
      const hs = await native().loaderNext(h);
      if (hs.length === 0) return;
      yield hs.map((x) => new Tensor(x));
    }
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
      loaderRegistry.unregister(this);
      native().loaderFree(h);
    }
  }
}
