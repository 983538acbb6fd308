// Package abi is webtensor's one ABI in Go types: every function of the C
// header capi/include/webtensor.h, less the C (pointers, buffers, NUL
// strings, per-thread messages). It holds the tensor handle table, the
// status codes and the mapping from Go errors to them, the decoding of op
// attributes, and the calls themselves: tensors, ops, autograd, graph
// capture, devices, random numbers, checkpoint headers, plugins, and
// training - nn's optimisers over the SDKs' parameter handles (which a step
// points at the new values), learning-rate schedules, gradient clipping and
// state dicts (checkpoints saved, loaded and loaded into a module) - so an
// SDK's optim and checkpoint code is only its language's idioms - ONNX
// models (package onnx behind a handle: load, names, runs by name), and the
// domain libraries: multimodal's tokenizers, image processors (image.go),
// sentence encoders, CLIP and Whisper (multimodal.go) and diffuse's
// pipelines (diffuse.go), loaded
// from their Hugging Face and diffusers folders, so no SDK re-implements a
// model.
//
// Two thin layers sit on it, so the ABI exists once: capi (cgo) turns C
// arguments into these Go values and results back into caller buffers, and
// the browser bridge (sdk/js/wasm, syscall/js) does the same with
// JavaScript values. A function here is named after the header's (Op for
// wt_op, TensorShape for wt_tensor_shape) and its errors say what the
// header's would, so an SDK sees the same codes and messages on Node, in
// the browser, in Python and in Java.
//
// The name is the one thing both layers share: the application binary
// interface, of which the C header is one rendering and the browser's
// __webtensor object the other. It is not an API for Go programs, which use
// core directly; it speaks in handles, codes and the header's messages
// because its callers cross a language boundary. The package is free of cgo
// so the js/wasm build can use it, and imports no backend (the binaries
// choose theirs) except for the CUDA backend's extras (cuda.go), compiled
// where CUDA can exist.
package abi
