// Package data feeds training loops: datasets of fixed-shape records and a
// loader that batches them, with PyTorch's Dataset/DataLoader semantics.
//
// A Dataset is a length and a list of fields (name, dtype, one record's
// shape); Read copies record i's values into caller-owned bytes, so a
// batch is built by reading records straight into the batch's memory and
// no per-record tensor exists. The readers cover tensors in memory
// (FromTensors), NumPy .npy and .npz, safetensors, Parquet (through Apache
// Arrow's Go module) and image folders (PNG and JPEG, a class per folder).
//
// A Loader batches a Dataset (drop_last as in PyTorch), shuffles with a
// permutation that depends only on (seed, epoch, length), so every SDK and
// every run sees the same order, reads batches on worker goroutines a set
// number of batches ahead, and stacks each field into one tensor per batch
// on the chosen device. Every SDK's loader is this one, through the C ABI.
//
// How a loader reads - workers, prefetch depth, an in-memory cache of the
// records as first read (Options.Cache) - can change on a live loader
// (SetPipeline) without changing which records a batch holds or their
// order; package auto's data agent tunes it by measurement.
package data
