/*
 * webtensor.h — the C ABI of the webtensor runtime (libwebtensor.so).
 *
 * Every SDK (Python, JavaScript on Node, Java) sits on this header. It is
 * small and stable: tensors are integer handles, every call returns a status,
 * and nothing the caller passes can crash the library.
 *
 * Conventions
 * - Status: every function that can fail returns int32_t: WT_OK (0) or one of
 *   the WT_ERR_* codes. On failure, wt_last_error() gives a message naming
 *   the problem and the values. Outputs are written only on success.
 * - Errors are per thread: wt_last_error() returns the message of the last
 *   failed call made *on the calling thread*. The pointer stays valid until
 *   that thread's next call into the library.
 * - Handles: wt_tensor is an opaque 64-bit integer; 0 is never a valid
 *   handle. A new handle has one reference; wt_tensor_retain adds one,
 *   wt_tensor_free drops one, and the tensor is gone when none remain. Using a
 *   freed or unknown handle returns WT_ERR_HANDLE — never undefined behaviour.
 * - Memory: the library never hands out pointers into memory the caller must
 *   free with free(); results are written into caller buffers. Functions that
 *   fill a buffer take its capacity and report the size needed: when the
 *   buffer is too small (or NULL with capacity 0) they return
 *   WT_ERR_BUFFER_TOO_SMALL and set *needed, so a caller can ask, allocate
 *   and call again. DLPack exports are the exception, with their own deleter.
 * - Limits: ndim is 0..64; each extent 0..2^40; the element count at most
 *   about 1.4e11. Beyond them, and for any other malformed value, the status
 *   is WT_ERR_INVALID; WT_ERR_OUT_OF_MEMORY means a valid allocation failed.
 *   A device name that parses but whose backend is absent is
 *   WT_ERR_UNSUPPORTED; a required op input passed as 0 is WT_ERR_INVALID.
 * - `needed` may be NULL. A NULL buffer with a non-zero capacity is
 *   WT_ERR_INVALID; a buffer that is merely too small is
 *   WT_ERR_BUFFER_TOO_SMALL (and *needed, where there is one, is set).
 * - Functions that return "a new handle" always return a new handle number,
 *   even when it refers to the same tensor as the input.
 * - Threads: every function may be called from any thread, concurrently.
 *   Tensors may be shared between threads; ops read their inputs only.
 *   The no-grad scope (wt_no_grad_enter/exit) belongs to the calling thread,
 *   like the last error: other threads keep recording for autograd.
 * - Strings are UTF-8 and NUL-terminated.
 */
#ifndef WEBTENSOR_H
#define WEBTENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WT_ABI_VERSION 1
#define WT_VERSION_STRING "0.1.0" /* kept equal to core.Version by a test */

/* Status codes. */
#define WT_OK 0
#define WT_ERR_INVALID 1          /* an argument is wrong: shape, dtype, attribute, op name, NULL pointer */
#define WT_ERR_HANDLE 2           /* unknown or already freed tensor handle */
#define WT_ERR_UNSUPPORTED 3      /* valid request the library cannot serve (device, dtype, DLPack layout) */
#define WT_ERR_OUT_OF_MEMORY 4    /* an allocation failed */
#define WT_ERR_BUFFER_TOO_SMALL 5 /* the caller's buffer is too small; *needed says how large */
#define WT_ERR_INTERNAL 6         /* a bug in webtensor (reported instead of crashing) */
#define WT_ERR_IO 7               /* the file system refused: a missing file or folder, permissions, a full disk */

/* Element types; the values match core.DType. */
typedef enum {
  WT_F32 = 1,
  WT_F16 = 2,
  WT_BF16 = 3,
  WT_F64 = 4,
  WT_I64 = 5,
  WT_I32 = 6,
  WT_U32 = 7,
  WT_I16 = 8,
  WT_I8 = 9,
  WT_U8 = 10,
  WT_BOOL = 11
} wt_dtype;

/* A tensor handle. 0 is never valid. */
typedef int64_t wt_tensor;
/* A captured graph (see wt_trace_begin); handles are never reused either. */
typedef int64_t wt_graph;
/* An optimiser (see wt_optimizer_new) and a state dict (see wt_state_new):
 * handles, never reused, like tensors'. */
typedef int64_t wt_optimizer;
typedef int64_t wt_state;
/* An imported ONNX model (see wt_onnx_load); handles are never reused. */
typedef int64_t wt_onnx;
/* The domain libraries' objects (see wt_tokenizer_load, wt_sentence_encoder_load,
 * wt_clip_load, wt_whisper_load, wt_timesformer_load, wt_conformer_load,
 * wt_diffusion_load); handles are never reused. */
typedef int64_t wt_tokenizer;
typedef int64_t wt_image_processor;
typedef int64_t wt_sentence_encoder;
typedef int64_t wt_clip;
typedef int64_t wt_whisper;
typedef int64_t wt_timesformer;
typedef int64_t wt_conformer;
typedef int64_t wt_diffusion;
/* A dataset and a data loader (see wt_dataset_open, wt_loader_new);
 * handles are never reused. */
typedef int64_t wt_dataset;
typedef int64_t wt_loader;

/* Attribute kinds for wt_op. */
typedef enum {
  WT_ATTR_INT = 1,    /* uses i */
  WT_ATTR_FLOAT = 2,  /* uses f */
  WT_ATTR_BOOL = 3,   /* uses i (0 or 1) */
  WT_ATTR_STRING = 4, /* uses s */
  WT_ATTR_INTS = 5,   /* uses ints[0..len) */
  WT_ATTR_FLOATS = 6, /* uses floats[0..len) */
  WT_ATTR_DTYPE = 7   /* uses i (a wt_dtype) */
} wt_attr_kind;

/* One named attribute of an op call. A flat struct (no unions) so that FFI
 * layers (ctypes, koffi, Java FFM) can build it field by field. */
typedef struct {
  const char *name;
  int32_t kind; /* a wt_attr_kind */
  int64_t i;
  double f;
  const char *s;
  const int64_t *ints;
  const double *floats;
  int64_t len;
} wt_attr;

/* The Go side of the library defines these functions with the same ABI but
 * without `const`; it sets WT_NO_PROTOTYPES to see only the types. */
#ifndef WT_NO_PROTOTYPES

/* ---- Version and build ---------------------------------------------------- */

/* The library version, e.g. "0.1.0" (static storage; never free). */
const char *wt_version(void);
/* The C ABI version (WT_ABI_VERSION of the library that is loaded). */
int32_t wt_abi_version(void);
/* Build information as a JSON object with the keys version, abi, go, commit,
 * os and arch. */
