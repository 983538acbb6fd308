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
