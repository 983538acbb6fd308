//go:build linux && cgo

package cuda

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// einsum follows the CPU backend's plan (backends/cpu/kernels_linalg_einsum.go): each
// operand is viewed with one dim per distinct label (a repeated label's
// strides add up, walking the diagonal; size-1 dims broadcast), the
// operands are contracted pairwise left to right, labels no later step
// needs are summed away as early as possible (the reduction kernel, f64 or
// i64 accumulation), and each contraction is one batched product through
// matmulInto (cuBLAS; integer products as a reduction over K), its shared
// kept labels the batch. Half-precision operands are widened to f32 first
// and the result rounded once at the end, as the CPU does. Operands are
// read through their views; a copy is made only where a product's rows or
// columns do not merge into one stride.

func init() {
	register("einsum", einsumKernel)
	register("_einsum_scatter", einsumScatterKernel)
}

// einArr is a tensor whose dims carry distinct labels.
type einArr struct {
	t      *core.Tensor
	labels []int
}

// einsumRun holds one call's working dtype and temporaries.
type einsumRun struct {
	b   *Backend
	w   core.DType
	tmp []*core.Tensor
}

func (e *einsumRun) temp(shape core.Shape) (*core.Tensor, error) {
	t, err := core.Empty(e.b, shape, e.w)
	if err == nil {
		e.tmp = append(e.tmp, t)
	}
	return t, err
}

func (e *einsumRun) release() {
	for _, t := range e.tmp {
		t.Release()
	}
}

// copyOf is a contiguous copy of t in the working dtype.
func (e *einsumRun) copyOf(t *core.Tensor) (*core.Tensor, error) {
	c, err := e.temp(t.Shape())
	if err != nil {
		return nil, err
	}
	expr := lower.Conv("x0", computeType(t.DType()), computeType(e.w))
	return c, e.b.mapRun("einsum", []*core.Tensor{t}, c, expr, nil)
}

// operand views t with one dim per distinct label, in first-occurrence
// order, converted to the working dtype when it differs.
func (e *einsumRun) operand(t *core.Tensor, labels, sizes []int) (einArr, error) {
	shape, strides := t.Shape(), t.Strides()
	var a einArr
	var sh, st []int
	for d, l := range labels {
		s := strides[d]
		if shape[d] == 1 {
			s = 0
		}
		if j := slices.Index(a.labels, l); j >= 0 {
			st[j] += s
			continue
		}
		a.labels = append(a.labels, l)
		sh = append(sh, sizes[l])
		st = append(st, s)
	}
	a.t = core.NewView(t, core.Shape(sh), st, t.Offset())
	if t.DType() != e.w {
		c, err := e.copyOf(a.t)
		if err != nil {
			return a, err
		}
		a.t = c
	}
	return a, nil
}

// permuted views a's dims in the label order given.
func permuted(a einArr, order []int) *core.Tensor {
	sh, st := a.t.Shape(), a.t.Strides()
	ps, pst := make([]int, len(order)), make([]int, len(order))
	for i, l := range order {
		d := slices.Index(a.labels, l)
		ps[i], pst[i] = sh[d], st[d]
	}
	return core.NewView(a.t, core.Shape(ps), pst, a.t.Offset())
}

// sumOut sums the dims whose label keep rejects.
func (e *einsumRun) sumOut(a einArr, keep func(l int) bool) (einArr, error) {
	var kept, summed []int
	for _, l := range a.labels {
		if keep(l) {
			kept = append(kept, l)
		} else {
			summed = append(summed, l)
		}
	}
	if len(summed) == 0 {
		return a, nil
	}
	src := permuted(a, append(append([]int{}, kept...), summed...))
	shape := src.Shape()
	nk := len(kept)
	f := lower.NewFrame(shape, seq(nk, len(shape)))
	if l := f.Layout(src); len(l.KeptShape) > maxKeptRank || len(l.RedShape) > maxReduceRank {
		// Too many dims for the reduction's layout: a contiguous copy
		// reduces as [kept, summed].
		c, err := e.copyOf(src)
		if err != nil {
			return a, err
		}
		o, r := shape[:nk].Numel(), shape[nk:].Numel()
		src = core.NewView(c, core.Shape{o, r}, []int{r, 1}, 0)
		f = lower.NewFrame(src.Shape(), []int{1})
	}
	out, err := e.temp(shape[:nk].Clone())
	if err != nil {
		return a, err
	}
	acc := "SumAcc<" + accType(computeType(e.w)) + ">"
	err = e.b.reduce(reduction{op: "einsum", frame: f, ins: []*core.Tensor{src}, out: out, acc: acc, value: "x0", final: "acc.s"})
	return einArr{t: out, labels: kept}, err
}

func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// mergeDims merges dims (outermost first) into one: their total size and
// the stride of the innermost, or ok false when they do not step evenly.
func mergeDims(shape, strides []int) (size, stride int, ok bool) {
	size = 1
	for i := len(shape) - 1; i >= 0; i-- {
		switch {
		case shape[i] == 1:
		case size == 1:
			size, stride = shape[i], strides[i]
		case strides[i] != stride*size:
			return 0, 0, false
		default:
			size *= shape[i]
		}
	}
	return size, stride, true
}

