package webgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/wgsl"
)

// Gather and scatter along an axis, index_select, index_add, embedding,
// one_hot and masked_fill (wgsl/index.wgsl). Index values are checked on
// the GPU before the kernel runs (checkOnDevice: one flag word comes back,
// the indices only to word a failure), so an out-of-range index is the same
// error as on the CPU backend rather than a wrong read; the wait for the
// flag costs less than a silent bad answer. Scatter-style ops are deterministic:
// one thread per OUTPUT element loops over the index entries along the axis
// and combines those that name it, in the CPU's order, so there are no
// float atomics and sums do not depend on scheduling.

func init() {
	register("take_along_axis", sxTakeAlongAxisKernel)
	register("index_select", sxIndexSelectKernel)
	register("embedding", sxEmbeddingKernel)
	register("scatter", func(k *core.KernelCall) error { return sxScatterKernel(k, "", true) })
	register("scatter_add", func(k *core.KernelCall) error { return sxScatterKernel(k, "sum", true) })
	register("scatter_reduce", func(k *core.KernelCall) error {
		return sxScatterKernel(k, k.Attrs.String("reduce"), k.Attrs.Bool("include_self"))
	})
	register("index_add", sxIndexAddKernel)
	register("_scatter_extremum_grad", sxScatterExtremumGradKernel)
	register("_wrap_index", sxWrapIndexKernel)
	register("one_hot", sxOneHotKernel)
	register("masked_fill", sxMaskedFillKernel)
}

// sxCheckIndices rejects values of idx outside [0, size), or [-size, size)
// when negatives wrap, with the CPU backend's message. The check runs on
// the GPU (checkOnDevice); idx is read back only to word a failure.
func sxCheckIndices(idx *core.Tensor, size, axis int, wrap bool) error {
	if idx.Numel() == 0 {
		return nil
	}
	b, err := core.BackendFor(idx.Device())
	if err != nil {
		return err
	}
	g, ok := b.(*Backend)
	if !ok {
		return fmt.Errorf("webgpu: indices on %v, not on the GPU", idx.Device())
	}
	lo := 0
	if wrap {
		lo = -size
	}
	v := asI32(idx.DType())
	bad := fmt.Sprintf("%s < pi(0u) || %s >= pi(1u)", v, v)
	return g.checkOnDevice("indexing", idx, bad, func(p *params) { p.setI(0, lo); p.setI(1, size) },
		func() error { return sxCheckRange(idx, size, axis, wrap) })
}

func sxCheckRange(idx *core.Tensor, size, axis int, wrap bool) error {
	vals, err := idx.Int64s()
	if err != nil {
		return err
	}
	lo := int64(0)
	if wrap {
		lo = -int64(size)
	}
	for _, v := range vals {
		if v < lo || v >= int64(size) {
			return fmt.Errorf("index %d is out of bounds for axis %d with size %d", v, axis, size)
		}
	}
	return nil
}

// sxAxisDesc writes operand k's descriptor over the thread shape with the
// axis stride moved to slot 88+k, where the kernel scales it by an index.
func sxAxisDesc(p *params, k, offset int, strides []int, axis int) {
	st := append([]int{}, strides...)
	if axis >= 0 {
		p.setI(88+k, st[axis])
		st[axis] = 0
	}
	writeOperand(p, wgsl.OperandSlot(k), offset, st)
}

// sxTake runs out[i] = x[xDesc(i) + w*axisStride], w = idx[idxDesc(i)] with
// negatives wrapped, over out's shape; x's descriptor has the axis zeroed.
func (b *Backend) sxTake(x, idx, out *core.Tensor, xStrides []int, axisStride, size int, idxStrides []int) error {
	var prm params
	if err := sxShape(&prm, out.Shape()); err != nil {
		return err
	}
	prm.setI(1, size)
	prm.setI(88, axisStride)
	writeOperand(&prm, wgsl.OperandSlot(0), x.Offset(), xStrides)
	writeOperand(&prm, wgsl.OperandSlot(1), idx.Offset(), idxStrides)
	store := storeExpr(out.DType(), "v")
	return b.sxRun("index", "take", []*core.Tensor{x, idx}, []*core.Tensor{out}, out.Numel(), map[string]any{"Store": store}, &prm)
}

