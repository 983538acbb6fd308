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
  WT_BOOL = 11,
  WT_C64 = 12, /* complex: two f32, real part first (stored as its parts on every device) */
  WT_C128 = 13, /* complex: two f64 (not on webgpu, which has no f64) */
  WT_U16 = 14,  /* held as u32 on webgpu, exactly */
  WT_U64 = 15   /* not on webgpu (WGSL has no 64-bit integers) nor cuda yet */
} wt_dtype;

/* A tensor handle. 0 is never valid. */
typedef int64_t wt_tensor;
/* A captured graph (see wt_trace_begin); handles are never reused either. */
typedef int64_t wt_graph;
/* An optimiser (see wt_optimizer_new) and a state dict (see wt_state_new):
 * handles, never reused, like tensors'. */
typedef int64_t wt_optimizer;
typedef int64_t wt_state;
/* A domain method's result held for reading (see wt_call); never reused. */
typedef int64_t wt_call_result;

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

/* The domain libraries (ONNX, multimodal, diffusion, data, auto-agents):
 * their own file to keep each under the size rule; one contract. */
#include "webtensor_domains.h"

#endif /* WT_NO_PROTOTYPES */

#ifdef __cplusplus
}
#endif

#endif /* WEBTENSOR_H */
