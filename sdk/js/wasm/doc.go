//go:build js && wasm

// Command wasm is the browser half of the JavaScript SDK: the Go core, the
// CPU backend and the WebGPU backend (on navigator.gpu) compiled to
// WebAssembly, exposing on globalThis.__webtensor the functions of the C
// ABI (capi/include/webtensor.h) under the same names, for the SDK's
// browser binding (sdk/js/src/wasm.ts). Both are thin layers over package
// abi, which holds the handle table, the statuses and their messages, the
// attribute decoding and the calls; this one only converts JavaScript
// values.
//
// How a header function reads in JavaScript (table.go lists the set, and
// abi's tests hold it equal to the header's less the omitted functions):
//   - It returns its result or an Error whose `status` is the WT_ERR_* code
//     and whose message is what wt_last_error would say (so there is no
//     wt_last_error); `needsAsync` marks a call that must wait for the GPU.
//   - Out-parameters become the return value: one is returned as it is,
//     several (wt_rng_state) as an array; int32 flags are booleans.
//   - A (buf, cap, needed) string output is the returned string (the
//     bytes of wt_state_to_bytes, a returned Uint8Array); a
//     (pointer, count) input is one array or typed array (its length is the
//     count); (outputs, out_cap, n_outputs) is the returned array of
//     handles; wt_tensor_to_host fills a Uint8Array, its capacity being the
//     array's length.
//   - Handles and counts are Numbers (exact below 2^53); uint64 values
//     (seeds, the RNG offset, streams) are decimal strings, since a Number
//     cannot hold them.
//   - The domain libraries' methods by name are wt_call(target, self,
//     argsJSON | null, data: Uint8Array | null, onStep?) -> a result
//     handle, read with wt_call_result_json and freed with
//     wt_call_result_free (call.go); the multimodal library's, the
//     diffusion pipelines' and the ONNX importer's own functions are
//     omitted, wt_call reaching them all. onStep, which the header has
//     not, is a diffusion sampling call's progress: a function called with
//     (step, steps) after each denoising step, which wt_call_async lets
//     the page draw.
//   - Functions that need C memory, a plugin host or a file system are omitted, each with
//     its reason in table.go (calling one fails with WT_ERR_UNSUPPORTED and
//     that reason); wt_browser_init and the *_async twins exist only here.
//
// Synchronous calls must never wait for a WebGPU promise: the promise
// settles on the event loop the call is blocking. So every synchronous call
// is marked (webgpu.EnterSyncCall) and a GPU read inside one is an error
// naming the async form; the *_async twins (reads, device moves, ops whose
// output shape depends on the data) and the device opening
// (wt_browser_init) run on their own goroutine and return a Promise.
//
// Build: GOOS=js GOARCH=wasm go build -tags wtsimd -o webtensor.wasm ./sdk/js/wasm
// (`make wasm-sdk`, which also builds the wasm SIMD kernels,
// webtensor-simd.wasm, from simd/ and copies Go's wasm_exec.js next to it).
// With -tags wtsimd the module imports webtensor_simd.* (backends/cpu/
// gemm_wasmsimd.go), which the SDK's loader provides; without it the module
// runs under a plain wasm_exec.js and the CPU backend uses its Go kernels.
package main