// sxZeroAt is strides with the one at axis set to 0.
func sxZeroAt(strides []int, axis int) []int {
	st := append([]int{}, strides...)
	st[axis] = 0
	return st
}

// sxTakeAlongAxisKernel broadcasts x and the indices against each other off
// the axis (size-1 dims step by 0) and wraps negative indices.
func sxTakeAlongAxisKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	if err := sxCheckIndices(idx, x.Shape()[ax], ax, true); err != nil || out.Numel() == 0 {
		return err
	}
	xs := lower.BroadcastStrides(x, out.Shape())
	xs[ax] = x.Strides()[ax]
	return gpuOf(k).sxTake(x, idx, out, sxZeroAt(xs, ax), xs[ax], x.Shape()[ax], lower.BroadcastStrides(idx, out.Shape()))
}

func sxIndexSelectKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	if err := sxCheckIndices(idx, x.Shape()[ax], ax, false); err != nil || out.Numel() == 0 {
		return err
	}
	// The index (1-D or a scalar) moves only with the axis coordinate.
	is := make([]int, x.Rank())
	if idx.Rank() == 1 {
		is[ax] = idx.Strides()[0]
	}
	xs := x.Strides()
	return gpuOf(k).sxTake(x, idx, out, sxZeroAt(xs, ax), xs[ax], x.Shape()[ax], is)
}

// sxEmbeddingKernel is take over the output [indices..., dim]: the index
// follows the leading dims, the weight row the last.
func sxEmbeddingKernel(k *core.KernelCall) error {
	w, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ws, st := w.Shape(), w.Strides()
	if err := sxCheckIndices(idx, ws[0], 0, false); err != nil || out.Numel() == 0 {
		return err
	}
	r := out.Rank()
	xs := make([]int, r)
	xs[r-1] = st[1]
	is := append(idx.Strides(), 0)
	return gpuOf(k).sxTake(w, idx, out, xs, st[0], ws[0], is)
}

// sxCombine is the WGSL that folds b into the accumulator a for a scatter
// reduction over compute type ct; "" replaces (plain scatter, where the
// last write in index order wins, as on the CPU).
func sxCombine(reduce, ct string) string {
	switch reduce {
	case "", "none":
		return "b"
	case "amax", "amin":
		f := map[string]string{"amax": "max", "amin": "min"}[reduce]
		if ct == "f32" {
			// WGSL leaves max/min of NaN to the driver; torch propagates it.
			return "select(" + f + "(a, b), f_nan(), is_nan(a) || is_nan(b))"
		}
		return f + "(a, b)"
	}
	return "(a + b)"
}

// sxMean divides the accumulator by the count c: integer means round down,
// as torch's.
func sxMean(ct string) string {
	switch ct {
	case "f32":
		return "acc / f32(c)"
	case "i32":
		return "i_floordiv(acc, i32(c))"
	}
	return "acc / c"
}

// sxScatterRun runs the scatter kernel over x's shape: out = x combined with
// the src values whose index along axis names each element. idxStrides and
// srcStrides are read at x's coordinates off the axis; along it the kernel
// walks loop entries with their axis strides. bounds limit the coordinates
// that have sources at all.
func (b *Backend) sxScatterRun(x, idx, src, out *core.Tensor, ax, loop int, idxStrides, srcStrides []int, bounds core.Shape, extra map[string]any, include bool, alpha uint32) error {
	var prm params
	if err := sxShape(&prm, x.Shape()); err != nil {
		return err
	}
	prm.setI(0, ax)
	prm.setI(1, loop)
	if include {
		prm.setU(2, 1)
	}
	prm.setU(3, alpha)
	for d, n := range bounds {
		prm.setI(64+d, n)
	}
	writeOperand(&prm, wgsl.OperandSlot(0), x.Offset(), x.Strides())
	sxAxisDesc(&prm, 1, idx.Offset(), idxStrides, ax)
	sxAxisDesc(&prm, 2, src.Offset(), srcStrides, ax)
	extra["Store"] = storeExpr(out.DType(), "v")
	// Each thread loops over the index entries along the axis, after
	// finding its coordinate (loops over the dims).
	if err := b.checkLoops("", loop+4*x.Rank(), 1); err != nil {
		return err
	}
	if extra["Checked"] != true {
		return b.sxRun("index", "scatter", []*core.Tensor{x, idx, src}, []*core.Tensor{out}, out.Numel(), extra, &prm)
	}
	flag, err := b.newFlag()
	if err != nil {
		return err
	}
	if err := b.sxRun("index", "scatter", []*core.Tensor{x, idx, src}, []*core.Tensor{out, flag}, out.Numel(), extra, &prm); err != nil {
		flag.Release()
		return err
	}
	return b.checkFlag("scatter", flag, errI64Scatter)
}

