//go:build linux && cgo

package cuda

import (
	"fmt"
	"strconv"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/numerics"
)

// Reads through an index (gather, take_along_axis, index_select,
// embedding), _wrap_index, one_hot and masked_fill, with the CPU backend's
// semantics (backends/cpu/kernels_index*.go). Index values never come back
// to the host: each kernel checks the index it reads, reports a bad one
// through wt_fail (the next read fails naming the op, in the CPU's words)
// and reads nothing for it. Only one_hot without num_classes reads back
// the largest index, which sizes its output.

func init() {
	register("gather", gatherKernel)
	register("take_along_axis", takeAlongAxisKernel)
	register("index_select", indexSelectKernel)
	register("embedding", embeddingKernel)
	register("_wrap_index", wrapIndexKernel)
	register("one_hot", oneHotKernel)
	register("masked_fill", maskedFillKernel)
}

// take runs out[c] = x[xw(c) + w*along] over out's shape, w being the
// index read at iw(c) (negatives counted from the end when wrap): one
// thread per output element, the walks merged where they allow. An index
// outside [0, size) fails the op and writes zero.
func (b *Backend) take(op string, xw genOp, along int64, iw genOp, out *core.Tensor, size, axis int, wrap bool) error {
	g := &genKernel{op: op, shape: out.Shape(), ops: []genOp{xw, iw, written(out)}, check: outOfBounds(axis, size)}
	g.param(0, along)
	g.param(1, int64(size))
	g.coalesce(-1)
	w := "v"
	if wrap {
		w = "(v < 0 ? v + (i64)A.s[1] : v)"
	}
	return b.runIndexedKeyed(g, "take|"+w, func() string {
		return fmt.Sprintf("const i64 v = (i64)ld(p1[%s]);\nconst i64 w = %s;\n", g.at(1), w) +
			fmt.Sprintf("if (w < 0 || w >= (i64)A.s[1]) { wt_fail(A, 1, v, 0); p2[%s] = %s; }\n", g.at(2), zeroElem(out.DType())) +
			fmt.Sprintf("else p2[%s] = p0[%s + w * (i64)A.s[0]];\n", g.at(2), g.at(0))
	})
}

func gatherKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	// x is at least as large as the index off the axis: its own strides
	// walk the index's shape.
	xw, along := axisWalk(x, x.Strides(), ax)
	return cudaOf(k).take("gather", xw, along, walkOf(idx, out.Shape()), out, x.Shape()[ax], ax, false)
}

// takeAlongAxisKernel broadcasts x and the indices against each other off
// the axis and counts negative indices from the end.
func takeAlongAxisKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	st := lower.BroadcastStrides(x, out.Shape())
	st[ax] = x.Strides()[ax]
	xw, along := axisWalk(x, st, ax)
	return cudaOf(k).take("take_along_axis", xw, along, walkOf(idx, out.Shape()), out, x.Shape()[ax], ax, true)
}

// indexSelectKernel: the index (1-D or a scalar) moves with the axis
// coordinate only.
func indexSelectKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	xw, along := axisWalk(x, x.Strides(), ax)
	return cudaOf(k).take("index_select", xw, along, alongAxis(idx, x.Rank(), ax), out, x.Shape()[ax], ax, false)
}

// alongAxis walks a 1-D (or 0-d) index over a rank-dim iteration that
// moves it with the axis coordinate.
func alongAxis(idx *core.Tensor, rank, axis int) genOp {
	st := make([]int, rank)
	if idx.Rank() == 1 {
		st[axis] = idx.Strides()[0]
	}
	return genOp{t: idx, offset: idx.Offset(), strides: st}
}

// embeddingKernel: output [indices..., dim], the index following the
// leading dims and the weight row the last.
func embeddingKernel(k *core.KernelCall) error {
	w, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ws, st := w.Shape(), w.Strides()
	r := out.Rank()
	xs := make([]int, r)
	xs[r-1] = st[1]
	iw := genOp{t: idx, offset: idx.Offset(), strides: append(idx.Strides(), 0)}
	return cudaOf(k).take("embedding", genOp{t: w, offset: w.Offset(), strides: xs}, int64(st[0]), iw, out, ws[0], 0, false)
}

// wrapIndexKernel counts negative indices from the end; one outside
// [-size, size) fails the op.
func wrapIndexKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	size := k.Attrs.Int("size")
	g := &genKernel{op: "_wrap_index", shape: in.Shape(), ops: []genOp{walkOf(in, in.Shape()), written(out)}, check: outOfBounds(0, size)}
	g.param(0, int64(size))
	g.coalesce(-1)
	return cudaOf(k).runIndexedKeyed(g, "wrapindex", func() string {
		return fmt.Sprintf("const i64 v = (i64)ld(p0[%s]);\nconst i64 w = v < 0 ? v + (i64)A.s[0] : v;\n", g.at(0)) +
			fmt.Sprintf("if (w < 0 || w >= (i64)A.s[0]) { wt_fail(A, 1, v, 0); p1[%s] = 0; }\nelse p1[%s] = w;\n", g.at(1), g.at(1))
	})
}

