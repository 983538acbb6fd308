//go:build !amd64

package cpu

// wgVector is false: the Winograd transforms run their Go loops here.
var wgVector = false

func wgInput8(dst []float32, dstStride int, src []float32, rowStride, half, plane, dstStep, channels int) {
	panic("cpu: no vector Winograd kernels on this architecture")
}

func wgOutput8(m []float32, mStride int, out []float32, rowStride, ld, outStep int, bias []float32, channels int) {
	panic("cpu: no vector Winograd kernels on this architecture")
}