// matrix views a as [batch..., rows, cols] for the label groups given,
// copying it when a group does not merge.
func (e *einsumRun) matrix(a einArr, batch, rows, cols []int) (*core.Tensor, int, int, error) {
	order := slices.Concat(batch, rows, cols)
	p := permuted(a, order)
	sh, st := p.Shape(), p.Strides()
	nb, nr := len(batch), len(rows)
	r, rs, ok1 := mergeDims(sh[nb:nb+nr], st[nb:nb+nr])
	c, cs, ok2 := mergeDims(sh[nb+nr:], st[nb+nr:])
	if !ok1 || !ok2 {
		cp, err := e.copyOf(p)
		if err != nil {
			return nil, 0, 0, err
		}
		return e.matrix(einArr{t: cp, labels: order}, batch, rows, cols)
	}
	shape := append(sh[:nb].Clone(), r, c)
	strides := append(append([]int{}, st[:nb]...), rs, cs)
	return core.NewView(p, shape, strides, p.Offset()), r, c, nil
}

// contract multiplies a and b, summing the labels they share that keep
// rejects; shared labels keep accepts become batch dims.
func (e *einsumRun) contract(a, b einArr, keep func(l int) bool) (einArr, error) {
	split := kernelkit.SplitEinsumLabels(a.labels, b.labels, keep)
	batch, contracted, aFree, bFree := split.Batch, split.Contracted, split.AFree, split.BFree
	am, m, k, err := e.matrix(a, batch, aFree, contracted)
	if err != nil {
		return einArr{}, err
	}
	bm, _, n, err := e.matrix(b, batch, contracted, bFree)
	if err != nil {
		return einArr{}, err
	}
	bshape := core.Shape(am.Shape()[:len(batch)]).Clone()
	labels := slices.Concat(batch, aFree, bFree)
	var shape core.Shape
	for _, l := range labels {
		if d := slices.Index(a.labels, l); d >= 0 {
			shape = append(shape, a.t.Shape()[d])
		} else {
			shape = append(shape, b.t.Shape()[slices.Index(b.labels, l)])
		}
	}
	out, err := e.temp(shape)
	if err != nil {
		return einArr{}, err
	}
	c := core.NewView(out, append(bshape.Clone(), m, n), contiguousStrides(append(bshape.Clone(), m, n)), 0)
	return einArr{t: out, labels: labels}, e.b.matmulInto("einsum", am, bm, c, bshape, m, k, n, 1)
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
	e := &einsumRun{b: cudaOf(k), w: out.DType()}
	if e.w == core.F16 || e.w == core.BF16 {
		e.w = core.F32
	}
	defer e.release()
	arrays := make([]einArr, len(k.Inputs))
	for i, t := range k.Inputs {
		if arrays[i], err = e.operand(t, p.Operands[i], p.Sizes); err != nil {
			return err
		}
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
	release := func(a einArr) {
		for _, l := range a.labels {
			needed[l]--
		}
	}
	cur := arrays[0]
	release(cur)
	if cur, err = e.sumOut(cur, func(l int) bool { return needed[l] > 0 }); err != nil {
		return err
	}
	for _, next := range arrays[1:] {
		release(next)
		if next, err = e.sumOut(next, func(l int) bool { return needed[l] > 0 || slices.Contains(cur.labels, l) }); err != nil {
			return err
		}
		if cur, err = e.contract(cur, next, func(l int) bool { return needed[l] > 0 }); err != nil {
			return err
		}
	}
	if cur, err = e.sumOut(cur, func(l int) bool { return slices.Contains(p.Output, l) }); err != nil {
		return err
	}
	src := permuted(cur, p.Output)
	expr := lower.Conv("x0", computeType(e.w), computeType(out.DType()))
	return e.b.mapRun("einsum", []*core.Tensor{src}, out, expr, nil)
}

// einsumScatterKernel writes x into the output of "K->S": broadcast along
// the letters only S has, on the diagonal where S repeats a letter, zero
// elsewhere; one thread per output element.
func einsumScatterKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	eq := k.Attrs.String("equation")
	from, err := oprules.ParseEinsumScatter(eq, x.Shape(), out.Shape())
	if err != nil {
		return err
	}
	_, s, _ := strings.Cut(eq, "->")
	xs := make([]int, len(s))
	var cond []string
	for d := range s {
		first := strings.IndexByte(s, s[d])
		switch {
		case first != d:
			cond = append(cond, "c"+strconv.Itoa(d)+" == c"+strconv.Itoa(first))
		case from[d] >= 0 && x.Shape()[from[d]] != 1:
			xs[d] = x.Strides()[from[d]]
		}
	}
	if len(s) > maxRank {
		return fmt.Errorf("cuda: _einsum_scatter: %d output dims; kernels take at most %d", len(s), maxRank)
	}
	g := &genKernel{op: "_einsum_scatter", shape: out.Shape(), ops: []genOp{written(out), {t: x, offset: x.Offset(), strides: xs}}}
	on := strings.Join(cond, " && ")
	if on == "" {
		on = "true"
	}
	return cudaOf(k).runIndexedKeyed(g, "escatter|"+on, func() string {
		return "p0[" + g.at(0) + "] = (" + on + ") ? p1[" + g.at(1) + "] : " + zeroElem(out.DType()) + ";"
	})
}