int32_t wt_build_info(char *buf, size_t cap, size_t *needed);
/* A short English name of a status code (static storage). */
const char *wt_status_string(int32_t status);
/* The message of the last failed call on this thread ("" when none). */
const char *wt_last_error(void);

/* ---- Devices --------------------------------------------------------------- */

/* Number of devices whose backend opens on this machine (the CPU at least). */
int32_t wt_device_count(int32_t *count);
/* Name of device i ("cpu", "webgpu:0", ...), best first. */
int32_t wt_device_name(int32_t index, char *buf, size_t cap, size_t *needed);
/* The device new tensors go to when none is named. */
int32_t wt_default_device(char *buf, size_t cap, size_t *needed);
/* Make `device` the default; fails if it does not open. */
int32_t wt_set_default_device(const char *device);
/* Wait until every op queued on `device` has finished. A check a kernel
 * failed since the last wait (an index out of range) is returned here. */
int32_t wt_device_sync(const char *device);
/* What `device` is and how it uses memory, as JSON: "device", "description",
 * "software", "fallbacks" (op calls that ran on the CPU instead), "memory"
 * (the caching allocator's counters, CPU and CUDA) and, for CUDA, "cuda"
 * (GPU, compute capability, driver and library versions),
 * "device_free_bytes", "device_total_bytes" and "allow_tf32". */
int32_t wt_device_info_json(const char *device, char *buf, size_t cap, size_t *needed);
/* The device's kernel-variant decisions as a JSON object: "op|class" to
 * {"variant", "timings_ns", and when a tuning policy was asked "policy",
 * "proposed", "reason", "kept"}; {} for a device that tunes nothing. */
int32_t wt_device_tuning_json(const char *device, char *buf, size_t cap, size_t *needed);
/* Give a device's cached, unused memory back (the CPU's and CUDA's caching
 * allocators keep freed blocks for reuse); tensors keep theirs. Other
 * devices: nothing to do. */
int32_t wt_device_empty_cache(const char *device);
/* Set a device option. "allow_tf32" (CUDA): 1 lets f32 matrix products use
 * TF32 tensor cores (off by default, so f32 means f32). */
int32_t wt_device_set_option(const char *device, const char *name, int64_t value);
/* The stream `device` queues its work on (CUDA: a CUstream; 0 elsewhere),
 * for DLPack's stream exchange: a producer asked to share memory with this
 * stream makes its pending writes visible to it. */
int32_t wt_device_stream(const char *device, uint64_t *stream);
/* How many threads the CPU backend's kernels use (torch.set_num_threads):
 * n <= 0 restores the default, GOMAXPROCS or WEBTENSOR_NUM_THREADS. Small
 * ops stay on the calling thread whatever the count. */
int32_t wt_set_num_threads(int32_t n);
int32_t wt_get_num_threads(int32_t *n);
/* Op calls that ran on the CPU instead of their device (no kernel there),
 * as JSON [{"device", "op", "count"}]; reset != 0 clears the counts. */
int32_t wt_fallbacks_json(int32_t reset, char *buf, size_t cap, size_t *needed);

/* ---- Tracing ---------------------------------------------------------------- */
/* Record every op call of the process (op, device, shapes, dtypes, bytes,
 * time, device memory) as a Chrome trace that Perfetto opens. flags: 1 waits
 * for the device after each op, so GPU ops carry their execution time. One
 * recording runs at a time. WEBTENSOR_TRACE=path starts one when the library
 * loads; wt_profile_exit_path gives that path ("" when unset), where the SDKs
 * write the trace at exit. */
int32_t wt_profile_start(int32_t flags);
/* End the recording and keep its trace for wt_profile_write / wt_profile_json. */
int32_t wt_profile_stop(void);
/* The kept trace (a running recording is stopped first) as a file ... */
int32_t wt_profile_write(const char *path);
/* ... or as JSON text. */
int32_t wt_profile_json(char *buf, size_t cap, size_t *needed);
int32_t wt_profile_exit_path(char *buf, size_t cap, size_t *needed);

/* ---- Tensors ---------------------------------------------------------------- */

/* A new tensor holding a copy of `nbytes` of row-major little-endian data.
 * nbytes must equal numel(shape) * size(dtype); data may be NULL when it is 0.
 * device may be NULL or "" for the default device. ndim may be 0 (a scalar;
 * shape may then be NULL). */
int32_t wt_tensor_from_data(const void *data, size_t nbytes, int32_t dtype, const int64_t *shape,
                            int32_t ndim, const char *device, wt_tensor *out);
/* A new zero-filled tensor. */
int32_t wt_tensor_zeros(int32_t dtype, const int64_t *shape, int32_t ndim, const char *device,
                        wt_tensor *out);
/* Add a reference to a handle. */
int32_t wt_tensor_retain(wt_tensor t);
/* Drop a reference; the tensor is freed with its last reference. Freeing a
 * freed handle returns WT_ERR_HANDLE. */
int32_t wt_tensor_free(wt_tensor t);
/* Number of live handles in the process (for leak checks). */
int32_t wt_live_tensors(int64_t *count);

int32_t wt_tensor_ndim(wt_tensor t, int32_t *ndim);
/* Writes ndim extents; cap is the capacity of shape in elements. */
int32_t wt_tensor_shape(wt_tensor t, int64_t *shape, int32_t cap);
/* Strides in elements (ndim of them). */
int32_t wt_tensor_strides(wt_tensor t, int64_t *strides, int32_t cap);
int32_t wt_tensor_numel(wt_tensor t, int64_t *numel);
int32_t wt_tensor_dtype(wt_tensor t, int32_t *dtype);
int32_t wt_tensor_device(wt_tensor t, char *buf, size_t cap, size_t *needed);
/* 1 if the tensor is row-major and dense. */
int32_t wt_tensor_is_contiguous(wt_tensor t, int32_t *contiguous);
/* Copies the elements in row-major order (waiting for the device) into dst;
 * cap must be at least numel * size(dtype). */
int32_t wt_tensor_to_host(wt_tensor t, void *dst, size_t cap);
/* A dense copy (or a new handle to the same tensor when already dense). */
int32_t wt_tensor_contiguous(wt_tensor t, wt_tensor *out);
/* A copy on another device (a new handle to the same tensor when already
 * there). device must name a device; NULL or "" is WT_ERR_INVALID. */
int32_t wt_tensor_to_device(wt_tensor t, const char *device, wt_tensor *out);

/* ---- Ops --------------------------------------------------------------------- */