// errI64Scatter fails an i64 scatter sum or product that passes the i32
// the GPU holds i64 in, even on the way to a result that would fit: the
// kernel combines in i32.
var errI64Scatter = fmt.Errorf("a sum or product passes the 32-bit integers WebGPU holds i64 in ([%d, %d]); compute it on device cpu, or cast to f32 first",
	math.MinInt32, math.MaxInt32)

// checkedI64 makes a scatter's sums fail on i64 overflow (out is i64):
// + and * become ck_add and ck_mul.
func checkedI64(out *core.Tensor, extra map[string]any) {
	if out.DType() != core.I64 {
		return
	}
	c := extra["Combine"].(string)
	switch c {
	case "(a + b)":
		c = "ck_add(a, b)"
	case "(a + pi(3u) * b)":
		c = "ck_add(a, ck_mul(pi(3u), b))"
	default:
		return
	}
	extra["Combine"], extra["Checked"] = c, true
}

// sxScatterBounds is the index shape off the axis and x's size along it.
func sxScatterBounds(x, idx core.Shape, ax int) core.Shape {
	bounds := idx.Clone()
	bounds[ax] = x[ax]
	return bounds
}

func sxScatterKernel(k *core.KernelCall, reduce string, include bool) error {
	x, idx, src, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	if err := sxCheckIndices(idx, x.Shape()[ax], ax, false); err != nil {
		return err
	}
	ct := physical(out.DType())
	extra := map[string]any{"Combine": sxCombine(reduce, ct), "Mean": ""}
	if reduce == "mean" {
		extra["Mean"] = sxMean(ct)
	}
	checkedI64(out, extra)
	bounds := sxScatterBounds(x.Shape(), idx.Shape(), ax)
	return gpuOf(k).sxScatterRun(x, idx, src, out, ax, idx.Shape()[ax], idx.Strides(), src.Strides(), bounds, extra, include, 0)
}

// sxIndexAddKernel is a scatter whose index is 1-D: entry j names the slice
// of x that src's slice j is added to, times alpha.
func sxIndexAddKernel(k *core.KernelCall) error {
	x, idx, src, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	if err := sxCheckIndices(idx, x.Shape()[ax], ax, false); err != nil {
		return err
	}
	ct := physical(out.DType())
	alpha := k.Attrs.Float("alpha")
	var word uint32
	get := map[string]string{"f32": "pf(3u)", "i32": "pi(3u)", "u32": "pu(3u)"}[ct]
	if ct == "f32" {
		var p params
		p.setF(0, alpha)
		word = p.w[0]
	} else {
		word = uint32(int32(int64(alpha)))
	}
	is := make([]int, x.Rank())
	if idx.Rank() == 1 {
		is[ax] = idx.Strides()[0]
	}
	extra := map[string]any{"Combine": "(a + " + get + " * b)", "Mean": ""}
	checkedI64(out, extra)
	return gpuOf(k).sxScatterRun(x, idx, src, out, ax, idx.Numel(), is, src.Strides(), x.Shape(), extra, true, word)
}

