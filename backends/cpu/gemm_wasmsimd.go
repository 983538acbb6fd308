//go:build js && wasm && wtsimd

package cpu

import (
	"fmt"
	"unsafe"
)

// The browser build (`make wasm-sdk` builds with -tags wtsimd) runs the
// GEMM macro-kernel in a small WebAssembly SIMD module written in C
// (sdk/js/wasm/simd/gemm.c): Go's wasm port emits scalar code only. The
// module imports this instance's memory, so it reads the packed blocks and
// writes C in place, and the page's loader (sdk/js/src/wasm.ts) provides
// these imports, forwarding to it. The import is resolved when the module is
// instantiated, so only a build whose host supplies it may carry this file:
// without the tag (go test under js/wasm, other embedders) the Go kernels
// run, and with it the loader reports the SIMD module absent (it failed to
// load, or the browser has no wasm SIMD) through simdAvailable.

//go:wasmimport webtensor_simd available
func simdAvailable() int32

//go:wasmimport webtensor_simd sgemm_macro
func simdSgemmMacro(store, mc, nc, kc int32, alpha float32, ap, bp unsafe.Pointer, s0, s1 int32, c unsafe.Pointer, ldc int32, tile unsafe.Pointer)

// simdNR is gemm.c's NR: the packed B slivers' width while the kernel is in use.
const simdNR = 8

// simdTile is the kernel's scratch for partial edge tiles (4 x simdNR: gemm.c's MR is gemmMR's default, 4),
// in Go's memory so the C code needs no stack of its own. Calls cannot
// overlap: the wasm instance runs one goroutine at a time and the call does
// not yield.
var simdTile [4 * simdNR]float32

// gemmMacroSIMD checks that every slice covers what the C code will touch
// (it trusts its arguments), then calls it.
func gemmMacroSIMD(store bool, mc, nc, kc int, alpha float32, ap, bp []float32, s0, s1 int, c []float32, ldc int) {
	if s0 >= s1 || mc <= 0 {
		return
	}
	kp := gemmRoundUp(kc, gemmKU)
	lastRow, lastCol := mc-1, min(nc, s1*simdNR)-1
	if len(ap) < gemmRoundUp(mc, gemmMR)*kp || len(bp) < s1*kp*simdNR || len(c) <= lastRow*ldc+lastCol || lastCol < s0*simdNR {
		panic(fmt.Sprintf("gemm: wasm SIMD macro-kernel arguments out of range (mc %d nc %d kc %d slivers %d..%d ldc %d; len ap %d bp %d c %d)",
			mc, nc, kc, s0, s1, ldc, len(ap), len(bp), len(c)))
	}
	st := int32(0)
	if store {
		st = 1
	}
	simdSgemmMacro(st, int32(mc), int32(nc), int32(kc), alpha, unsafe.Pointer(unsafe.SliceData(ap)), unsafe.Pointer(unsafe.SliceData(bp)),
		int32(s0), int32(s1), unsafe.Pointer(unsafe.SliceData(c)), int32(ldc), unsafe.Pointer(&simdTile[0]))
}

func init() {
	if hostKernels {
		gemmNR, gemmMacro = simdNR, gemmMacroSIMD
	}
}
