// Package cpu is the pure-Go reference backend: no cgo, it builds for
// js/wasm, and it is the oracle every other backend is tested against.
//
// Most kernels read their inputs into float64 (or int64 for integer math) in
// logical order, compute, and write the output dtype, so every dtype and every
// strided layout shares one code path and rounds once. The ops that dominate
// training time (matmul, convolution, softmax, normalisation, elementwise f32)
// have float32 fast paths and run in parallel over the cores.
//
// Importing the package registers the "cpu" backend with core.
package cpu