/* Calls the registry op `name` (see wt_manifest_json). Absent optional
 * inputs are passed as 0. On success writes up to out_cap output handles and
 * sets *n_outputs; with too small an out_cap it returns
 * WT_ERR_BUFFER_TOO_SMALL, sets *n_outputs and creates nothing. */
int32_t wt_op(const char *name, const wt_tensor *inputs, int32_t n_inputs, const wt_attr *attrs,
              int32_t n_attrs, wt_tensor *outputs, int32_t out_cap, int32_t *n_outputs);
/* The op manifest (every op, its inputs, attributes, dtypes, backends) as JSON. */
int32_t wt_manifest_json(char *buf, size_t cap, size_t *needed);

/* ---- Autograd ------------------------------------------------------------------- */

/* Mark a floating-point leaf tensor as requiring gradients (on != 0). */
int32_t wt_tensor_set_requires_grad(wt_tensor t, int32_t on);
int32_t wt_tensor_requires_grad(wt_tensor t, int32_t *on);
/* Backpropagate from t (a one-element tensor, or pass the gradient of t in
 * grad; 0 for none). Gradients accumulate into the leaves. */
int32_t wt_backward(wt_tensor t, wt_tensor grad);
/* The accumulated gradient of a leaf as a new handle, or 0 when none. */
int32_t wt_tensor_grad(wt_tensor t, wt_tensor *grad);
/* Drop the accumulated gradient (wt_tensor_grad then gives 0). */
int32_t wt_tensor_zero_grad(wt_tensor t);
/* A tensor sharing t's data, cut from the autograd graph. */
int32_t wt_tensor_detach(wt_tensor t, wt_tensor *out);
/* Ops the calling thread makes between enter and exit are not recorded
 * (other threads' are). Scopes nest per thread. An exit without a matching
 * enter on the same thread is WT_ERR_INVALID. */
int32_t wt_no_grad_enter(void);
int32_t wt_no_grad_exit(void);

/* ---- Random numbers ------------------------------------------------------------- */

/* Reset the global Philox generator: the same seed gives the same random
 * tensors in every SDK and on every backend. */
int32_t wt_manual_seed(uint64_t seed);
int32_t wt_rng_state(uint64_t *seed, uint64_t *offset);
int32_t wt_set_rng_state(uint64_t seed, uint64_t offset);

/* ---- Dtypes ------------------------------------------------------------------------ */

/* The dtype ops that promote their inputs (add, where, ...) compute
 * operands of dtypes a and b in: the higher kind wins (bool < integer <
 * float), then the wider type; a signed with an unsigned integer gives a
 * signed type holding both, f16 with bf16 gives f32. */
int32_t wt_promote_types(int32_t a, int32_t b, int32_t *out);

/* ---- DLPack ----------------------------------------------------------------------- */

/* Export t as a versioned DLPack tensor (DLPack >= 1.0). CPU tensors are
 * shared without a copy; CUDA tensors are shared as kDLCUDA device memory
 * once the device's queued work is done (so any consumer stream may read
 * them); tensors on another device are synchronised and copied to host
 * memory (flags has DLPACK_FLAG_BITMASK_IS_COPIED). Strides
 * are always filled in, so views are shared with their layout, not copied. The
 * consumer owns *out and must call (*out)->deleter(*out) exactly once; the
 * data stays valid until then, even if t is freed. */
int32_t wt_to_dlpack_versioned(wt_tensor t, DLManagedTensorVersioned **out);
/* Export t as a legacy (pre-1.0) DLManagedTensor; same rules. */
int32_t wt_to_dlpack(wt_tensor t, DLManagedTensor **out);
/* Import a versioned DLPack tensor. On success the library owns `src` and
 * calls src->deleter exactly once (from any thread) when the tensor and all
 * views of it are gone; the data is shared when it is CPU memory with a
 * usable layout, or kDLCUDA memory of a device the CUDA backend opens (the
 * producer must have finished writing it, or written it on the stream
 * wt_device_stream names). On failure the caller still owns src. Size-1 dimensions may
 * have any stride, strides may be NULL (row-major), byte_offset may be
 * non-zero; read-only tensors stay read-only on re-export. */
int32_t wt_from_dlpack_versioned(DLManagedTensorVersioned *src, wt_tensor *out);
/* Import a legacy DLManagedTensor; same rules. */
int32_t wt_from_dlpack(DLManagedTensor *src, wt_tensor *out);
/* For an SDK that hands exports to CPython as PyCapsules: a capsule
 * destructor written in C, since one written in Python cannot run while
 * the consumer's exception is pending (NumPy's from_dlpack drops a capsule
 * it rejects after setting its BufferError). It calls the deleter of a
 * capsule still named "dltensor_versioned" or "dltensor" (never one a
 * consumer renamed "used_*") with the pending exception set aside.
 * python_api holds the running interpreter's PyCapsule_IsValid,
 * PyCapsule_GetPointer, PyErr_Fetch and PyErr_Restore, so the library links
 * no Python; *destructor receives the function to give PyCapsule_New. */
int32_t wt_python_capsule_destructor(void *const python_api[4], void (**destructor)(void *));
/* Number of DLPack exports whose deleter has not run yet (for leak checks). */
int32_t wt_live_dlpack_exports(int64_t *count);
/* Zero-copy input without a deleter, for hosts that cannot be called back
 * from another thread (a JavaScript engine through an FFI): a dense
 * row-major CPU tensor over data, which must stay valid and aligned to the
 * dtype's size. The library sets *released to 0 now and stores 1 into it
 * (atomically, from any thread) once nothing uses the memory any more (after
 * every handle, view and result sharing it is gone and a collection has
 * run); only then may the caller free data and released. Writes through
 * either side are seen by the other. */
int32_t wt_tensor_from_host_borrowed(const void *data, size_t nbytes, int32_t dtype, const int64_t *shape,
                                     int32_t ndim, int32_t *released, wt_tensor *out);
/* ---- Graph capture (the IR: core/ir) ------------------------------------------ */

/* A captured computation: wt_trace_begin(inputs), then the ops of one call
 * of the function (made through wt_op, as usual), then wt_trace_end(outputs)
 * returns a graph - constants folded, common subexpressions merged, dead ops
 * dropped, elementwise chains fused into single kernels where the device can
 * - that wt_graph_run replays on new inputs of the same shapes and dtypes.
 * Tensors the function used that are not inputs are captured as constants.
 * One capture at a time per process; wt_trace_abort drops it. */
int32_t wt_trace_begin(const wt_tensor *inputs, int32_t n_inputs);
int32_t wt_trace_end(const wt_tensor *outputs, int32_t n_outputs, wt_graph *out);
int32_t wt_trace_abort(void);
int32_t wt_graph_run(wt_graph graph, const wt_tensor *inputs, int32_t n_inputs, wt_tensor *outputs, int32_t out_cap,
                     int32_t *n_outputs);
