//go:build !(js && wasm && wtsimd)

package cpu

// The kernels a host provides outside Go's assembly: only the browser
// build's wasm SIMD module has them (ew_wasmsimd.go says what they are).
// They are functions rather than variables set at start-up so that a
// slice passed to one does not escape (a call through a function variable
// moves the caller's stack buffers to the heap); here hostKernels is a
// constant false and every call site compiles away.

const hostKernels = false

func hostUnaryF32(ewUn, []float32, []float32) bool                                 { return false }
func hostExpSumF32([]float32, []float32, float32) float64                          { return 0 }
func hostSoftmaxRowF32([]float32, []float32, bool, bool) (float64, bool)           { return 0, false }
func hostPackA4([]float32, []float32, int, int, int, int)                          {}
func hostLayerNormRowF32([]float32, []float32, []float32, []float32, float64) bool { return false }
