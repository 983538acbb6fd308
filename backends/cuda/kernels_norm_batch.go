//go:build linux && cgo

package cuda

import (
	"strconv"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Batch and group normalisation over x [N, C, ...] as row programs with the
// CPU's formulas (backends/cpu/kernels_norm.go): batch norm's rows are the
// channels (each over N and the spatial dims), group norm's the (item,
// group) pairs. Per-channel parameters and statistics are operands viewed
// over x's shape, so strided inputs need no copy.

// ncsView views x [N, C, S...] as [N, G, C/G, S...] (G groups; 1 for batch
// norm), and a per-channel tensor [C] over the same shape.
func groupedView(x *core.Tensor, groups int) *core.Tensor {
	s, st := x.Shape(), x.Strides()
	cg := s[1] / groups
	shape := append(core.Shape{s[0], groups, cg}, s[2:]...)
	strides := append([]int{st[0], cg * st[1], st[1]}, st[2:]...)
	return core.NewView(x, shape, strides, x.Offset())
}

func channelView(p *core.Tensor, over *core.Tensor) *core.Tensor {
	s := over.Shape()
	strides := make([]int, len(s))
	ps := p.Strides()[0]
	strides[1], strides[2] = s[2]*ps, ps
	return core.NewView(p, s, strides, p.Offset())
}

// rowStatView views per-row statistics (column col of a [rows, width]
// tensor, rows in the frame's kept order) over the frame's shape.
func rowStatView(stats *core.Tensor, f lower.Frame, width, col int) *core.Tensor {
	strides := make([]int, len(f.Shape))
	acc := width
	for i := len(f.Kept) - 1; i >= 0; i-- {
		d := f.Kept[i]
		strides[d] = acc
		acc *= f.Shape[d]
	}
	return core.NewView(stats, f.Shape, strides, col)
}

// affineTail appends the weight and bias terms of channel-wise affine
// outputs: y * w + b with absent ones skipped.
func affineTail(y string, names []string, w, b *core.Tensor) string {
	if w != nil {
		y = "(" + y + ") * (f64)" + names[0]
	}
	if b != nil {
		y += " + (f64)" + names[1]
	}
	return y
}

func groupNormKernel(k *core.KernelCall) error {
	x, w, b := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	groups := k.Attrs.Int("num_groups")
	xv := groupedView(x, groups)
	f := lower.NewFrame(xv.Shape(), allAfter(xv.Rank(), 2))
	ins := []*core.Tensor{xv}
	names := []string{"", ""}
	for i, p := range []*core.Tensor{w, b} {
		if p != nil {
			names[i] = "x" + strconv.Itoa(len(ins))
			ins = append(ins, channelView(p, xv))
		}
	}
	out := groupedView(k.Outputs[0], groups)
	var sc lower.Scalars
	sc.SetF(0, k.Attrs.Float("eps"))
	y := affineTail("((f64)x0 - mean) * rstd", names, w, b)
	if k.Attrs.String("activation") == "silu" { // GroupNorm+SiLU in one pass
		y = "((" + y + ") / (1.0 + exp(-(" + y + "))))"
	}
	return cudaOf(k).rows(rowProgram{op: "group_norm", frame: f, ins: ins, outs: []*core.Tensor{out}, sc: &sc,
		passes: momentPasses, writes: []string{y}})
}

// allAfter lists the dims from first to rank-1.
func allAfter(rank, first int) []int {
	out := make([]int, 0, rank-first)
	for d := first; d < rank; d++ {
		out = append(out, d)
	}
	return out
}

// groupNormBackwardKernel: dx per (item, group) as layer norm's; dweight
// and dbias sum g*xhat and g per channel over items and space, from the
// per-row mean and rstd the first kernel saved.
func groupNormBackwardKernel(k *core.KernelCall) error {
	x, g, w := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	groups := k.Attrs.Int("num_groups")
	xv, gv := groupedView(x, groups), groupedView(g, groups)
	f := lower.NewFrame(xv.Shape(), allAfter(xv.Rank(), 2))
	ins := []*core.Tensor{xv, gv}
	d := "(f64)x1"
	if w != nil {
		ins = append(ins, channelView(w, xv))
		d = "((f64)x1 * (f64)x2)"
	}
	xhat := "(((f64)x0 - mean) * rstd)"
	var sc lower.Scalars
	sc.SetF(0, k.Attrs.Float("eps"))
	be := cudaOf(k)
	stats, err := core.Empty(be, core.Shape{f.Groups(), 2}, core.F64)
	if err != nil {
		return err
	}
	defer stats.Release()
	err = be.rows(rowProgram{op: "_group_norm_backward", frame: f, ins: ins, outs: []*core.Tensor{groupedView(k.Outputs[0], groups)}, sc: &sc,
		passes: append(append([]rowPass{}, momentPasses...), rowPass{stats: []rowStat{
			{name: "sd", acc: "SumAcc<f64>", value: d}, {name: "sdx", acc: "SumAcc<f64>", value: d + " * " + xhat}}}),
		writes: []string{"rstd * (" + d + " - sd.s / (f64)R - " + xhat + " * (sdx.s / (f64)R))"},
		rowOut: stats, rowWrites: []string{"mean", "rstd"}})
	if err != nil {
		return err
	}
	mean, rstd := rowStatView(stats, f, 2, 0), rowStatView(stats, f, 2, 1)
	// Per channel: kept (group, channel in group), summed over items and space.
	cf := lower.NewFrame(xv.Shape(), append([]int{0}, allAfter(xv.Rank(), 3)...))
	for i, spec := range []struct{ value string }{{"x1 * (x0 - x2) * x3"}, {"x1"}} {
		if out := k.Outputs[1+i]; out != nil {
			if err := be.reduce(reduction{op: "_group_norm_backward", frame: cf, ins: []*core.Tensor{xv, gv, mean, rstd},
				out: out, acc: "SumAcc<f64>", value: spec.value, final: "acc.s"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// batchNormKernel normalises per channel. Training uses the batch mean and
// biased variance and returns running statistics updated with the unbiased
// variance (or the batch statistics themselves when none are given); eval
// uses the running statistics and returns them unchanged.
func batchNormKernel(k *core.KernelCall) error {
	x, rm, rv, w, b := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Inputs[4]
	be := cudaOf(k)
	xv := groupedView(x, 1)
	out := groupedView(k.Outputs[0], 1)
	f := lower.NewFrame(xv.Shape(), append([]int{0, 1}, allAfter(xv.Rank(), 3)...))
	ins := []*core.Tensor{xv}
	names := []string{"", ""}
	for i, p := range []*core.Tensor{w, b} {
		if p != nil {
			names[i] = "x" + strconv.Itoa(len(ins))
			ins = append(ins, channelView(p, xv))
		}
	}
	var sc lower.Scalars
	sc.SetF(0, k.Attrs.Float("eps"))
	sc.SetF(1, k.Attrs.Float("momentum"))
	if !k.Attrs.Bool("training") {
		mean, variance := channelView(rm, xv), channelView(rv, xv)
		n := len(ins)
		ins = append(ins, mean, variance)
		m, v := "(f64)x"+strconv.Itoa(n), "(f64)x"+strconv.Itoa(n+1)
		y := affineTail("((f64)x0 - "+m+") * (1.0 / sqrt("+v+" + pf(0)))", names, w, b)
		if err := be.mapRun("batch_norm", ins, out, y, &sc); err != nil {
			return err
		}
		if err := be.mapRun("batch_norm", []*core.Tensor{rm}, k.Outputs[1], "x0", nil); err != nil {
			return err
		}
		return be.mapRun("batch_norm", []*core.Tensor{rv}, k.Outputs[2], "x0", nil)
	}
	stats, err := core.Empty(be, core.Shape{f.Groups(), 2}, core.F64)
	if err != nil {
		return err
	}
	defer stats.Release()
	// The unbiased variance, blended into the running statistics when
	// they are given (x-named operands after the affine ones).
	rowWrites := []string{"mean", "mq.s / ((f64)R - 1.0)"}
	if rm != nil {
		n := len(ins)
		ins = append(ins, channelView(rm, xv), channelView(rv, xv))
		rowWrites = []string{
			"(1.0 - pf(1)) * " + rowScalar(n) + " + pf(1) * mean",
			"(1.0 - pf(1)) * " + rowScalar(n+1) + " + pf(1) * (mq.s / ((f64)R - 1.0))"}
	}
	err = be.rows(rowProgram{op: "batch_norm", frame: f, ins: ins, outs: []*core.Tensor{out}, sc: &sc,
		passes: momentPasses, writes: []string{affineTail("((f64)x0 - mean) * rstd", names, w, b)},
		rowOut: stats, rowWrites: rowWrites})
	if err != nil {
		return err
	}
	c := x.Shape()[1]
	if err := be.mapRun("batch_norm", []*core.Tensor{core.NewView(stats, core.Shape{c}, []int{2}, 0)}, k.Outputs[1], "x0", nil); err != nil {
		return err
	}
	return be.mapRun("batch_norm", []*core.Tensor{core.NewView(stats, core.Shape{c}, []int{2}, 1)}, k.Outputs[2], "x0", nil)
}

// rowScalar is operand k's value for the row (a per-channel operand, the
// same at every member) as f64, read at the row's offset.
func rowScalar(k int) string {
	n := strconv.Itoa(k)
	return "(f64)ld(in" + n + "[kb" + n + "])"
}

// batchNormBackwardKernel: in training the y path is the normalisation
// gradient over each channel's N*S values, and the updated running
// statistics add a*g_mean/count and a*g_var*2*(x-mean)/(count-1), with a
// the momentum (1 when no running statistics were given, since the batch
// statistics are returned directly). In eval mode y is affine in x. The
// weight and bias gradients are each channel's sums of g*xhat and g.
func batchNormBackwardKernel(k *core.KernelCall) error {
	x, g := k.Inputs[0], k.Inputs[1]
	rm, rv, w, gMean, gVar := k.Inputs[2], k.Inputs[3], k.Inputs[4], k.Inputs[5], k.Inputs[6]
	be := cudaOf(k)
	training := k.Attrs.Bool("training")
	xv, gv := groupedView(x, 1), groupedView(g, 1)
	f := lower.NewFrame(xv.Shape(), append([]int{0, 1}, allAfter(xv.Rank(), 3)...))
	ins := []*core.Tensor{xv, gv}
	operand := func(t *core.Tensor) string {
		ins = append(ins, channelView(t, xv))
		return rowScalar(len(ins) - 1)
	}
	d := "(f64)x1"
	if w != nil {
		d = "((f64)x1 * " + operand(w) + ")"
	}
	var sc lower.Scalars
	sc.SetF(0, k.Attrs.Float("eps"))
	a := k.Attrs.Float("momentum")
	if rm == nil {
		a = 1
	}
	sc.SetF(1, a)
	xhat := "(((f64)x0 - mean) * rstd)"
	sums := rowPass{stats: []rowStat{{name: "dw", acc: "SumAcc<f64>", value: "(f64)x1 * " + xhat}, {name: "db", acc: "SumAcc<f64>", value: "(f64)x1"}}}
	var passes []rowPass
	var dx string
	if training {
		sums.stats = append(sums.stats, rowStat{name: "sd", acc: "SumAcc<f64>", value: d}, rowStat{name: "sdx", acc: "SumAcc<f64>", value: d + " * " + xhat})
		passes = append(append(passes, momentPasses...), sums)
		dx = "rstd * (" + d + " - sd.s / (f64)R - " + xhat + " * (sdx.s / (f64)R))"
		if gMean != nil {
			dx += " + " + operand(gMean) + " * pf(1) / (f64)R"
		}
		if gVar != nil {
			dx += " + " + operand(gVar) + " * pf(1) * 2.0 * ((f64)x0 - mean) / ((f64)R - 1.0)"
		}
	} else {
		m, v := operand(rm), operand(rv)
		passes = []rowPass{{then: "const f64 mean = " + m + ", rstd = 1.0 / sqrt(" + v + " + pf(0));"}, sums}
		dx = d + " * rstd"
	}
	stats, err := core.Empty(be, core.Shape{f.Groups(), 2}, core.F64)
	if err != nil {
		return err
	}
	defer stats.Release()
	err = be.rows(rowProgram{op: "_batch_norm_backward", frame: f, ins: ins, outs: []*core.Tensor{groupedView(k.Outputs[0], 1)},
		sc: &sc, passes: passes, writes: []string{dx}, rowOut: stats, rowWrites: []string{"dw.s", "db.s"}})
	if err != nil {
		return err
	}
	c := x.Shape()[1]
	for i := range 2 {
		if out := k.Outputs[1+i]; out != nil {
			if err := be.mapRun("_batch_norm_backward", []*core.Tensor{core.NewView(stats, core.Shape{c}, []int{2}, i)}, out, "x0", nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func init() {
	register("group_norm", groupNormKernel)
	register("_group_norm_backward", groupNormBackwardKernel)
	register("batch_norm", batchNormKernel)
	register("_batch_norm_backward", batchNormBackwardKernel)
}
