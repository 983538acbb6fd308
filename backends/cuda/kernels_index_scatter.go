//go:build linux && cgo

package cuda

import (
	"fmt"
	"math"
	"strconv"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Scatter-style ops (scatter, scatter_add, scatter_reduce, index_add and
// the amax/amin gradient) with the CPU backend's semantics. The output
// starts as a copy of x; then one thread per index element checks its
// index and combines its src value into the target with an atomic (a
// plain store for scatter, whose duplicate targets keep an arbitrary
// value, as the op allows). So the work is proportional to the index, not
// to x times the index, which matters for the scatter of message passing.
// Sums combine in f32/f64 (order-dependent within the ops' tolerance) and
// integers wrap at their width, which equals the CPU's int64 sum stored in
// the dtype. Where one rounding per add would drift from the CPU's single
// rounding (f16/bf16 sums) or where the CPU's int64/f64 sum matters before
// a division (mean), the sum runs in a wider temporary, converted once.

func init() {
	register("scatter", func(k *core.KernelCall) error { return scatterKernel(k, "set", true) })
	register("scatter_add", func(k *core.KernelCall) error { return scatterKernel(k, "sum", true) })
	register("scatter_reduce", func(k *core.KernelCall) error {
		return scatterKernel(k, k.Attrs.String("reduce"), k.Attrs.Bool("include_self"))
	})
	register("index_add", indexAddKernel)
	register("_scatter_extremum_grad", scatterExtremumGradKernel)
}

// scatterJob is one scatter: at each coordinate c of shape, the index read
// at idx(c) names the position along axis of the output element (at c's
// other coordinates) that src(c), times alpha, combines into.
type scatterJob struct {
	op       string
	x, out   *core.Tensor
	axis     int
	shape    core.Shape
	idx, src genOp
	reduce   string // "set", "sum", "mean", "amax" or "amin"
	include  bool   // x's value takes part (else the first value replaces it)
	alpha    float64
}

func scatterKernel(k *core.KernelCall, reduce string, include bool) error {
	x, idx, src, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	// src is at least as large as the index: its own strides walk the
	// index's shape.
	return cudaOf(k).scatter(scatterJob{op: k.Op.Name, x: x, out: out, axis: ax, shape: idx.Shape(),
		idx: walkOf(idx, idx.Shape()), src: genOp{t: src, offset: src.Offset(), strides: src.Strides()},
		reduce: reduce, include: include, alpha: 1})
}

// indexAddKernel walks src: its slice j goes to the slice index[j].
func indexAddKernel(k *core.KernelCall) error {
	x, idx, src, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	return cudaOf(k).scatter(scatterJob{op: "index_add", x: x, out: out, axis: ax, shape: src.Shape(),
		idx: alongAxis(idx, x.Rank(), ax), src: walkOf(src, src.Shape()), reduce: "sum", include: true,
		alpha: k.Attrs.Float("alpha")})
}

// accDType is where a scatter accumulates for an output of dtype d.
func accDType(reduce string, d core.DType) core.DType {
	switch {
	case reduce == "mean" && d.IsFloat():
		return core.F64
	case reduce == "mean":
		return core.I64
	case reduce == "sum" && (d == core.F16 || d == core.BF16):
		return core.F32
	}
	return d
}

func (b *Backend) scatter(j scatterJob) error {
	out := j.out
	accD := accDType(j.reduce, out.DType())
	acc := out
	if accD != out.DType() {
		var err error
		if acc, err = core.Empty(b, out.Shape(), accD); err != nil {
			return err
		}
		defer acc.Release()
	}
	if err := b.copyView(j.op, j.x, acc); err != nil {
		return err
	}
	var count *core.Tensor
	if j.reduce == "mean" {
		var err error
		if count, err = core.Empty(b, out.Shape(), core.I64); err != nil {
			return err
		}
		defer count.Release()
		if err := b.zeroFill(count); err != nil {
			return err
		}
	}
	if !j.include && j.reduce != "set" {
		if err := b.scatterPass(j, acc, nil, "reset"); err != nil {
			return err
		}
	}
	if err := b.scatterPass(j, acc, count, j.reduce); err != nil {
		return err
	}
	switch {
	case j.reduce == "mean":
		inc := map[bool]string{true: "1", false: "0"}[j.include]
		e := "select(x0, x0 / f64(x1 + " + inc + "), x1 > 0)"
		if !accD.IsFloat() {
			e = "select(x0, i_floordiv(x0, x1 + " + inc + "), x1 > 0)"
		}
		return b.mapRun(j.op, []*core.Tensor{acc, count}, out, e, nil)
	case acc != out:
		return b.copyView(j.op, acc, out)
	}
	return nil
}

// targetWalk walks a tensor shaped like x (acc, count: contiguous) over
// the scatter's iteration with the axis stride moved out.
func targetWalk(t *core.Tensor, axis int, out bool) (genOp, int64) {
	o, along := axisWalk(t, core.ContiguousStrides(t.Shape()), axis)
	o.out = out
	return o, along
}

// scatterPass runs one pass over the index: "reset" stores the identity
// of the reduction at every target (include_self false), the others
// combine src into acc (and count the values per target for mean).
func (b *Backend) scatterPass(j scatterJob, acc, count *core.Tensor, action string) error {
	size := j.x.Shape()[j.axis]
	g := &genKernel{op: j.op, shape: j.shape, check: outOfBounds(j.axis, size), sc: alphaScalars(j.alpha)}
	tw, along := targetWalk(acc, j.axis, true)
	g.ops = []genOp{j.idx, j.src, tw}
	if count != nil {
		cw, _ := targetWalk(count, j.axis, true)
		g.ops = append(g.ops, cw)
	}
	g.param(0, along)
	g.param(1, int64(size))
	g.coalesce(-1)
	accD := acc.DType()
	if action == "reset" {
		g.param(31, identityBits(j.reduce, accD))
	}
	switch action {
	case "set", "reset", "sum", "mean", "amax", "amin":
	default:
		return fmt.Errorf("cuda: %s: unknown reduction %q", j.op, action)
	}
	// The body depends on the action, on alpha being 1, and otherwise on
	// what the kernel's signature holds (acc's dtype among them).
	return b.runIndexedKeyed(g, "scatter|"+action+"|"+strconv.FormatBool(j.alpha != 1), func() string {
		var do string
		switch action {
		case "set":
			do = fmt.Sprintf("p2[t] = p1[%s];", g.at(1))
		case "reset":
			do = fmt.Sprintf("p2[t] = wt_from_bits<%s>(A.s[31]);", storageType(accD))
		case "sum":
			do = "wt_atomic_add(&p2[t], " + j.value(g, accD) + ");"
		case "mean":
			do = fmt.Sprintf("wt_atomic_add(&p2[t], %s);\natomicAdd((u64*)&p3[%s + v * (i64)A.s[0]], 1ull);", j.value(g, accD), g.at(3))
		default:
			do = fmt.Sprintf("wt_atomic_ext<%v>(&p2[t], %s);", action == "amax", j.value(g, accD))
		}
		return fmt.Sprintf("const i64 v = (i64)ld(p0[%s]);\n", g.at(0)) +
			"if (v < 0 || v >= (i64)A.s[1]) wt_fail(A, 1, v, 0);\nelse {\n" +
			fmt.Sprintf("const i64 t = %s + v * (i64)A.s[0];\n", g.at(2)) + do + "\n}\n"
	})
}

// value is the C++ of the src value (operand 1, times alpha) in the
// accumulation's compute type: the product in f64 for floats, in
// wrapping 64-bit arithmetic for integers, as the CPU computes it.
func (j scatterJob) value(g *genKernel, accD core.DType) string {
	x := fmt.Sprintf("ld(p1[%s])", g.at(1))
	switch {
	case accD.IsFloat() && j.alpha != 1:
		return fmt.Sprintf("(%s)((f64)pf(0u) * (f64)%s)", computeType(accD), x)
	case accD.IsFloat():
		return fmt.Sprintf("(%s)%s", computeType(accD), x)
	case j.alpha != 1:
		return fmt.Sprintf("(i64)((u64)pi(0u) * (u64)(i64)%s)", x)
	}
	return "(i64)" + x
}

// alphaScalars holds index_add's alpha in slot 0, as a float and as the
// integer an integer dtype requires (core checks it is whole).
func alphaScalars(alpha float64) *lower.Scalars {
	var sc lower.Scalars
	sc.SetF(0, alpha)
	sc.SetI(0, int64(alpha))
	return &sc
}

// identityBits is the raw value a target starts from when x does not take
// part: nothing added yet, or the extreme every value replaces.
func identityBits(reduce string, d core.DType) int64 {
	if reduce != "amax" && reduce != "amin" {
		return 0
	}
	lowest := reduce == "amax"
	if d.IsFloat() {
		return fillBits(d, math.Inf(map[bool]int{true: -1, false: 1}[lowest]))
	}
	lo, hi := intRange(d)
	if lowest {
		return lo
	}
	return hi
}

// intRange is an integer dtype's range (its bits are what wt_from_bits
// keeps of these values).
func intRange(d core.DType) (lo, hi int64) {
	switch d {
	case core.I64:
		return math.MinInt64, math.MaxInt64
	case core.I32:
		return math.MinInt32, math.MaxInt32
	case core.U32:
		return 0, math.MaxUint32
	case core.I16:
		return math.MinInt16, math.MaxInt16
	case core.I8:
		return math.MinInt8, math.MaxInt8
	case core.U16:
		return 0, math.MaxUint16
	}
	return 0, math.MaxUint8
}

// scatterExtremumGradKernel is torch's rule for scatter amax/amin, as the
// CPU computes it: at each target, N counts x's value (when equal to the
// result) and the src values equal to it, and each of them gets g/N (in
// f64); without include_self, x gets nothing at scattered targets. One
// pass over the index counts (and marks scattered targets in the upper
// 32 bits of the same word), then one kernel writes each gradient.
func scatterExtremumGradKernel(k *core.KernelCall) error {
	g, x, idx, src, res := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Inputs[4]
	gx, gs := k.Outputs[0], k.Outputs[1]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	b, op, size := cudaOf(k), "_scatter_extremum_grad", x.Shape()[ax]
	inc := map[bool]string{true: "true", false: "false"}[k.Attrs.Bool("include_self")]
	cnt, err := core.Empty(b, x.Shape(), core.I64)
	if err != nil {
		return err
	}
	defer cnt.Release()
	if err := b.mapRun(op, []*core.Tensor{x, res}, cnt, "select(0, 1, x0 == x1)", nil); err != nil {
		return err
	}
	// Count the src values equal to their target's result.
	is := idx.Shape()
	rw, rAlong := axisWalk(res, res.Strides(), ax)
	cw, cAlong := targetWalk(cnt, ax, true)
	gc := &genKernel{op: op, shape: is, check: outOfBounds(ax, size),
		ops: []genOp{walkOf(idx, is), {t: src, offset: src.Offset(), strides: src.Strides()}, rw, cw}}
	gc.param(1, int64(size))
	gc.param(2, rAlong)
	gc.param(3, cAlong)
	gc.coalesce(-1)
	err = b.runIndexedKeyed(gc, "extcount|"+inc, func() string {
		return fmt.Sprintf("const i64 v = (i64)ld(p0[%s]);\n", gc.at(0)) +
			"if (v < 0 || v >= (i64)A.s[1]) wt_fail(A, 1, v, 0);\nelse {\n" +
			fmt.Sprintf("const u64 add = (ld(p1[%s]) == ld(p2[%s + v * (i64)A.s[2]]) ? 1ull : 0ull) + (%s ? 0ull : 1ull << 32);\n", gc.at(1), gc.at(2), inc) +
			fmt.Sprintf("if (add != 0) atomicAdd((u64*)&p3[%s + v * (i64)A.s[3]], add);\n}\n", gc.at(3))
	})
	if err != nil {
		return err
	}
	if err := b.extremumSrcGrad(op, g, idx, src, res, cnt, gs, ax, size); err != nil {
		return err
	}
	// x's share, and nothing at scattered targets without include_self.
	gk := &genKernel{op: op, shape: x.Shape(),
		ops: []genOp{walkOf(x, x.Shape()), walkOf(res, x.Shape()), walkOf(g, x.Shape()), walkOf(cnt, x.Shape()), written(gx)}}
	gk.coalesce(-1)
	return b.runIndexedKeyed(gk, "extx|"+inc, func() string {
		return fmt.Sprintf("const u64 cw = (u64)p3[%s];\n", gk.at(3)) +
			fmt.Sprintf("f64 r = (ld(p0[%s]) == ld(p1[%s]) ? 1.0 : 0.0) * ((f64)ld(p2[%s]) / (f64)(cw & 0xffffffffull));\n", gk.at(0), gk.at(1), gk.at(2)) +
			fmt.Sprintf("if (!%s && (cw >> 32) != 0) r = 0.0;\nput(&p4[%s], r);\n", inc, gk.at(4))
	})
}

// extremumSrcGrad writes src's gradient: eq(src, result) * g / N at its
// target for src elements the index covers, 0 for the others.
func (b *Backend) extremumSrcGrad(op string, g, idx, src, res, cnt, gs *core.Tensor, ax, size int) error {
	ss := src.Shape()
	gw, gAlong := axisWalk(g, g.Strides(), ax)
	rw, rAlong := axisWalk(res, res.Strides(), ax)
	cw, cAlong := axisWalk(cnt, cnt.Strides(), ax)
	k := &genKernel{op: op, shape: ss, ops: []genOp{walkOf(src, ss), {t: idx, offset: idx.Offset(), strides: idx.Strides()}, gw, rw, cw, written(gs)}}
	k.param(1, int64(size))
	k.param(2, gAlong)
	k.param(3, rAlong)
	k.param(4, cAlong)
	for d, n := range idx.Shape() {
		k.param(16+d, int64(n))
	}
	return b.runIndexedKeyed(k, "extsrc", func() string {
		inside := "true"
		for d := range idx.Rank() {
			inside += fmt.Sprintf(" && c%d < (idx)A.s[%d]", d, 16+d)
		}
		return "f64 r = 0.0;\n" +
			fmt.Sprintf("if (%s) {\nconst i64 v = (i64)ld(p1[%s]);\nif (v >= 0 && v < (i64)A.s[1]) {\n", inside, k.at(1)) +
			fmt.Sprintf("const u64 cw = (u64)p4[%s + v * (i64)A.s[4]];\n", k.at(4)) +
			fmt.Sprintf("r = (ld(p0[%s]) == ld(p3[%s + v * (i64)A.s[3]]) ? 1.0 : 0.0) * ((f64)ld(p2[%s + v * (i64)A.s[2]]) / (f64)(cw & 0xffffffffull));\n", k.at(0), k.at(3), k.at(2)) +
			"}\n}\n" + fmt.Sprintf("put(&p5[%s], r);\n", k.at(5))
	})
}