/* The graph as text, one op per line (what `webtensor ir show` prints). */
int32_t wt_graph_text(wt_graph graph, char *buf, size_t cap, size_t *needed);
int32_t wt_graph_free(wt_graph graph);

/* Run the garbage collector now, so the storages nothing references are
 * released (borrowed imports signal, DLPack deleters run) soon after. */
int32_t wt_collect(void);

/* ---- WebAssembly plugins ------------------------------------------------------ */

/* Load a plugin (.wasm, see plugins-wasm/ABI.md) into the process's sandboxed
 * host and register its ops, which wt_op then calls like built-in ops. Writes
 * the plugin's name. A malformed, hostile or duplicate module is an error; the
 * library keeps running. */
int32_t wt_plugin_load(const char *path, char *name_buf, size_t cap, size_t *needed);
/* The same from a module in memory; label names it in error messages. */
int32_t wt_plugin_load_bytes(const void *wasm, size_t nbytes, const char *label, char *name_buf,
                             size_t cap, size_t *needed);
/* The op names of a loaded plugin as a JSON array of strings. */
int32_t wt_plugin_ops(const char *plugin, char *buf, size_t cap, size_t *needed);
/* Make the WebGPU tuner of every device, open or opened later, ask a loaded
 * plugin's policy which kernel variant to try (the proposal is still timed
 * and kept only when faster). `policy` NULL or "" takes the plugin's only
 * policy; `plugin` NULL or "" goes back to timing every variant. The
 * default policy is build/plugins/policy-kernel-variant.wasm (make plugins);
 * WEBTENSOR_TUNING_POLICY=module.wasm[#policy] does the same at start. */
int32_t wt_tuning_policy_set(const char *plugin, const char *policy);

/* ---- Checkpoints (safetensors) -------------------------------------------------- */

/* Checks a safetensors file as every webtensor loader does, so the SDKs read
 * checkpoints through one validator (core/safetensors ParseHeader): buf holds
 * the file's first nbytes bytes (at least the 8-byte header length and the
 * header; the whole file will do) and file_size is the whole file's length.
 * name labels the file in the error message (a path; NULL or "" for none).
 * On success writes, as JSON:
 *   {"data_start": 8 + the header's length, "metadata": {"key": "value", ...},
 *    "tensors": [{"name": "w", "dtype": "f32", "shape": [2, 3], "offsets": [0, 24]}, ...]}
 * with the tensors in the order of their data and offsets relative to
 * data_start; they tile [0, file_size - data_start) exactly. A malformed file
 * (framing, JSON, a name given twice, shapes or offsets that are not plain
 * integers or do not fit, gaps, overlaps, trailing bytes) is WT_ERR_INVALID
 * with a message naming the file and the problem. */
int32_t wt_safetensors_header(const void *buf, size_t nbytes, uint64_t file_size, const char *name, char *json,
                              size_t cap, size_t *needed);

/* ---- Training: optimisers, schedules, clipping ---------------------------------- */

/* An optimiser of torch.optim over params (leaf tensors that require
 * gradients): kind is "sgd", "adam", "adamw", "rmsprop" or "adagrad";
 * settings are torch's keyword arguments as attributes (WT_ATTR_FLOAT or
 * WT_ATTR_INT numbers, WT_ATTR_BOOL flags, betas as WT_ATTR_FLOATS):
 *   sgd:     lr (1e-3), momentum, dampening, weight_decay, nesterov, maximize
 *   adam:    lr (1e-3), betas (0.9, 0.999), eps (1e-8), weight_decay, amsgrad, maximize
 *   adamw:   as adam, weight_decay 1e-2
 *   rmsprop: lr (1e-2), alpha (0.99), eps (1e-8), weight_decay, momentum, centered, maximize
 *   adagrad: lr (1e-2), lr_decay, weight_decay, initial_accumulator_value, eps (1e-10), maximize
 * (the others 0 or false). An unknown or invalid setting is WT_ERR_INVALID
 * with torch's wording. The optimiser refers to the parameters by handle:
 * each step reads what the handles hold then and points them at the new
 * values (same handle numbers, still leaves that require gradients, with
 * their gradients), so every holder of a handle sees the update; free the
 * optimiser before or after its parameters, but step it only while they
 * live. */
int32_t wt_optimizer_new(const char *kind, const wt_tensor *params, int32_t n_params, const wt_attr *settings,
                         int32_t n_settings, wt_optimizer *out);
/* Change settings (a schedule's lr, say); the others and the state stay. */
int32_t wt_optimizer_set(wt_optimizer opt, const wt_attr *settings, int32_t n_settings);
/* One update of every parameter that has a gradient (the others are left
 * alone), each parameter's in one fused kernel on a device that fuses (the
 * CPU, WebGPU and CUDA for f32; the CPU for f64 too), op by op elsewhere.
 * All or nothing: a failed step changes no parameter and no state. */
int32_t wt_optimizer_step(wt_optimizer opt);
/* Drop every parameter's gradient (torch's zero_grad(set_to_none=True)). */
int32_t wt_optimizer_zero_grad(wt_optimizer opt);
/* The optimiser's state as a new state dict: for each parameter updated so
 * far, "<index>.step" (an i64 scalar) and its tensors under torch's names,
 * "<index>.exp_avg", "<index>.momentum_buffer", ... */
int32_t wt_optimizer_state(wt_optimizer opt, wt_state *out);
/* Replace the state with a state dict named as wt_optimizer_state names it
 * (tensors go to each parameter's device and floating dtype; shapes must
 * match); all or nothing. */
int32_t wt_optimizer_load_state(wt_optimizer opt, wt_state state);
int32_t wt_optimizer_free(wt_optimizer opt);
/* The learning rate at step (0 before the first scheduler step) of a
 * torch.optim.lr_scheduler schedule, from the base rate: a pure function,
 * so an SDK's scheduler keeps its step count and calls this. kind and
 * settings: "step" (step_size, gamma 0.1), "multistep" (milestones as
 * WT_ATTR_INTS, gamma 0.1), "exponential" (gamma), "cosine" (t_max,
 * eta_min 0), "linear" (start_factor 1/3, end_factor 1, total_iters 5),
 * "warmup_cosine" (warmup, total, eta_min 0: linear warm-up from 0, then
 * cosine annealing). Bad settings are WT_ERR_INVALID at any step. */