// oneHotKernel writes 1 where the last coordinate equals the index. Without
// num_classes, the largest index (a reduction, read back) gives it.
func oneHotKernel(k *core.KernelCall) error {
	idx := k.Inputs[0]
	b := cudaOf(k)
	classes, err := kernelkit.OneHotClasses(k.Attrs, idx.Numel(), func() (int64, error) { return b.largest("one_hot", idx) })
	if err != nil {
		return err
	}
	out, err := k.Alloc(append(idx.Shape(), int(classes)), core.I64)
	if err != nil {
		return err
	}
	if err := b.oneHot(idx, out, classes); err != nil {
		out.Release()
		return err
	}
	if classes == 0 && idx.Numel() > 0 {
		// Every index is out of range (negative, when inferred): say so
		// now, as the CPU does, since nobody reads an empty output.
		if err := b.Sync(); err != nil {
			out.Release()
			return err
		}
	}
	k.SetOutputs(out)
	return nil
}

// largest reads back the largest value of an integer tensor.
func (b *Backend) largest(op string, t *core.Tensor) (int64, error) {
	top, err := core.Empty(b, core.Shape{}, core.I64)
	if err != nil {
		return 0, err
	}
	defer top.Release()
	axes := make([]int, t.Rank())
	for d := range axes {
		axes[d] = d
	}
	err = b.reduce(reduction{op: op, frame: lower.NewFrame(t.Shape(), axes), ins: []*core.Tensor{t}, out: top,
		acc: "ExtAcc<i64, true>", value: "i64(x0)", final: "acc.m"})
	if err != nil {
		return 0, err
	}
	v, err := top.Int64s()
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// oneHot fills out [indices..., classes]; every element checks its index
// (with no classes, one thread per index only checks).
func (b *Backend) oneHot(idx, out *core.Tensor, classes int64) error {
	g := &genKernel{op: "one_hot", check: func(code uint32, v, _ int64) string {
		// The failing value says which rule it broke (code 1: negative).
		if err := kernelkit.OneHotIndexError(v, classes); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("class index %d failed check %d for num_classes %d", v, code, classes)
	}}
	g.param(0, classes)
	if classes == 0 {
		g.shape, g.ops = idx.Shape(), []genOp{walkOf(idx, idx.Shape())}
	} else {
		g.shape = out.Shape()
		g.ops = []genOp{{t: idx, offset: idx.Offset(), strides: append(idx.Strides(), 0)}, written(out)}
	}
	g.coalesce(-1)
	return b.runIndexedKeyed(g, "onehot|"+strconv.FormatBool(classes > 0), func() string {
		body := fmt.Sprintf("const i64 v = (i64)ld(p0[%s]);\n", g.at(0)) +
			"if (v < 0) wt_fail(A, 1, v, 0);\nelse if (v >= (i64)A.s[0]) wt_fail(A, 2, v, 0);\n"
		if classes > 0 {
			// The output is contiguous: i mod classes is the class coordinate.
			body += fmt.Sprintf("p1[%s] = v == (i64)(i %% (idx)A.s[0]) ? 1 : 0;\n", g.at(1))
		}
		return body
	})
}

// maskedFillKernel takes value, stored in x's dtype as the CPU stores it
// (numerics.PutF64), where the broadcast mask is set.
func maskedFillKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	d := out.DType()
	ct := computeType(d)
	var sc lower.Scalars
	raw := make([]byte, 8)
	numerics.PutF64(d, raw, 0, k.Attrs.Float("value"))
	var fill string
	switch {
	case lower.IsFloat(ct):
		sc.SetF(0, numerics.GetF64(d, raw, 0))
		fill = lower.Conv("pf(0u)", lower.F64, ct)
	case ct == lower.U32:
		sc.SetU(0, uint32(numerics.GetI64(d, raw, 0)))
		fill = "pu(0u)"
	default:
		sc.SetI(0, numerics.GetI64(d, raw, 0))
		fill = lower.Conv("pi(0u)", lower.I64, ct)
	}
	e := "select(" + lower.Conv("x0", computeType(k.Inputs[0].DType()), ct) + ", " + fill + ", x1 != 0u)"
	return cudaOf(k).mapRun("masked_fill", k.Inputs[:2], out, e, &sc)
}
