//go:build js && wasm && wtsimd

package cpu

import "unsafe"

// The browser build's transcendentals in the wasm SIMD module
// (sdk/js/wasm/simd/math.c), which the page's loader provides beside the
// GEMM kernel (gemm_wasmsimd.go says how the imports are resolved): Go's
// wasm port runs math.Exp and math.Erfc one element at a time, about 60 ns
// each in V8, and a sentence encoder's GELU and attention softmax spent
// most of a browser run there. The module computes the x86 kernels'
// algorithms four lanes at a time, a few ulp from the float64 reference
// as theirs are.

//go:wasmimport webtensor_simd unary_f32
func simdUnaryF32(op int32, dst, src unsafe.Pointer, n int32)

//go:wasmimport webtensor_simd exp_sum_f32
func simdExpSumF32(dst, x unsafe.Pointer, n int32, shift float32) float64

//go:wasmimport webtensor_simd pack_a4_f32
func simdPackA4F32(dst, a unsafe.Pointer, lda, rows, kc, kp int32)

//go:wasmimport webtensor_simd layer_norm_row_f32
func simdLayerNormRowF32(y, x, w, b unsafe.Pointer, n int32, eps float64)

//go:wasmimport webtensor_simd softmax_row_f32
func simdSoftmaxRowF32(y, x unsafe.Pointer, n int32, normalise, safe int32) float64

// simdUnaryCode numbers the ops math.c has, as its enum does (0: not there).
func simdUnaryCode(op ewUn) int32 {
	switch op {
	case unExp:
		return 1
	case unSigmoid:
		return 2
	case unSilu:
		return 3
	case unGelu:
		return 4
	case unTanh:
		return 5
	case unGeluTanh:
		return 6
	}
	return 0
}

// simdMaxRun bounds one call's length: n crosses as an int32.
const simdMaxRun = 1 << 30

// hostKernels says whether the page's loader attached the module.
var hostKernels = simdAvailable() == 1

// hostUnaryF32 sets dst[i] = op(src[i]) and reports whether the module has
// the op (unF32).
func hostUnaryF32(op ewUn, dst, src []float32) bool {
	code := simdUnaryCode(op)
	if code == 0 {
		return false
	}
	for len(src) > 0 {
		n := min(len(src), simdMaxRun)
		simdUnaryF32(code, unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), int32(n))
		dst, src = dst[n:], src[n:]
	}
	return true
}

// hostExpSumF32 is expSumF32.
func hostExpSumF32(dst, x []float32, shift float32) float64 {
	var s float64
	for len(x) > 0 {
		n := min(len(x), simdMaxRun)
		var d unsafe.Pointer
		if dst != nil {
			_ = dst[n-1] // dst covers what the module writes
			d = unsafe.Pointer(&dst[0])
			dst = dst[n:]
		}
		s += simdExpSumF32(d, unsafe.Pointer(&x[0]), int32(n), shift)
		x = x[n:]
	}
	return s
}

// hostSoftmaxRowF32 is softmaxRowF32 (safe false) or softmaxSafeF32 (safe
// true) in one call; a row past simdMaxRun takes the Go steps (ok false).
func hostSoftmaxRowF32(y, x []float32, normalise, safe bool) (sum float64, ok bool) {
	if len(x) == 0 || len(x) > simdMaxRun {
		return 0, false
	}
	_ = y[len(x)-1] // y covers what the module writes
	return simdSoftmaxRowF32(unsafe.Pointer(&y[0]), unsafe.Pointer(&x[0]), int32(len(x)), b2i(normalise), b2i(safe)), true
}

// hostPackA4 is gemmPackA's full four-row slivers of a row-major A, in
// one call; dst and a were sliced by the caller to exactly what the module
// touches, and every length here is far below 2^31 (a block is gemmMC x
// gemmKC).
func hostPackA4(dst, a []float32, lda, rows, kc, kp int) {
	simdPackA4F32(unsafe.Pointer(&dst[0]), unsafe.Pointer(&a[0]), int32(lda), int32(rows), int32(kc), int32(kp))
}

// hostLayerNormRowF32 is one row of layerNormKernel's f32 path in one call
// (w and b nil where absent, else as long as x); an empty row or one past
// simdMaxRun takes the Go steps (false).
func hostLayerNormRowF32(y, x, w, b []float32, eps float64) bool {
	n := len(x)
	if n == 0 || n > simdMaxRun {
		return false
	}
	_, _ = y[n-1], x[n-1]
	wp, bp := unsafe.Pointer(nil), unsafe.Pointer(nil)
	if w != nil {
		wp = unsafe.Pointer(&w[:n][0])
	}
	if b != nil {
		bp = unsafe.Pointer(&b[:n][0])
	}
	simdLayerNormRowF32(unsafe.Pointer(&y[0]), unsafe.Pointer(&x[0]), wp, bp, int32(n), eps)
	return true
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
