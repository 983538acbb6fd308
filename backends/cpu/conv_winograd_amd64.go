package cpu

import "golang.org/x/sys/cpu"

//go:noescape
func wgInput8AVX2(dst *float32, dstStride int, src *float32, rowStride int, half int, plane int, dstStep int, channels int)

//go:noescape
func wgOutput8AVX2(m *float32, mStride int, out *float32, rowStride int, ld int, outStep int, bias *float32, channels int)

// wgVector reports whether the Winograd transforms' vector kernels run:
// eight tiles an instruction, where Go's scalar loop took 35 cycles a
// tile and channel for the input transform alone, more than its product.
var wgVector = cpu.X86.HasAVX2

// wgInput8 and wgOutput8 call the kernels on eight tiles (conv_winograd.go
// says what they compute), with strides in elements. They check the
// bounds: slices too short panic before the assembly could read or write
// past them.
func wgInput8(dst []float32, dstStride int, src []float32, rowStride, half, plane, dstStep, channels int) {
	if channels <= 0 {
		return
	}
	_, _ = src[(channels-1)*plane+3*rowStride+half+8], dst[(channels-1)*dstStep+15*dstStride+7]
	wgInput8AVX2(&dst[0], 4*dstStride, &src[0], 4*rowStride, 4*half, 4*plane, 4*dstStep, channels)
}

func wgOutput8(m []float32, mStride int, out []float32, rowStride, ld, outStep int, bias []float32, channels int) {
	if channels <= 0 {
		return
	}
	_, _, _ = m[(channels-1)*ld+15*mStride+7], out[(channels-1)*outStep+rowStride+15], bias[channels-1]
	wgOutput8AVX2(&m[0], 4*mStride, &out[0], 4*rowStride, 4*ld, 4*outStep, &bias[0], channels)
}
