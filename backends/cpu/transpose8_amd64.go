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
	k &^= 7
	if !transpose8Asm || k == 0 {
		return 0
	}
	_, _ = src[7*ld+k-1], dst[(k-1)*dstStride+7]
	transpose8F32AVX2(unsafe.SliceData(dst), dstStride, unsafe.SliceData(src), ld, k)
	return k
}

// transpose4Vec is transpose8Vec for four rows of src.
func transpose4Vec(dst []float32, dstStride int, src []float32, ld, k int) int {
	k &^= 7
	if !transpose8Asm || k == 0 {
		return 0
	}
	_, _ = src[3*ld+k-1], dst[(k-1)*dstStride+3]
	transpose4F32AVX2(unsafe.SliceData(dst), dstStride, unsafe.SliceData(src), ld, k)
	return k
}