int32_t wt_lr_schedule(const char *kind, const wt_attr *settings, int32_t n_settings, double base_lr, int64_t step,
                       double *lr);
/* torch.nn.utils.clip_grad_norm_: the gradients of params (those without
 * one are skipped) are scaled by min(1, max_norm / (total + 1e-6)), total
 * being their norm_type-norm (a p > 0, or INFINITY for the largest |g|).
 * It all happens on the device, nothing waits: *total_norm is a new 0-d
 * tensor (f32, or f64 when a gradient is f64). */
int32_t wt_clip_grad_norm(const wt_tensor *params, int32_t n_params, double max_norm, double norm_type,
                          wt_tensor *total_norm);
/* torch.nn.utils.clip_grad_value_: every gradient element into [-clip, clip]. */
int32_t wt_clip_grad_value(const wt_tensor *params, int32_t n_params, double clip_value);
/* torch.nn.init in place: the tensor behind t gets values drawn as the Go
 * nn package draws them (rand and randn on the global generator), so a seed
 * gives the same weights in every SDK; its handle, shape, dtype and device
 * stay, and a leaf that requires a gradient stays one with its gradient. A
 * tensor computed from others that requires a gradient is WT_ERR_INVALID.
 * method and its settings (torch's names and defaults): "uniform" (a 0,
 * b 1), "normal" (mean 0, std 1), "constant" (val, required),
 * "xavier_uniform" and "xavier_normal" (gain 1), "kaiming_uniform" and
 * "kaiming_normal" (a 0, mode "fan_in" or "fan_out", nonlinearity
 * "leaky_relu"); the xavier and kaiming ones need at least 2 dims. */
int32_t wt_nn_init(wt_tensor t, const char *method, const wt_attr *settings, int32_t n_settings);
/* torch.nn.init.calculate_gain: linear, identity, sigmoid, the conv names,
 * tanh, relu, leaky_relu (param: its negative slope; torch's default 0.01
 * is the caller's to pass), selu. */
int32_t wt_nn_calculate_gain(const char *nonlinearity, double param, double *gain);

/* ---- State dicts and checkpoints --------------------------------------------------- */

/* A state dict: named tensors in order, with string metadata, what a
 * checkpoint holds. Files are safetensors, as torch's safetensors writes
 * them (names sorted, a compact header padded to 8 bytes), so every SDK's
 * checkpoints load in every other and in torch. */
int32_t wt_state_new(wt_state *out);
int32_t wt_state_free(wt_state s);
/* Append t under name (a name given twice, "" or "__metadata__" is
 * WT_ERR_INVALID). The state holds the tensor itself, so t may be freed
 * afterwards, and remembers the handle for wt_state_assign. */
int32_t wt_state_put(wt_state s, const char *name, wt_tensor t);
int32_t wt_state_count(wt_state s, int32_t *count);
/* Entry index's name, and its tensor as a new handle. */
int32_t wt_state_name(wt_state s, int32_t index, char *buf, size_t cap, size_t *needed);
int32_t wt_state_get(wt_state s, int32_t index, wt_tensor *out);
/* The file's __metadata__: set key (again: replaced); read the entries in
 * key order by index. */
int32_t wt_state_set_metadata(wt_state s, const char *key, const char *value);
int32_t wt_state_metadata_count(wt_state s, int32_t *count);
int32_t wt_state_metadata_key(wt_state s, int32_t index, char *buf, size_t cap, size_t *needed);
int32_t wt_state_metadata_value(wt_state s, int32_t index, char *buf, size_t cap, size_t *needed);
/* Write the state to path as safetensors (waiting for the devices): the
 * bytes go to a temporary file beside path (".NAME.tmp-PID-..."), synced
 * and renamed over path, so a failed save never leaves a broken file where
 * a good one was; the temporaries of earlier saves to path whose writer
 * has exited are removed first. File system errors are WT_ERR_IO. */
int32_t wt_state_save(wt_state s, const char *path);
/* The same file's bytes, into buf (the buffer protocol: *needed is known
 * before any tensor is read). */
int32_t wt_state_to_bytes(wt_state s, void *buf, size_t cap, size_t *needed);
/* Read a safetensors file (checked as wt_safetensors_header checks it: a
 * malformed file is WT_ERR_INVALID naming path and the problem) into a new
 * state dict, in file order, the tensors on device (NULL or "": the
 * default). metadata_only != 0 reads only the header: no entries. */
int32_t wt_state_load(const char *path, const char *device, int32_t metadata_only, wt_state *out);
/* The same from a file's bytes; name labels them in errors (NULL: none). */
int32_t wt_state_from_bytes(const void *buf, size_t nbytes, const char *device, const char *name, wt_state *out);
/* Load values into a module: module is a state dict of the module's
 * tensors (wt_state_put of its parameters and buffers), and each handle put
 * there is pointed at the value of the same name, moved to its device, all
 * or none. Every name, shape and dtype must match (strict != 0; otherwise
 * names on one side only are skipped), else WT_ERR_INVALID lists every
 * problem ("the state dict does not match the <module_name> (2 problem(s)):
 * ..."). A tensor that required a gradient stays a leaf that does, with its
 * gradient, as torch's load_state_dict leaves p.grad. */
int32_t wt_state_assign(wt_state module, wt_state values, int32_t strict, const char *module_name);

/* ---- ONNX models (the importer: onnx/) ----------------------------------------- */

/* Import an ONNX model (opset 7 and later, the operators onnx/doc.go lists)
 * with its weights on device (NULL or "": the default). Every node's
 * operator and attributes are checked here: an unsupported one is
 * WT_ERR_INVALID naming the node and its op_type; a malformed or hostile
 * protobuf (huge dims, cycles, missing initializers) is WT_ERR_INVALID too,
 * never a crash. wt_onnx_load reads external data files beside path (never
 * outside its folder); a missing or unreadable file is WT_ERR_IO.
 * wt_onnx_load_bytes reads a serialized ModelProto (only during the call)
 * and refuses external data, having no folder to read it from. */
int32_t wt_onnx_load(const char *path, const char *device, wt_onnx *out);
int32_t wt_onnx_load_bytes(const void *buf, size_t nbytes, const char *device, wt_onnx *out);
/* Tensors a run returned stay valid after the model is freed. */
int32_t wt_onnx_free(wt_onnx model);
/* The graph's inputs a caller supplies (initializers excluded) and its
 * outputs, by index in the model's order. */
