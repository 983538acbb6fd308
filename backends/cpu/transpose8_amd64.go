package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func transpose8F32AVX2(dst *float32, dstStride int, src *float32, ld int, k int)

//go:noescape
func transpose4F32AVX2(dst *float32, dstStride int, src *float32, ld int, k int)

// transpose8Asm is the assembly transposition where the CPU has AVX2.
var transpose8Asm = cpu.X86.HasAVX2

// transpose8Vec writes columns 0..k&^7 of eight rows of src (ld apart) k-major
// into dst (column p's eight values at p*dstStride) and returns how many
// columns it wrote: 0 without the vector kernel, and the caller packs the
// rest. Slices too short panic here, before the assembly could read or
// write past them.
func transpose8Vec(dst []float32, dstStride int, src []float32, ld, k int) int {
	return transposeRowsVec(8, dst, dstStride, src, ld, k)
}

// transpose4Vec is transpose8Vec for four rows of src.
func transpose4Vec(dst []float32, dstStride int, src []float32, ld, k int) int {
	return transposeRowsVec(4, dst, dstStride, src, ld, k)
}

// transposeRowsVec is both, for rows 4 or 8. The kernels are called
// directly, not through a func value, which would move the callers' stack
// buffers to the heap.
func transposeRowsVec(rows int, dst []float32, dstStride int, src []float32, ld, k int) int {
	k &^= 7
	if !transpose8Asm || k == 0 {
		return 0
	}
	_, _ = src[(rows-1)*ld+k-1], dst[(k-1)*dstStride+rows-1]
	if rows == 4 {
		transpose4F32AVX2(unsafe.SliceData(dst), dstStride, unsafe.SliceData(src), ld, k)
	} else {
		transpose8F32AVX2(unsafe.SliceData(dst), dstStride, unsafe.SliceData(src), ld, k)
	}
	return k
}
