// Package webgpu is the WebGPU backend: every op it has a kernel for runs as
// a WGSL compute shader (from package wgsl) through
// github.com/cogentcore/webgpu — wgpu-native on Vulkan, Metal or DX12, and
// navigator.gpu when compiled to js/wasm. Ops without a kernel here run on
// the CPU behind it with a one-time warning (core's fallback).
//
// Storage is 32-bit per element on the GPU: f32 holds f32, f16 and bf16;
// i32 holds i32, i16, i8 and i64 (narrowed on upload with a range check);
// u32 holds u32, u8 and bool. f64 is refused with an error that says to cast,
// since WGSL has no f64. Conversions happen on upload and download, so the
// rest of the runtime sees the dtype it asked for. An i64 result is exact
// or the op fails: integer sums and products keep 64 bits where they
// accumulate, and a kernel whose i64 result leaves i32 marks a flag that
// fails the op (gpu_checks.go). Every count, size and index a kernel gets must
// fit 32 bits, or the launch is refused (WGSL has no wider integers).
//
// Mesa's lavapipe stops each shader invocation's loops after 65,535
// iterations, silently (counted over all of its loops, and over the
// threads of a SIMD group): the limit is measured (gpu_looplimit.go).
// Reductions split their groups to stay under it; convolutions, pooling,
// scans, sparse products and segment ops, and the row kernels of softmax
// and the norms split their work the same way where one thread's share
// would pass it; other kernels that would pass it (sorting, Fourier
// transforms, scatters, i64 running products) are refused with an error
// naming it, or take a variant that does not.
//
// Work is batched: kernels are encoded into one command buffer and
// submitted together when a result is read back (or a batch fills up), with
// the uniform parameters of the whole batch written once. Buffers come from
// a pool by size class and go back to it only after the batch that used them
// has been submitted; the pool keeps at most 256 MiB of buffers of up to
// 64 MiB, destroys the rest when released and has wgpu-native free them
// once the GPU is done (EmptyCache drops the pool too). A tensor closed
// through the C ABI is freed by the collection its close prompts
// (abi/closed.go).
//
// Compiled pipelines are cached in memory by kernel key. What a new process
// can reuse, each kernel's WGSL source and the tuner's choice of variant per
// shape class, is kept on disk (diskCache, under $XDG_CACHE_HOME/webtensor),
// keyed by format, device and the code it came from; the browser build keeps
// nothing on disk.
//
// A software adapter (Mesa lavapipe, SwiftShader) is never the default
// device: it is slower than the native CPU backend. Ask for it with
// WEBTENSOR_DEVICE=webgpu.
package webgpu