int32_t wt_onnx_input_count(wt_onnx model, int32_t *count);
int32_t wt_onnx_input_name(wt_onnx model, int32_t index, char *buf, size_t cap, size_t *needed);
int32_t wt_onnx_output_count(wt_onnx model, int32_t *count);
int32_t wt_onnx_output_name(wt_onnx model, int32_t index, char *buf, size_t cap, size_t *needed);
/* The model as JSON: {"opset": 17, "device": "cpu", "inputs": [{"name": "x",
 * "dtype": "f32", "shape": [1, "batch", null]}], "outputs": [...]}: a dim is
 * a number, a symbolic name (ONNX's dim_param) or null; a shape is null
 * when the rank is not declared, a dtype "" when the type is not. A value of
 * an ONNX type webtensor holds widened also has "narrow": the type's name
 * ("UINT16" in "i32", "FLOAT8E4M3FN" in "f32", ...). */
int32_t wt_onnx_info_json(wt_onnx model, char *buf, size_t cap, size_t *needed);
/* Run the model: inputs[i] is the tensor named names[i] (a graph input, or
 * an initializer the graph also lists as an input, to override it); every
 * input must be given once, with the declared dtype and rank, and symbolic
 * dims must agree across inputs. Inputs on another device are copied to the
 * model's. The outputs come as new handles in wt_onnx_output_name order;
 * with out_cap below wt_onnx_output_count the status is
 * WT_ERR_BUFFER_TOO_SMALL, *n_outputs is set and no handle is made (the
 * model has run: size outputs by the count beforehand). An operator that
 * fails names its node. */
int32_t wt_onnx_run(wt_onnx model, const char *const *names, const wt_tensor *inputs, int32_t n_inputs,
                    wt_tensor *outputs, int32_t out_cap, int32_t *n_outputs);

/* ---- Multimodal models (multimodal/): Hugging Face folders ------------------------ */

/* Every load reads the files save_pretrained (or sentence-transformers)
 * wrote, strictly: a missing, misshaped or unexpected tensor, or a config
 * value the library does not implement, is WT_ERR_INVALID naming it; a
 * missing or unreadable file is WT_ERR_IO. device NULL or "" is the default
 * device. Tensors a call returned stay valid after the object is freed.
 * texts are n_texts UTF-8 strings, none NULL. */

/* A tokenizer.json (path may be the file or a folder holding it), or its
 * bytes (read only during the call). A component the library does not
 * implement fails naming it rather than giving other ids. */
int32_t wt_tokenizer_load(const char *path, wt_tokenizer *out);
int32_t wt_tokenizer_load_bytes(const void *buf, size_t nbytes, wt_tokenizer *out);
int32_t wt_tokenizer_free(wt_tokenizer tok);
/* The vocabulary's size, added tokens included. */
int32_t wt_tokenizer_vocab_size(wt_tokenizer tok, int32_t *size);
/* Tokenizes texts with the file's truncation and padding, adding the
 * special tokens ([CLS] ... [SEP]) when add_special is nonzero. With
 * pad_id >= 0 the batch is padded on the right to its longest with that id
 * instead (type id 0, mask 0); without, texts of different lengths are
 * WT_ERR_INVALID unless the file pads. Each output is a new (n_texts,
 * length) i64 tensor on device: the ids, the token type ids and the
 * attention mask; type_ids and mask may be NULL when not wanted. */
int32_t wt_tokenizer_encode(wt_tokenizer tok, const char *const *texts, int32_t n_texts, int32_t add_special,
                            int64_t pad_id, const char *device, wt_tensor *ids, wt_tensor *type_ids, wt_tensor *mask);
/* The text of n ids, as the tokenizers library decodes them (special
 * tokens dropped when skip_special is nonzero); an id outside the
 * vocabulary is WT_ERR_INVALID. The text is UTF-8 and may hold NUL bytes
 * (a token may decode to one): its length is *needed - 1. */
int32_t wt_tokenizer_decode(wt_tokenizer tok, const int64_t *ids, int64_t n, int32_t skip_special, char *buf, size_t cap,
                            size_t *needed);

/* transformers' ViT, CLIP or VideoMAE image processor from a
 * preprocessor_config.json (path may be the file or its folder) or its
 * bytes: Pillow's resampling, centre crop, rescale and normalise, bit for
 * bit. */
int32_t wt_image_processor_load(const char *path, wt_image_processor *out);
int32_t wt_image_processor_load_bytes(const void *buf, size_t nbytes, wt_image_processor *out);
int32_t wt_image_processor_free(wt_image_processor proc);
/* n_images images, each a (height, width, 3) u8 tensor of RGB pixels, as
 * pixel values: a new (n_images, 3, H, W) f32 tensor on device (every image
 * must come out the same size; a centre crop sees to it). */
int32_t wt_image_processor_preprocess(wt_image_processor proc, const wt_tensor *images, int32_t n_images,
                                      const char *device, wt_tensor *out);
/* n_videos videos, each a (frames, height, width, 3) u8 tensor of RGB
 * frames (a decoded clip's layout), as pixel values: a new (n_videos,
 * frames, 3, H, W) f32 tensor on device, every frame processed on its own
 * as VideoMAEImageProcessor does (the videos need the same frame count). */
int32_t wt_image_processor_preprocess_video(wt_image_processor proc, const wt_tensor *videos, int32_t n_videos,
                                            const char *device, wt_tensor *out);
/* Which frames of a clip of seg_len frames to decode: the
 * sample_frame_indices of transformers' TimeSformer and VideoMAE docs after
 * np.random.seed(seed) (a window of clip_len * frame_sample_rate frames
 * ending at numpy's randint, clip_len indices spread over it), the same
 * indices numpy gives; a clip of no more than clip_len * frame_sample_rate
 * frames is WT_ERR_INVALID. The indices come as a new (clip_len,) i64
 * tensor on the CPU. */
int32_t wt_video_sample_frame_indices(int32_t clip_len, int32_t frame_sample_rate, int32_t seg_len, uint32_t seed,
                                      wt_tensor *out);
/* num_frames indices spread evenly over total frames (i * total /
 * num_frames), as transformers' video processors sample: a new
 * (num_frames,) i64 tensor on the CPU. */
int32_t wt_video_uniform_frame_indices(int32_t total, int32_t num_frames, wt_tensor *out);

/* A sentence-transformers folder (modules.json: a BERT Transformer, a
 * Pooling and optionally a Normalize, as all-MiniLM-L6-v2 ships). */
int32_t wt_sentence_encoder_load(const char *dir, const char *device, wt_sentence_encoder *out);
int32_t wt_sentence_encoder_free(wt_sentence_encoder enc);
/* The length of one embedding. */
int32_t wt_sentence_encoder_dim(wt_sentence_encoder enc, int32_t *dim);
/* Embeds texts in batches of batch_size (0: 32, sentence-transformers'
 * default), each padded to its longest: a new (n_texts, dim) f32 tensor on
 * the model's device, unit-norm when the folder has a Normalize module. */
