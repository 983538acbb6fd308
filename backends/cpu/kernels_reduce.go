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
		writeF64(out, reduceSum(in, axes))
		return nil
	})
	register("mean", func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := core.ReducedAxes(in, k.Attrs)
		acc := reduceSum(in, axes)
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

// reduceSum sums over the reduced axes in float64, visiting the input in
// row-major order for every output.
func reduceSum(in *core.Tensor, axes []int) []float64 {
	if acc, ok := sumLeadingF32(in, axes); ok {
		return acc
	}
	return reduceF64(in, axes, 0, func(acc, v float64) float64 { return acc + v })
}

// sumLeadingF32 is reduceSum of a dense f32 tensor over its leading axes (a
// bias's gradient, summed over the rows): read in place rather than
// widened into a float64 copy, the outputs split across tasks, each
// visiting the rows in the same order - the same sums.
func sumLeadingF32(in *core.Tensor, axes []int) ([]float64, bool) {
	if !denseF32(in) {
		return nil, false
	}
	for i, a := range axes {
		if a != i {
			return nil, false
		}
	}
	shape := in.Shape()
	rows, inner := shape[:len(axes)].Numel(), shape[len(axes):].Numel()
	x, acc := f32s(in), make([]float64, inner)
	parallelFor(inner, rows, func(lo, hi int) {
		dst := acc[lo:hi]
		for r := 0; r < rows; r++ {
			for j, v := range x[r*inner+lo : r*inner+hi] {
				dst[j] += float64(v)
			}
		}
	})
	return acc, true
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
