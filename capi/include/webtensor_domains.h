/* webtensor_domains.h: the domain libraries' part of the C ABI: their
 * methods by name (wt_call: ONNX import, multimodal models, diffusion
 * pipelines, auto-agents; docs/calls.md lists them) and the datasets and
 * loaders. Include webtensor.h, which includes this inside its prototype
 * block; the conventions (statuses, handles, buffers, the wt_attr records)
 * are webtensor.h's. */
#ifndef WEBTENSOR_DOMAINS_H
#define WEBTENSOR_DOMAINS_H

#ifndef WEBTENSOR_H
#error "include webtensor.h, not webtensor_domains.h"
#endif

/* ---- Domain methods by name (abi/call.go) --------------------------------------- */

/* Run a domain library's method: target names it ("sentence_encoder.encode",
 * "whisper_stream.push", "video.uniform_frame_indices"; a wrong one is
 * WT_ERR_INVALID listing its kind's targets), self is the object's handle
 * (0 for a load or a plain function), args_json one JSON object of the
 * arguments by name (NULL or "": none; null means the default; tensors and
 * objects as their handles; an argument the method does not take is
 * WT_ERR_INVALID naming the ones it does) and data, nbytes the bytes a
 * loader reads (a tokenizer.json, a zip archive of a model folder; read
 * only during the call). Every argument is checked before any work starts.
 * The result is JSON (tensors and objects as new handles the caller owns),
 * kept behind out for wt_call_result_json (the buffer protocol of
 * wt_last_error; a call cannot be rerun to fill a larger buffer) until
 * wt_call_result_free. The targets and their arguments are listed in
 * docs/calls.md. */
int32_t wt_call(const char *target, int64_t self, const char *args_json, const void *data, size_t nbytes,
                wt_call_result *out);
int32_t wt_call_result_json(wt_call_result result, char *buf, size_t cap, size_t *needed);
int32_t wt_call_result_free(wt_call_result result);

/* ---- datasets and loaders (package data) ---------------------------------------- */

/* Open a built-in dataset; spec_json is {"format": F, ...} with F one of
 * "npy" ("path", or "paths": one .npy file per field, named by its stem),
 * "npz", "safetensors", "parquet" ("path"; "keys" picks and orders the
 * arrays or columns, default all), "images" ("path": a folder with a
 * subfolder per class of PNG/JPEG files; "mode": "rgb" or "gray"; "size":
 * [h, w] to resize to). A record is one index along every array's first
 * dim (a Parquet row; an image and its label). A missing or unreadable
 * file is WT_ERR_IO; a malformed one WT_ERR_INVALID naming it.
 * wt_dataset_open_bytes reads one file's bytes (copied; "name" labels it in
 * errors); an image folder has no such form. */
int32_t wt_dataset_open(const char *spec_json, wt_dataset *out);
int32_t wt_dataset_open_bytes(const char *spec_json, const void *buf, size_t nbytes, wt_dataset *out);
/* PyTorch's TensorDataset: record i is tensors[k][i] for every k, all of one
 * first dim; names (NULL: "0", "1", ...) name the fields. The values are
 * copied to host memory. */
int32_t wt_dataset_from_tensors(const wt_tensor *tensors, const char *const *names, int32_t n, wt_dataset *out);
/* Loaders made from a dataset keep it alive after it is freed. */
int32_t wt_dataset_free(wt_dataset dataset);
int32_t wt_dataset_len(wt_dataset dataset, int64_t *len);
/* {"len": 5, "fields": [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
 * "classes": ["cat", "dog"]}: shapes are one record's; classes only for an
 * image folder (a label indexes them). */
int32_t wt_dataset_info_json(wt_dataset dataset, char *buf, size_t cap, size_t *needed);
/* Record index as one new tensor per field, on device (NULL or "": the
 * default); out_cap below the field count is WT_ERR_BUFFER_TOO_SMALL. */
int32_t wt_dataset_get(wt_dataset dataset, int64_t index, const char *device, wt_tensor *outputs,
                       int32_t out_cap, int32_t *n_outputs);
/* A loader, PyTorch's DataLoader: options_json (NULL: defaults) holds
 * "batch_size" (1), "shuffle" (false), "seed" (0), "drop_last" (false),
 * "workers" (0: batches are read in wt_loader_next), "prefetch" (batches
 * each worker reads ahead, 2), "cache" (false: keep every record as first
 * read, if the dataset fits "cache_bytes", 1 GiB) and "device" (the
 * default device); unknown keys are WT_ERR_INVALID. A shuffled epoch's order is
 * wt_data_permutation(len, seed, epoch): the same in every SDK and for any
 * worker count. */
int32_t wt_loader_new(wt_dataset dataset, const char *options_json, wt_loader *out);
/* Stops the running epoch's workers; batches already returned stay valid. */
int32_t wt_loader_free(wt_loader loader);
/* Batches per epoch. */
int32_t wt_loader_len(wt_loader loader, int64_t *len);
/* Start epoch (its order, its workers), ending the one running. */
int32_t wt_loader_epoch(wt_loader loader, int64_t epoch);
/* The running epoch's next batch, one new tensor per field of shape
 * [batch, record shape...]; *n_outputs is 0 at the end of the epoch. A batch
 * that could not be read is WT_ERR_INVALID naming the file and the record
 * (the epoch goes on). out_cap below the field count is
 * WT_ERR_BUFFER_TOO_SMALL and no batch is taken. */
int32_t wt_loader_next(wt_loader loader, wt_tensor *outputs, int32_t out_cap, int32_t *n_outputs);
/* out[0..n) is the record order of shuffled epoch `epoch` (Fisher-Yates
 * over Philox4x32-10 keyed by seed): for datasets an SDK implements. */
int32_t wt_data_permutation(int64_t n, uint64_t seed, int64_t epoch, int64_t *out);

#endif /* WEBTENSOR_DOMAINS_H */
