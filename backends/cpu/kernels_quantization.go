package cpu

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Kernels for affine 8-bit quantisation; the per-element arithmetic lives in
// oprules.QuantParams so that every backend rounds the same way.

func init() {
	register("quantize", quantizeKernel)
	register("dequantize", dequantizeKernel)
	register("dequantize_int8x4", dequantizeInt8x4Kernel)
}

// dequantizeInt8x4Kernel: byte b of word w of row r is element 4w+b,
// sign-extended and times the row's scale.
func dequantizeInt8x4Kernel(k *core.KernelCall) error {
	packed, scale, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	rows, words := packed.Shape()[0], packed.Shape()[1]
	ps, po := packed.Strides(), packed.Offset()
	src := u32view(host(packed))
	sc := f32Logical(scale)
	dst := f32Data(out)
	parallelFor(rows, 4*words, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			s, row := sc[r], dst[r*4*words:(r+1)*4*words]
			for w := range words {
				v := src[po+r*ps[0]+w*ps[1]]
				row[4*w] = float32(int8(v)) * s
				row[4*w+1] = float32(int8(v>>8)) * s
				row[4*w+2] = float32(int8(v>>16)) * s
				row[4*w+3] = float32(int8(v>>24)) * s
			}
		}
	})
	return nil
}

func quantizeKernel(k *core.KernelCall) error {
	return quantMap(k, k.Outputs[0].DType(), readF64, tempI64, writeI64,
		func(p oprules.QuantParams, x float64, channel int) int64 {
			return p.Quantize(float32(x), channel)
		})
}

func dequantizeKernel(k *core.KernelCall) error {
	return quantMap(k, k.Inputs[0].DType(), readI64, tempF64, writeF64,
		func(p oprules.QuantParams, q int64, channel int) float64 {
			return float64(p.Dequantize(q, channel))
		})
}

// quantMap is quantize's and dequantize's kernel: the parameters for the
// integer dtype intType parsed from the call's attributes, then fn on
// every element of the input (in parallel) with its channel.
func quantMap[S, D int64 | float64](k *core.KernelCall, intType core.DType,
	read func(*core.Tensor) []S, temp func(int) []D, write func(*core.Tensor, []D),
	fn func(p oprules.QuantParams, x S, channel int) D) error {
	in, out := k.Inputs[0], k.Outputs[0]
	shape := in.Shape()
	p, err := oprules.ParseQuantParams(shape, intType, k.Attrs)
	if err != nil {
		return err
	}
	src := read(in)
	dst := temp(len(src))
	parallelFor(len(src), 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = fn(p, src[i], p.Channel(shape, i))
		}
	})
	write(out, dst)
	return nil
}