int32_t wt_sentence_encoder_encode(wt_sentence_encoder enc, const char *const *texts, int32_t n_texts,
                                   int32_t batch_size, wt_tensor *out);

/* A CLIPModel folder (config.json, model.safetensors) with its tokenizer.json. */
int32_t wt_clip_load(const char *dir, const char *device, wt_clip *out);
int32_t wt_clip_free(wt_clip clip);
/* Zero-shot classification: each image's probabilities over the texts
 * ("a photo of a cat"), a new (images, n_texts) tensor; pixels are pixel
 * values (images, 3, H, W) as CLIP's image processor makes them, copied to
 * the model's device when elsewhere. */
int32_t wt_clip_zero_shot(wt_clip clip, wt_tensor pixels, const char *const *texts, int32_t n_texts, wt_tensor *out);
/* The projected embeddings (not normalised), as transformers'
 * get_text_features and get_image_features give them. */
int32_t wt_clip_text_features(wt_clip clip, const char *const *texts, int32_t n_texts, wt_tensor *out);
int32_t wt_clip_image_features(wt_clip clip, wt_tensor pixels, wt_tensor *out);

/* A TimesformerForVideoClassification folder (its model.safetensors holds
 * classifier.weight) or a TimesformerModel one, as save_pretrained wrote
 * it: divided space-time, joint or space-only attention. */
int32_t wt_timesformer_load(const char *dir, const char *device, wt_timesformer *out);
int32_t wt_timesformer_free(wt_timesformer model);
/* {"model": "TimesformerForVideoClassification", "attention_type":
 * "divided_space_time", "num_frames": 8, "image_size": 224, "patch_size":
 * 16, "num_channels": 3, "hidden_size": 768, "device": "cpu", "labels":
 * [...]}: labels (id2label by id) for a classifier only. */
int32_t wt_timesformer_info_json(wt_timesformer model, char *buf, size_t cap, size_t *needed);
/* One forward of pixel values (B, frames, channels, H, W), as
 * wt_image_processor_preprocess_video makes them, copied to the model's
 * device when elsewhere: the logits, a new (B, labels) tensor, and the
 * last hidden state (after the final LayerNorm), a new (B, 1 + patches *
 * frames, hidden) tensor; space_only gives (B * frames, ...) of both, as
 * transformers does. Either output may be NULL, not both; logits of a
 * TimesformerModel (no classifier) are WT_ERR_INVALID. Divided attention
 * takes num_frames frames whose width is image_size, as transformers'
 * layer assumes. */
int32_t wt_timesformer_forward(wt_timesformer model, wt_tensor pixels, wt_tensor *logits,
                               wt_tensor *last_hidden_state);

/* A WhisperForConditionalGeneration folder (config.json, model.safetensors,
 * generation_config.json, tokenizer.json, and preprocessor_config.json or
 * transformers' default feature extractor). */
int32_t wt_whisper_load(const char *dir, const char *device, wt_whisper *out);
int32_t wt_whisper_free(wt_whisper model);
/* The sample rate waveforms must have (16000 for Whisper). */
int32_t wt_whisper_sampling_rate(wt_whisper model, int32_t *rate);
/* A new handle to the model's tokenizer, to decode generated ids. */
int32_t wt_whisper_tokenizer(wt_whisper model, wt_tokenizer *out);
/* Transcribes n_waves waveforms (1-D float tensors at the sampling rate,
 * padded or cut to the feature extractor's window): the log-mel features,
 * then greedy decoding (num_beams 0 or 1) or beam search with a KV cache,
 * as transformers' generate(do_sample=False) gives them. The ids come as a
 * new (n_waves, length) i64 tensor on the CPU: each row's tokens after the
 * prompt, padded with pad_token_id (a special token: wt_tokenizer_decode
 * with skip_special drops it). max_new_tokens and num_beams 0 take the
 * generation config's. */
int32_t wt_whisper_generate(wt_whisper model, const wt_tensor *waves, int32_t n_waves, int32_t max_new_tokens,
                            int32_t num_beams, wt_tensor *out);

/* A Wav2Vec2ConformerModel folder (config.json, model.safetensors, and
 * preprocessor_config.json or transformers' default Wav2Vec2FeatureExtractor):
 * a Conformer speech encoder with relative or rotary positions. */
int32_t wt_conformer_load(const char *dir, const char *device, wt_conformer *out);
int32_t wt_conformer_free(wt_conformer model);
/* The sample rate waveforms must have (the feature extractor's, 16000 by default). */
int32_t wt_conformer_sampling_rate(wt_conformer model, int32_t *rate);
/* Encodes n_waves waveforms (1-D float tensors at the sampling rate): the
 * feature extractor pads them to the longest (with its attention mask and
 * normalisation), then the encoder runs, as transformers'
 * model(**extractor(waves, padding=True)). out is a new (n_waves, frames,
 * hidden_size) tensor on the model's device, its last_hidden_state;
 * frame_mask, when not NULL, a new (n_waves, frames) bool tensor marking
 * each waveform's own frames (for pooling). */
int32_t wt_conformer_encode(wt_conformer model, const wt_tensor *waves, int32_t n_waves, wt_tensor *out,
                            wt_tensor *frame_mask);
/* Resamples x (..., time), float, from from_hz to to_hz as
 * torchaudio.functional.resample does by default (Hann-windowed sinc,
 * lowpass_filter_width 6, rolloff 0.99): a new tensor of ceil(time * to_hz /
 * from_hz) samples on x's device. Rates whose reduced ratio needs a filter
 * of more than 2^24 taps (44101 to 16000) are WT_ERR_INVALID. */
int32_t wt_audio_resample(wt_tensor x, int32_t from_hz, int32_t to_hz, wt_tensor *out);

/* ---- Diffusion pipelines (diffuse/) -------------------------------------------------- */

/* A folder save_pretrained wrote for a DDPMPipeline or DDIMPipeline
 * (model_index.json, unet/, scheduler/), a DiTPipeline (transformer/,
 * vae/, scheduler/) or a StableDiffusionPipeline (unet/, vae/,
 * text_encoder/: a CLIPTextModel, tokenizer/: tokenizer.json or vocab.json
 * and merges.txt, scheduler/; its safety checker is not run), with
 * diffusers' names and strictness as above. */
