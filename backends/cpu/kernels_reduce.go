package cpu

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Reductions read their input in place through the plan of
// reduce_plan.go (reduce_ops.go): a view may broadcast a few elements to
// more than memory holds, so none is widened into a copy. A reduced dim
// that the view broadcasts (stride 0) is read once: max, min, any and all
// are unchanged by repeats, and a sum of m equal groups is m times one
// group, formed as a product and rounded once (m additions would round m
// times). Sums add blocks in float64 and combine them with compensation,
// in an order that depends on the shape only: the same bits on any
// number of threads and for a view as for its contiguous copy.

func init() {
	register("sum", func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
		if !out.DType().IsFloat() {
			writeI64(out, planSumsI64(in, axes))
			return nil
		}
		writeF64(out, planSums(in, axes, formSum))
		return nil
	})
	register("mean", func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
		acc := planSums(in, axes, formSum)
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

// scaleF64 multiplies sums of one group by the number of times the group
// repeats (mult > 1 only where a reduced dim broadcasts).
func scaleF64(acc []float64, mult int) {
	if mult == 1 {
		return
	}
	m := float64(mult)
	for i := range acc {
		acc[i] *= m
	}
}
