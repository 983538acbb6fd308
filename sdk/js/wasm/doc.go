//go:build js && wasm

// Command wasm is the browser half of the JavaScript SDK: the Go core, the
// CPU backend and the WebGPU backend (on navigator.gpu) compiled to
// WebAssembly, exposing on globalThis.__webtensor the calls the SDK's
// browser binding (sdk/js/src/wasm.ts) makes. It is the C ABI's surface
// (capi/) in JavaScript values: tensors cross as integer handles into a
// table, errors come back as Error objects with a `status` (the ABI's
// WT_ERR_* code) instead of being thrown through Go.
//
// Synchronous calls must never wait for a WebGPU promise: the promise
// settles on the event loop the call is blocking. So every synchronous call
// is marked (webgpu.EnterSyncCall) and a GPU read inside one is an error
// naming the async form; reads (read, toDeviceAsync) and the device opening
// (init) run on their own goroutine and return a Promise.
//
// Build: GOOS=js GOARCH=wasm go build -o webtensor.wasm ./sdk/js/wasm
// (`make wasm-sdk`, which also copies Go's wasm_exec.js next to it).
package main
