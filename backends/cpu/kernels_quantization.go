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
	x, out := k.Inputs[0], k.Outputs[0]
	shape := x.Shape()
	p, err := oprules.ParseQuantParams(shape, out.DType(), k.Attrs)
	if err != nil {
		return err
	}
	vals := readF64(x)
	q := tempI64(len(vals))
	parallelFor(len(vals), 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			q[i] = p.Quantize(float32(vals[i]), p.Channel(shape, i))
		}
	})
	writeI64(out, q)
	return nil
}

func dequantizeKernel(k *core.KernelCall) error {
	q, out := k.Inputs[0], k.Outputs[0]
	shape := q.Shape()
	p, err := oprules.ParseQuantParams(shape, q.DType(), k.Attrs)
	if err != nil {
		return err
	}
	ints := readI64(q)
	vals := tempF64(len(ints))
	parallelFor(len(ints), 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			vals[i] = float64(p.Dequantize(ints[i], p.Channel(shape, i)))
		}
	})
	writeF64(out, vals)
	return nil
}
