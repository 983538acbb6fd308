package cpu

import (
	"github.com/webtensor/webtensor/core"
)

func init() {
	register("sum", func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := core.ReducedAxes(in, k.Attrs)
		if !out.DType().IsFloat() {
			v := readI64(in)
			acc := make([]int64, out.Numel())
			for i, o := range reduceIndex(in.Shape(), axes) {
				acc[o] += v[i]
			}
			writeI64(out, acc)
			return nil
		}
		writeF64(out, reduceF64(in, axes, 0, func(acc, v float64) float64 { return acc + v }))
		return nil
	})
	register("mean", func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := core.ReducedAxes(in, k.Attrs)
		acc := reduceF64(in, axes, 0, func(acc, v float64) float64 { return acc + v })
		n := float64(reducedCount(in.Shape(), axes))
		for i := range acc {
			acc[i] /= n
		}
		writeF64(out, acc)
		return nil
	})
}

// reduceIndex maps every input element (row-major) to the flat index of the
// output element it reduces into.
func reduceIndex(shape core.Shape, axes []int) []int {
	reduced := make([]bool, len(shape))
	for _, a := range axes {
		reduced[a] = true
	}
	strides := make([]int, len(shape))
	acc := 1
	for d := len(shape) - 1; d >= 0; d-- {
		if !reduced[d] {
			strides[d] = acc
			acc *= shape[d]
		}
	}
	return stridedPositions(0, shape, strides)
}

// reducedCount is the number of input elements per output element.
func reducedCount(shape core.Shape, axes []int) int {
	n := 1
	for _, a := range axes {
		n *= shape[a]
	}
	return n
}

// reduceF64 folds step over the reduced axes, starting every output at init.
func reduceF64(in *core.Tensor, axes []int, init float64, step func(acc, v float64) float64) []float64 {
	shape := in.Shape()
	outN := core.ReduceShape(shape, axes, false).Numel()
	acc := make([]float64, outN)
	for i := range acc {
		acc[i] = init
	}
	v := readF64(in)
	for i, o := range reduceIndex(shape, axes) {
		acc[o] = step(acc[o], v[i])
	}
	return acc
}
