package cpu

import (
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// The einsum kernel contracts the operands pairwise, left to right. Each
// operand is first read through a strided view that takes its diagonals
// (a repeated label's strides add up) and broadcasts its size-1 dims, so
// every intermediate is a dense array with distinct labels. Labels no later
// step needs are summed away as early as possible; a contraction permutes
// both sides to [batch, free, contracted] and [batch, contracted, free] and
// runs one batched matrix product (gemmF32 for the float types).

func init() {
	register("einsum", einsumKernel)
	register("_einsum_scatter", einsumScatterKernel)
}

// einsumArray is a dense row-major array whose dims carry distinct labels.
type einsumArray[T linalgElem] struct {
	labels []int
	shape  []int
	data   []T
}

func einsumKernel(k *core.KernelCall) error {
	shapes := make([]core.Shape, len(k.Inputs))
	for i, t := range k.Inputs {
		shapes[i] = t.Shape()
	}
	p, err := oprules.ParseEinsum(k.Attrs.String("equation"), shapes)
	if err != nil {
		return err
	}
	out := k.Outputs[0]
	switch out.DType() {
	case core.F64:
		writeF64(out, runEinsum(p, k.Inputs, readF64))
	case core.F32, core.F16, core.BF16:
		// Half-precision operands are widened to f32, as PyTorch's CPU
		// kernels accumulate them.
		res := runEinsum(p, k.Inputs, readAsF32)
		if out.DType() == core.F32 {
			copy(f32s(out), res)
			return nil
		}
		vals := tempF64(len(res))
		for i, v := range res {
			vals[i] = float64(v)
		}
		writeF64(out, vals)
	default:
		writeI64(out, runEinsum(p, k.Inputs, readI64))
	}
	return nil
}

func readAsF32(t *core.Tensor) []float32 {
	if denseF32(t) {
		return slices.Clone(f32s(t))
	}
	v := readF64(t)
	out := tempF32(len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func runEinsum[T linalgElem](p *oprules.EinsumPlan, ins []*core.Tensor, read func(*core.Tensor) []T) []T {
	arrays := make([]einsumArray[T], len(ins))
	for i, t := range ins {
		arrays[i] = einsumOperand(t, p.Operands[i], p.Sizes, read)
	}
	// needed[l] counts the remaining uses of label l: the output's and
	// those of operands not yet contracted.
	needed := make([]int, p.NumLabels())
	for _, l := range p.Output {
		needed[l]++
	}
	for _, a := range arrays {
		for _, l := range a.labels {
			needed[l]++
		}
	}
	release := func(a einsumArray[T]) {
		for _, l := range a.labels {
			needed[l]--
		}
	}
	cur := arrays[0]
	release(cur)
	cur = cur.sumOut(func(l int) bool { return needed[l] > 0 })
	for _, next := range arrays[1:] {
		release(next)
		next = next.sumOut(func(l int) bool { return needed[l] > 0 || slices.Contains(cur.labels, l) })
		cur = einsumContract(cur, next, func(l int) bool { return needed[l] > 0 })
	}
	return cur.sumOut(func(l int) bool { return slices.Contains(p.Output, l) }).permute(p.Output).data
}

// einsumOperand reads t through a view with one dim per distinct label:
// repeated labels walk the diagonal, size-1 dims broadcast with stride 0.
func einsumOperand[T linalgElem](t *core.Tensor, labels, sizes []int, read func(*core.Tensor) []T) einsumArray[T] {
	shape, strides := t.Shape(), t.Strides()
	var a einsumArray[T]
	var viewStrides []int
	for d, l := range labels {
		st := strides[d]
		if shape[d] == 1 {
			st = 0
		}
		if j := slices.Index(a.labels, l); j >= 0 {
			viewStrides[j] += st
			continue
		}
		a.labels = append(a.labels, l)
		a.shape = append(a.shape, sizes[l])
		viewStrides = append(viewStrides, st)
	}
	a.data = read(core.NewView(t, core.Shape(a.shape), viewStrides, t.Offset()))
	return a
}

// sumOut sums the dims whose label keep rejects.
func (a einsumArray[T]) sumOut(keep func(l int) bool) einsumArray[T] {
	var axes []int
	var out einsumArray[T]
	for d, l := range a.labels {
		if keep(l) {
			out.labels = append(out.labels, l)
			out.shape = append(out.shape, a.shape[d])
		} else {
			axes = append(axes, d)
		}
	}
	if len(axes) == 0 {
		return a
	}
	out.data = make([]T, core.Shape(out.shape).Numel())
	for i, o := range reduceIndex(core.Shape(a.shape), axes) {
		out.data[o] += a.data[i]
	}
	return out
}

// permute reorders the dims to the given label order (a copy unless the
// order is already right).
func (a einsumArray[T]) permute(order []int) einsumArray[T] {
	if slices.Equal(order, a.labels) {
		return a
	}
	oldStrides := core.ContiguousStrides(core.Shape(a.shape))
	out := einsumArray[T]{labels: slices.Clone(order), shape: make([]int, len(order))}
	strides := make([]int, len(order))
	for i, l := range order {
		d := slices.Index(a.labels, l)
		out.shape[i], strides[i] = a.shape[d], oldStrides[d]
	}
	n := len(a.data)
	out.data = make([]T, n)
	idx := make([]int, len(order))
	pos := 0
	for i := 0; i < n; i++ {
		out.data[i] = a.data[pos]
		for d := len(order) - 1; d >= 0; d-- {
			idx[d]++
			pos += strides[d]
			if idx[d] < out.shape[d] {
				break
			}
			pos -= strides[d] * out.shape[d]
			idx[d] = 0
		}
	}
	return out
}

// einsumContract multiplies two arrays and sums the labels they share that
// keep rejects; shared labels keep accepts become batch dims.
func einsumContract[T linalgElem](a, b einsumArray[T], keep func(l int) bool) einsumArray[T] {
	split := kernelkit.SplitEinsumLabels(a.labels, b.labels, keep)
	batch, contracted, aFree, bFree := split.Batch, split.Contracted, split.AFree, split.BFree
	a = a.permute(slices.Concat(batch, aFree, contracted))
	b = b.permute(slices.Concat(batch, contracted, bFree))
	size := func(x einsumArray[T], from, n int) int { return core.Shape(x.shape[from : from+n]).Numel() }
	bt, m := size(a, 0, len(batch)), size(a, len(batch), len(aFree))
	k, n := size(a, len(batch)+len(aFree), len(contracted)), size(b, len(batch)+len(contracted), len(bFree))
	out := einsumArray[T]{labels: slices.Concat(batch, aFree, bFree)}
	out.shape = slices.Concat(a.shape[:len(batch)+len(aFree)], b.shape[len(batch)+len(contracted):])
	out.data = batchedProduct(a.data, b.data, bt, m, k, n)
	return out
}

// batchedProduct multiplies bt pairs of dense m x k and k x n matrices.
func batchedProduct[T linalgElem](a, b []T, bt, m, k, n int) []T {
	c := make([]T, bt*m*n)
	if len(c) == 0 {
		return c
	}
	offs := func(step int) []int {
		o := make([]int, bt)
		for i := range o {
			o[i] = i * step
		}
		return o
	}
	la, lb := matLayout{offs: offs(m * k), rs: k, cs: 1}, matLayout{offs: offs(k * n), rs: n, cs: 1}
	if af, ok := any(a).([]float32); ok {
		gemmBatchedF32(af, la, any(b).([]float32), lb, m, n, k, any(c).([]float32))
		return c
	}
	d := oprules.MatmulDims{Batch: core.Shape{bt}, M: m, K: k, N: n}
	return matmulLoop(a, b, la, lb, d)
}

// einsumScatterKernel writes x into the output of "K->S": along letters
// only S has the value is broadcast, and where S repeats a letter only the
// diagonal is set.
func einsumScatterKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	eq := k.Attrs.String("equation")
	from, err := oprules.ParseEinsumScatter(eq, x.Shape(), out.Shape())
	if err != nil {
		return err
	}
	_, s, _ := strings.Cut(eq, "->")
	xStrides := core.ContiguousStrides(x.Shape())
	first := make([]int, len(s))
	for d := range s {
		first[d] = strings.IndexByte(s, s[d])
	}
	shape := out.Shape()
	n := shape.Numel()
	// src[i] is the input element of output i, or -1 off the diagonal.
	src := make([]int, n)
	idx := make([]int, len(shape))
	for i := 0; i < n; i++ {
		pos := 0
		for d := range shape {
			if idx[d] != idx[first[d]] {
				pos = -1
				break
			}
			if first[d] == d && from[d] >= 0 {
				pos += idx[d] * xStrides[from[d]]
			}
		}
		src[i] = pos
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	if out.DType().IsFloat() {
		v := readF64(x)
		res := make([]float64, n)
		for i, p := range src {
			if p >= 0 {
				res[i] = v[p]
			}
		}
		writeF64(out, res)
		return nil
	}
	v := readI64(x)
	res := make([]int64, n)
	for i, p := range src {
		if p >= 0 {
			res[i] = v[p]
		}
	}
	writeI64(out, res)
	return nil
}
