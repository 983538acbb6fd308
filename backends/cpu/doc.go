// Package cpu is the pure-Go reference backend: no cgo, it builds for
// js/wasm, and it is the oracle every other backend is tested against.
//
// Most kernels read their inputs into float64 (or int64 for integer math) in
// logical order, compute, and write the output dtype, so every dtype and every
// strided layout shares one code path and rounds once. The ops that dominate
// training time (matmul, convolution, softmax, normalisation, elementwise f32)
// have float32 fast paths and run in parallel over the cores.
//
// One kernel is assembly: the float32 GEMM's micro-kernel on amd64 with
// AVX2 and FMA (gemm_amd64.s), four times the Go kernel's speed, since Go
// has no vector intrinsics. It is still no cgo, the Go kernel remains the
// fallback everywhere else, and both are tested against a float64
// reference. Fused multiply-adds round once per step, so float32 products
// may differ in the last bits between machines with and without it.
//
// Importing the package registers the "cpu" backend with core.
package cpu
