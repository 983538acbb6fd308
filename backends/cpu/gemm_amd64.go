package cpu

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The AVX2/FMA micro-kernel (gemm_amd64.s): 4 rows of A broadcast against
// 16 columns of B held in two ymm registers, eight accumulators.

//go:noescape
func gemmMicro4x16AVX2(ap, bp *float32, kp int, tile *float32)

// gemmMicro4x16 runs the assembly kernel over slivers of kp k-steps.
func gemmMicro4x16(ap, bp, tile []float32) {
	kp := len(ap) / gemmMR
	if kp == 0 || len(bp) < kp*16 || len(tile) < gemmMR*16 {
		clear(tile)
		return
	}
	gemmMicro4x16AVX2(unsafe.SliceData(ap), unsafe.SliceData(bp), kp, unsafe.SliceData(tile))
}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		gemmNR, gemmMicro = 16, gemmMicro4x16
	}
}