int32_t wt_diffusion_load(const char *dir, const char *device, wt_diffusion *out);
/* The same from a zip archive of such a folder (its files at the
 * archive's root, or in its one top-level folder as `zip -r pipe.zip pipe`
 * nests them), read from buf only during the call: for callers without a
 * file system (the browser). The archive is checked before anything is
 * read: paths leaving its root, symbolic links, names given twice, sizes
 * its compressed data cannot hold (zip bombs), data past its end
 * (truncation) and archives declaring more than 64 GiB uncompressed (2 GiB
 * in WebAssembly) are WT_ERR_INVALID naming the entry, as is a file the
 * pipeline needs and the archive lacks. */
int32_t wt_diffusion_load_zip(const void *buf, size_t nbytes, const char *device, wt_diffusion *out);
int32_t wt_diffusion_free(wt_diffusion pipe);
/* {"pipeline": "DDPMPipeline", "scheduler": "DDPMScheduler", "image_shape":
 * [3, 16, 16], "class_conditional": false, "text_conditional": false,
 * "device": "cpu", "weight_bytes": 709708, "int8_weights": false}; a
 * text-to-image pipeline's image_shape is its default size; weight_bytes
 * is what the models' weights take as held (int8 layers: their i8 weights
 * and f32 scales). */
int32_t wt_diffusion_info_json(wt_diffusion pipe, char *buf, size_t cap, size_t *needed);
/* From now on the pipeline's models hold their linear and conv weights as
 * int8, symmetric with one f32 scale per output channel (max|w|/127), each
 * dequantised when its layer runs: about a quarter of the f32 bytes, with
 * images 44 to 55 dB PSNR from the f32 weights' on the test models. A second
 * call does nothing; it waits for samplings running on the pipeline. */
int32_t wt_diffusion_quantize_int8(wt_diffusion pipe);
/* Samples batch images with steps inference steps, the noise drawn from
 * the Philox stream of seed (the same images for a seed on one device), as
 * a new (batch, C, H, W) tensor in [0, 1] on the pipeline's device.
 * scheduler names a diffusers scheduler class (DDIMScheduler,
 * EulerDiscreteScheduler, ...) to sample with, its config converted from
 * the folder's; NULL or "" keeps the folder's. A class-conditional
 * pipeline is WT_ERR_INVALID here: it takes wt_diffusion_generate_classes. */
int32_t wt_diffusion_generate(wt_diffusion pipe, int32_t batch, int32_t steps, uint64_t seed, const char *scheduler,
                              wt_tensor *out);
/* One image per class label (DiT), with classifier-free guidance at
 * guidance_scale (<= 1: none; diffusers' default is 4); otherwise as
 * wt_diffusion_generate. */
int32_t wt_diffusion_generate_classes(wt_diffusion pipe, const int64_t *labels, int32_t n_labels, int32_t steps,
                                      uint64_t seed, double guidance_scale, const char *scheduler, wt_tensor *out);
/* Text to image (StableDiffusionPipeline): images_per_prompt (0: 1)
 * images for each prompt, adjacent, as a new (n_prompts ×
 * images_per_prompt, C, height, width) tensor in [0, 1] on the pipeline's
 * device. Prompts are truncated and padded to the tokenizer's
 * model_max_length; negative_prompts are none (the empty prompt), one for
 * all or one per prompt; guidance_scale <= 1 runs without classifier-free
 * guidance (diffusers' default is 7.5). height and width 0 take the
 * folder's default size, others must be multiples of the VAE's scale
 * factor. latents, when not 0, are the initial latents (diffusers'
 * latents=; copied to the pipeline's device), the seed's stream then
 * drawing only what a stochastic scheduler draws; otherwise the seed's
 * stream draws them. scheduler is as for wt_diffusion_generate. */
int32_t wt_diffusion_generate_text(wt_diffusion pipe, const char *const *prompts, int32_t n_prompts,
                                   const char *const *negative_prompts, int32_t n_negative, int32_t images_per_prompt,
                                   int32_t steps, uint64_t seed, double guidance_scale, int32_t height, int32_t width,
                                   const char *scheduler, wt_tensor latents, wt_tensor *out);
/* A text-to-image pipeline's text encoder states for n_texts texts, what
 * its UNet attends to: a new (n_texts, max length, width) tensor. */
int32_t wt_diffusion_encode_text(wt_diffusion pipe, const char *const *texts, int32_t n_texts, wt_tensor *out);
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

/* ---- auto-agents (package auto) ------------------------------------------------ */

/* Agents that measure a change A/B on the caller's own workload, in this
 * process (a call runs for seconds), keep it only when it wins, remember
 * it per name in a kernel cache and journal every decision (JSON lines)
 * in a folder. Options (NULL: defaults): "dir" (default: auto/ under
 * WEBTENSOR_CACHE_DIR or the user cache folder), "policy" ("module.wasm#
 * name", a loaded plugin's "name#policy", or "default#name": policy-
 * auto.wasm found from the working folder), "runs" (9), "margin" (0.1).
 * A tune's buf must hold 16384 bytes, checked before it runs, else
 * WT_ERR_BUFFER_TOO_SMALL; it gets a report whose "decisions" sum each
 * decision up (wt_auto_journal_json has the records). A missing policy
 * module or folder is WT_ERR_IO. */
/* The data agent on a loader: workers, prefetch, a record cache, kept only
 * if the measured window's batches hash as before. Options also: "name"
 * ("loader"), "batches" (a run reads, min(16, an epoch's)), "epoch" (0),
 * "measure" (false: apply the remembered pipeline only). The loader
 * changes in place for epochs started after. */
int32_t wt_auto_tune_loader(wt_loader loader, const char *options_json, char *buf, size_t cap, size_t *needed);
/* The kernel agent on a graph run on inputs: the CPU backend's threads and
 * cache, for the whole process. Options also: "name" ("graph"),
 * "repeat" (graph runs a measured run makes; 0: about 10 ms), "grad"
 * (false: run under no-grad). */
int32_t wt_auto_tune_graph(wt_graph graph, const wt_tensor *inputs, int32_t n_inputs, const char *options_json,
                           char *buf, size_t cap, size_t *needed);
/* The journal as a JSON array, oldest first; options: "dir", "ids". */
int32_t wt_auto_journal_json(const char *options_json, char *buf, size_t cap, size_t *needed);
/* Restore the state from before kept decision id, undoing kept ones after
 * it; buf (32 bytes) gets the rollback record's id. A state naming
 * loaders this process has not tuned under the same name is refused. */
int32_t wt_auto_rollback(const char *options_json, const char *id, char *buf, size_t cap, size_t *needed);

#endif /* WT_NO_PROTOTYPES */

#ifdef __cplusplus
}
#endif

#endif /* WEBTENSOR_H */