// sxScatterExtremumGradKernel is torch's rule for scatter amax/amin: at
// each target, N counts x's value (when equal to the result) and the src
// values equal to it; each of them gets g/N. Without include_self x gets
// nothing at scattered positions. Two kernels: one thread per x element,
// and one per src element, each recounting its target's N.
func sxScatterExtremumGradKernel(k *core.KernelCall) error {
	g, x, idx, src, res := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Inputs[4]
	gx, gs := k.Outputs[0], k.Outputs[1]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	if err := sxCheckIndices(idx, x.Shape()[ax], ax, false); err != nil {
		return err
	}
	b := gpuOf(k)
	// Each thread loops over the index entries along the axis, as the
	// scatter does.
	if err := b.checkLoops("", idx.Shape()[ax]+4*x.Rank(), 1); err != nil {
		return err
	}
	ins := []*core.Tensor{g, x, idx, src, res}
	set := func(p *params, shape, bounds core.Shape, full bool) error {
		if err := sxShape(p, shape); err != nil {
			return err
		}
		p.setI(0, ax)
		p.setI(1, idx.Shape()[ax])
		if k.Attrs.Bool("include_self") {
			p.setU(2, 1)
		}
		for d, n := range bounds {
			p.setI(64+d, n)
		}
		for j, t := range ins {
			if full && (j == 0 || j == 1 || j == 4) {
				writeOperand(p, wgsl.OperandSlot(j), t.Offset(), t.Strides())
			} else {
				sxAxisDesc(p, j, t.Offset(), t.Strides(), ax)
			}
		}
		return nil
	}
	var px params
	if err := set(&px, x.Shape(), sxScatterBounds(x.Shape(), idx.Shape(), ax), true); err != nil {
		return err
	}
	if err := b.sxRun("index", "extgrad_x", ins, []*core.Tensor{gx}, gx.Numel(), map[string]any{"Store": storeExpr(gx.DType(), "v")}, &px); err != nil {
		return err
	}
	var ps params
	if err := set(&ps, src.Shape(), idx.Shape(), false); err != nil {
		return err
	}
	return b.sxRun("index", "extgrad_src", ins, []*core.Tensor{gs}, gs.Numel(), map[string]any{"Store": storeExpr(gs.DType(), "v")}, &ps)
}

// sxWrapIndexKernel counts negative indices from the end; the host checks
// the range first.
func sxWrapIndexKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	size := k.Attrs.Int("size")
	if err := sxCheckIndices(in, size, 0, true); err != nil {
		return err
	}
	v := lower.Conv("x0", physical(in.DType()), "i32")
	e := fmt.Sprintf("select(%s, %s + pi(0u), %s < 0)", v, v, v)
	return gpuOf(k).mapRun(k.Inputs[:1], out, e, func(p *params) { p.setI(0, size) })
}

// sxOneHotKernel checks the indices on the GPU (an inferred num_classes is
// the GPU's maximum plus one: one value comes back to size the output),
// then writes the output on the GPU.
func sxOneHotKernel(k *core.KernelCall) error {
	idx := k.Inputs[0]
	classes, err := kernelkit.OneHotClasses(k.Attrs, idx.Numel(), func() (int64, error) {
		top, err := core.Call1("max", nil, idx).Int64s()
		if err != nil {
			return 0, err
		}
		return top[0], nil
	})
	if err != nil {
		return err
	}
	v := asI32(idx.DType())
	bad := fmt.Sprintf("%s < 0 || %s >= pi(0u)", v, v)
	explain := func() error {
		iv, err := idx.Int64s()
		if err != nil {
			return err
		}
		return kernelkit.CheckOneHot(iv, classes)
	}
	if err := gpuOf(k).checkOnDevice("one_hot", idx, bad, func(p *params) { p.setI(0, int(classes)) }, explain); err != nil {
		return err
	}
	out, err := k.Alloc(append(idx.Shape(), int(classes)), core.I64)
	if err != nil {
		return err
	}
	var prm params
	prm.setI(0, int(classes))
	if err := newIteration(idx.Shape(), idx).write(&prm, 0); err != nil {
		return err
	}
	if err := gpuOf(k).sxRun("index", "onehot", []*core.Tensor{idx}, []*core.Tensor{out}, out.Numel(), map[string]any{}, &prm); err != nil {
		return err
	}
	k.SetOutputs(out)
	return nil
}

// sxMaskedFillKernel takes value, converted to x's dtype as the CPU
// backend does, where the broadcast mask is set.
func sxMaskedFillKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	word, err := sxFillWord(out.DType(), k.Attrs.Float("value"))
	if err != nil {
		return err
	}
	ct := physical(out.DType())
	get := map[string]string{"f32": "pf(0u)", "i32": "pi(0u)", "u32": "pu(0u)"}[ct]
	e := "select(" + lower.Conv("x0", physical(k.Inputs[0].DType()), ct) + ", " + get + ", x1 != 0u)"
	return gpuOf(k).mapRun(k.Inputs[:2], out, e, func(p *params) { p.setU(0, word) })
}
