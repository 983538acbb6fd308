package cpu

import (
	"github.com/webtensor/webtensor/core"
)

// Reductions stream their input (stream.go): a view may broadcast a few
// elements to more than memory holds, so none is widened into a copy. A
// reduced dim that the view broadcasts (stride 0) is read once: max, min,
// any and all are unchanged by repeats, and a sum of m equal groups is m
// times one group, formed as a product and rounded once (m additions would
// round m times). Every other input is summed in row-major order, the same
// steps as a sequential loop.

func init() {
	register("sum", func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axes := core.ReducedAxes(in, k.Attrs)
		if !out.DType().IsFloat() {
			writeI64(out, sumI64(in, axes))
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
	w, mult := reduction(in, axes, true)
	acc := tempF64(outCount(in.Shape(), axes))
	addRunsF64(&w, in, acc, nil)
	scaleF64(acc, mult)
	return acc
}

// addRunsF64 adds every element (f of it, when f is not nil) into its
// output, in row-major order.
func addRunsF64(w *walk, in *core.Tensor, acc []float64, f func(float64) float64) {
	ostep := w.step(1)
	runsF64(w, in, func(pos []int, v []float64) {
		if f != nil {
			for k, x := range v {
				v[k] = f(x)
			}
		}
		o := pos[1]
		if ostep == 0 { // the run lies in one group: keep the sum in a register
			a := acc[o]
			for _, x := range v {
				a += x
			}
			acc[o] = a
			return
		}
		for k, x := range v {
			acc[o+k*ostep] += x
		}
	})
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

// sumI64 sums integers exactly (wrapping like PyTorch); a group repeated
// mult times is mult times one, the same in wrapping arithmetic.
func sumI64(in *core.Tensor, axes []int) []int64 {
	w, mult := reduction(in, axes, true)
	acc := tempI64(outCount(in.Shape(), axes))
	ostep := w.step(1)
	runsI64(&w, in, func(pos []int, v []int64) {
		for k, x := range v {
			acc[pos[1]+k*ostep] += x
		}
	})
	if mult > 1 {
		for i := range acc {
			acc[i] *= int64(mult)
		}
	}
	return acc
}

// sumLeadingF32 is reduceSum of a dense f32 tensor over its leading axes (a
// bias's gradient, summed over the rows): read in place rather than
// widened into a float64 copy, the outputs split across tasks, each
// visiting the rows in the same order - the same sums.
func sumLeadingF32(in *core.Tensor, axes []int) ([]float64, bool) {
	// An empty view counts as contiguous whatever its other dims; walking
	// its rows ([2^30, 0]) would take seconds for nothing.
	if !denseF32(in) || in.Numel() == 0 {
		return nil, false
	}
	for i, a := range axes {
		if a != i {
			return nil, false
		}
	}
	shape := in.Shape()
	rows, inner := shape[:len(axes)].Numel(), shape[len(axes):].Numel()
	x, acc := f32s(in), tempF64(inner)
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
