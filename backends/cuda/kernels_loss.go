//go:build linux && cgo

package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Losses with the CPU backend's formulas (backends/cpu/kernels_loss.go),
// in f64. Classification losses are row programs over the class dim: one
// launch writes each row's loss and its share of the mean's divisor, a
// reduction adds them up. Pointwise losses are a map or a reduction.

// classOperands views a classification call's operands over x's shape:
// class targets and per-row upstream gradients broadcast along the class
// dim, the class weight along every other dim.
type classOperands struct {
	x            *core.Tensor
	classDim, c  int
	frame        lower.Frame
	probs        bool
	ins          []*core.Tensor // x, target, then weight if given
	hasW         bool
	ignore       int64
	smoothing    float64
	reduction    string
	weightAt     string // C++: the weight of class c (member index r), or 1
	targetWeight string // C++: the weight of the row's target y, or 1
}

// alongRows views t (shape x's without the class dim) over x's shape.
func alongRows(t, x *core.Tensor, classDim int) *core.Tensor {
	if x.Rank() == 1 {
		return core.NewView(t, x.Shape(), []int{0}, t.Offset())
	}
	st := t.Strides()
	strides := append(append(append([]int{}, st[:classDim]...), 0), st[classDim:]...)
	return core.NewView(t, x.Shape(), strides, t.Offset())
}

// alongClasses views a [C] tensor over x's shape.
func alongClasses(w, x *core.Tensor, classDim int) *core.Tensor {
	strides := make([]int, x.Rank())
	strides[classDim] = w.Strides()[0]
	return core.NewView(w, x.Shape(), strides, w.Offset())
}

func newClassOperands(k *core.KernelCall, x, target, weight *core.Tensor) classOperands {
	o := classOperands{x: x, ignore: int64(k.Attrs.Int("ignore_index")), smoothing: k.Attrs.Float("label_smoothing"),
		reduction: k.Attrs.String("reduction"), weightAt: "1.0", targetWeight: "1.0"}
	if x.Rank() > 1 {
		o.classDim = 1
	}
	o.c = x.Shape()[o.classDim]
	o.frame = lower.NewFrame(x.Shape(), []int{o.classDim})
	o.probs = target.DType().IsFloat()
	t := target
	if !o.probs {
		t = alongRows(target, x, o.classDim)
	}
	o.ins = []*core.Tensor{x, t}
	if weight != nil {
		o.hasW = true
		o.ins = append(o.ins, alongClasses(weight, x, o.classDim))
		o.weightAt = "(f64)x2"
		// The class dim is the one reduced dim: stride st[2][4].
		o.targetWeight = "(f64)ld(in2[kb2 + y * (idx)A.st[2][4]])"
	}
	return o
}

// rowTarget declares y, the row's class target, and ign, whether it is
// ignored.
const rowTarget = "const i64 y = (i64)ld(in1[kb1]);\nconst bool ign = y == pi(0u);\n"

// labelCheck refuses class targets outside [0, C) other than ignore_index.
func (o classOperands) labelCheck(p *rowProgram) {
	if o.probs {
		return
	}
	p.check = "(i64)ld(in1[kb1]) != pi(0u) && ((i64)ld(in1[kb1]) < 0 || (i64)ld(in1[kb1]) >= R)"
	p.checkValue = "ld(in1[kb1])"
	c := o.c
	p.checkMsg = func(_ uint32, v, row int64) string {
		return fmt.Sprintf("target %d at position %d is out of range [0, %d)", v, row, c)
	}
}

// q is the C++ weight q_c of member c's -log p_c in the row's cross
// entropy (lp is its log-probability).
func (o classOperands) q() string {
	uniform := fmt.Sprintf("(pf(0u) / %d.0)", o.c)
	if o.probs {
		return "(" + o.weightAt + " * ((1.0 - pf(0u)) * (f64)x1 + " + uniform + "))"
	}
	return "(" + uniform + " * " + o.weightAt + " + select(0.0, (1.0 - pf(0u)) * " + o.weightAt + ", (i64)r == y))"
}

func (o classOperands) scalars() *lower.Scalars {
	var sc lower.Scalars
	sc.SetI(0, o.ignore)
	sc.SetF(0, o.smoothing)
	return &sc
}

func classLossKernel(op string, nll bool) core.Kernel {
	return func(k *core.KernelCall) error {
		b := cudaOf(k)
		o := newClassOperands(k, k.Inputs[0], k.Inputs[1], k.Inputs[2])
		p := rowProgram{op: op, frame: o.frame, ins: o.ins, sc: o.scalars()}
		o.labelCheck(&p)
		loss, den := "0.0", "1.0"
		if !o.probs {
			den = "(ign ? 0.0 : " + o.targetWeight + ")"
		}
		switch {
		case nll:
			p.passes = []rowPass{{then: rowTarget}}
			loss = "(ign ? 0.0 : -" + o.targetWeight + " * (f64)ld(in0[kb0 + y * (idx)A.st[0][4]]))"
		case !o.probs && o.smoothing == 0:
			p.passes = []rowPass{{stats: []rowStat{{name: "st", acc: "SoftAcc<" + computeType(o.x.DType()) + ">", value: "x0"}},
				then: rowTarget + "const f64 lse = (f64)st.m + log((f64)st.s);"}}
			loss = "(ign ? 0.0 : -" + o.targetWeight + " * ((f64)ld(in0[kb0 + y * (idx)A.st[0][4]]) - lse))"
		default:
			// Every class takes part, even at zero weight, so 0*(-inf)
			// makes NaN where PyTorch's sum over classes does.
			then := "const f64 lse = (f64)st.m + log((f64)st.s);"
			if !o.probs {
				then = rowTarget + then
			}
			p.passes = []rowPass{
				{stats: []rowStat{{name: "st", acc: "SoftAcc<" + computeType(o.x.DType()) + ">", value: "x0"}}, then: then},
				{stats: []rowStat{{name: "ce", acc: "SumAcc<f64>", value: "-" + o.q() + " * ((f64)x0 - lse)"}}},
			}
			loss = "ce.s"
			if !o.probs {
				loss = "(ign ? 0.0 : ce.s)"
			}
		}
		out := k.Outputs[0]
		if o.reduction == "none" {
			p.rowOut, p.rowWrites = out, []string{loss}
			return b.rows(p)
		}
		return b.rowsThenSum(p, []string{loss, den}, out, o.reduction == "mean")
	}
}

// rowsThenSum runs p writing two values per row (a term and its divisor)
// and reduces them into out: their sum, or the ratio of sums (mean).
func (b *Backend) rowsThenSum(p rowProgram, writes []string, out *core.Tensor, mean bool) error {
	rows := p.frame.Groups()
	tmp, err := core.Empty(b, core.Shape{rows, 2}, core.F64)
	if err != nil {
		return err
	}
	defer tmp.Release()
	p.rowOut, p.rowWrites = tmp, writes
	if err := b.rows(p); err != nil {
		return err
	}
	final := "acc.a"
	if mean {
		final = "acc.a / acc.b"
	}
	terms := core.NewView(tmp, core.Shape{rows}, []int{2}, 0)
	dens := core.NewView(tmp, core.Shape{rows}, []int{2}, 1)
	return b.reduce(reduction{op: p.op, frame: lower.NewFrame(core.Shape{rows}, []int{0}), ins: []*core.Tensor{terms, dens},
		out: out, acc: "Sum2Acc", value: "p2(x0, x1)", final: final})
}

// classLossBackwardKernel: for cross entropy, row r's gradient is
// up*(Q*softmax - q) with q the target weights and Q their sum; probability
// targets also get -up*w*(1-smoothing)*log_softmax. For nll_loss only the
// target's entry is non-zero: -up*w[y].
func classLossBackwardKernel(op string, nll bool) core.Kernel {
	return func(k *core.KernelCall) error {
		b := cudaOf(k)
		x, target, g := k.Inputs[0], k.Inputs[1], k.Inputs[2]
		o := newClassOperands(k, x, target, k.Inputs[3])
		up, err := b.classUpstream(op, o, g)
		if err != nil {
			return err
		}
		defer up.release()
		p := rowProgram{op: op, frame: o.frame, ins: append(o.ins, up.ins...), outs: k.Outputs, sc: o.scalars()}
		u := up.expr(len(o.ins))
		o.labelCheck(&p)
		if nll {
			p.passes = []rowPass{{then: rowTarget}}
			p.writes = []string{"(ign || (i64)r != y) ? 0.0 : -" + o.targetWeight + " * " + u}
			return b.rows(p)
		}
		then := "const f64 lse = (f64)st.m + log((f64)st.s);"
		if !o.probs {
			then = rowTarget + then
		} else {
			then += "const bool ign = false;"
		}
		p.passes = []rowPass{
			{stats: []rowStat{{name: "st", acc: "SoftAcc<" + computeType(x.DType()) + ">", value: "x0"}}, then: then},
			{stats: []rowStat{{name: "qs", acc: "SumAcc<f64>", value: o.q()}}},
		}
		p.writes = []string{"ign ? 0.0 : " + u + " * (qs.s * exp((f64)x0 - lse) - " + o.q() + ")"}
		if o.probs {
			p.writes = append(p.writes, "-"+u+" * "+o.weightAt+" * (1.0 - pf(0u)) * ((f64)x0 - lse)")
		}
		return b.rows(p)
	}
}

// upstream is a loss gradient's per-row upstream factor: operands to add
// to a row program and the C++ expression over them.
type upstream struct {
	ins   []*core.Tensor
	scale *core.Tensor // the mean's divisor, released after use
}

func (u upstream) expr(first int) string {
	g := fmt.Sprintf("(f64)x%d", first)
	if u.scale != nil {
		return fmt.Sprintf("(%s / (f64)x%d)", g, first+1)
	}
	return g
}

func (u upstream) release() {
	if u.scale != nil {
		u.scale.Release()
	}
}

// classUpstream is g per row (reduction none), g (sum) or g divided by the
// sum of the rows' target weights (mean), over x's shape.
func (b *Backend) classUpstream(op string, o classOperands, g *core.Tensor) (upstream, error) {
	x := o.x
	switch o.reduction {
	case "none":
		return upstream{ins: []*core.Tensor{alongRows(g, x, o.classDim)}}, nil
	case "sum":
		return upstream{ins: []*core.Tensor{scalarOver(g, x)}}, nil
	}
	den, err := core.Empty(b, core.Shape{}, core.F64)
	if err != nil {
		return upstream{}, err
	}
	p := rowProgram{op: op, frame: o.frame, ins: o.ins, sc: o.scalars()}
	d := "1.0"
	if !o.probs {
		p.passes = []rowPass{{then: rowTarget}}
		d = "(ign ? 0.0 : " + o.targetWeight + ")"
	}
	if err := b.rowsThenSum(p, []string{d, "0.0"}, den, false); err != nil {
		den.Release()
		return upstream{}, err
	}
	return upstream{ins: []*core.Tensor{scalarOver(g, x), scalarOver(den, x)}, scale: den}, nil
}

// scalarOver views a one-element tensor over x's shape.
func scalarOver(s, x *core.Tensor) *core.Tensor {
	return core.NewView(s, x.Shape(), make([]int, x.Rank()), s.Offset())
}

// lossDiff is d = input - target in f64, where the CPU computes losses.
const lossDiff = "(f64(x0) - f64(x1))"

// pointwiseLossExpr is the loss of d (smooth_l1's beta in pf(0)).
func pointwiseLossExpr(name string) string {
	const d = lossDiff
	switch name {
	case "mse_loss":
		return d + " * " + d
	case "l1_loss":
		return "abs(" + d + ")"
	}
	return "select(abs(" + d + ") - 0.5 * pf(0u), 0.5 * " + d + " * " + d + " / pf(0u), abs(" + d + ") < pf(0u))"
}

func pointwiseLossGrad(name string) string {
	const d = lossDiff
	sign := "select(select(" + d + ", -1.0, " + d + " < 0.0), 1.0, " + d + " > 0.0)"
	switch name {
	case "mse_loss":
		return "2.0 * " + d
	case "l1_loss":
		return sign
	}
	return "select(" + sign + ", " + d + " / pf(0u), abs(" + d + ") < pf(0u))"
}

func pointwiseLossKernel(name string) core.Kernel {
	return func(k *core.KernelCall) error {
		x, t, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		shape, err := core.BroadcastShapes(x.Shape(), t.Shape())
		if err != nil {
			return err
		}
		var sc lower.Scalars
		sc.SetF(0, k.Attrs.Float("beta"))
		xs, ts := core.NewView(x, shape, lower.BroadcastStrides(x, shape), x.Offset()), core.NewView(t, shape, lower.BroadcastStrides(t, shape), t.Offset())
		e := pointwiseLossExpr(name)
		b := cudaOf(k)
		if r := k.Attrs.String("reduction"); r != "none" {
			final := "acc.s"
			if r == "mean" {
				final = "acc.s / (f64)R"
			}
			all := make([]int, len(shape))
			for i := range all {
				all[i] = i
			}
			return b.reduce(reduction{op: name, frame: lower.NewFrame(shape, all), ins: []*core.Tensor{xs, ts}, out: out,
				acc: "SumAcc<f64>", value: e, final: final, sc: &sc})
		}
		return b.mapRun(name, []*core.Tensor{xs, ts}, out, e, &sc)
	}
}

func pointwiseLossBackwardKernel(k *core.KernelCall) error {
	x, t, g := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	shape := k.Outputs[0].Shape()
	name := k.Attrs.String("loss")
	var sc lower.Scalars
	sc.SetF(0, k.Attrs.Float("beta"))
	xs, ts := core.NewView(x, shape, lower.BroadcastStrides(x, shape), x.Offset()), core.NewView(t, shape, lower.BroadcastStrides(t, shape), t.Offset())
	var gs *core.Tensor
	u := "x2"
	switch k.Attrs.String("reduction") {
	case "none":
		gs = core.NewView(g, shape, lower.BroadcastStrides(g, shape), g.Offset())
	case "mean":
		gs = scalarOverShape(g, shape)
		sc.SetF(1, float64(shape.Numel()))
		u = "(x2 / pf(1u))"
	default:
		gs = scalarOverShape(g, shape)
	}
	grad := pointwiseLossGrad(name)
	b := cudaOf(k)
	ins := []*core.Tensor{xs, ts, gs}
	if err := b.mapRun("_pointwise_loss_backward", ins, k.Outputs[0], "f64("+u+") * "+grad, &sc); err != nil {
		return err
	}
	return b.mapRun("_pointwise_loss_backward", ins, k.Outputs[1], "-(f64("+u+") * "+grad+")", &sc)
}

func scalarOverShape(s *core.Tensor, shape core.Shape) *core.Tensor {
	return core.NewView(s, shape, make([]int, len(shape)), s.Offset())
}

func init() {
	register("cross_entropy", classLossKernel("cross_entropy", false))
	register("_cross_entropy_backward", classLossBackwardKernel("_cross_entropy_backward", false))
	register("nll_loss", classLossKernel("nll_loss", true))
	register("_nll_loss_backward", classLossBackwardKernel("_nll_loss_backward", true))
	for _, name := range []string{"mse_loss", "l1_loss", "smooth_l1_loss"} {
		register(name, pointwiseLossKernel(name))
	}
	register("_pointwise_loss_backward", pointwiseLossBackwardKernel)
}

// bceOperands views input, target, weight and pos_weight (the last two
// optional) over the input's shape, and names them in f64.
func bceOperands(ins []*core.Tensor, x *core.Tensor) (ops []*core.Tensor, w, lw, pw string) {
	shape := x.Shape()
	view := func(t *core.Tensor) *core.Tensor {
		return core.NewView(t, shape, lower.BroadcastStrides(t, shape), t.Offset())
	}
	ops = []*core.Tensor{x, view(ins[1])}
	w, lw, pw = "1.0", "1.0", "0.0"
	if ins[2] != nil {
		w = fmt.Sprintf("f64(x%d)", len(ops))
		ops = append(ops, view(ins[2]))
	}
	if ins[3] != nil {
		p := fmt.Sprintf("f64(x%d)", len(ops))
		ops = append(ops, view(ins[3]))
		lw, pw = "(1.0 + ("+p+" - 1.0) * f64(x1))", "("+p+" - 1.0)"
	}
	return ops, w, lw, pw
}

// softplusNeg is log(1 + exp(-x)) without overflow, of an f64 expression.
func softplusNeg(x string) string {
	return "(m_log1p(m_exp(-abs(" + x + "))) + max(-(" + x + "), 0.0))"
}

// bceKernel: loss = w*((1-t)*x + lw*log(1 + exp(-x))), the stable form
// PyTorch uses, reduced as asked.
func bceKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	ops, w, lw, _ := bceOperands(k.Inputs, x)
	const xd, td = "f64(x0)", "f64(x1)"
	e := w + " * ((1.0 - " + td + ") * " + xd + " + " + lw + " * " + softplusNeg(xd) + ")"
	b := cudaOf(k)
	if r := k.Attrs.String("reduction"); r != "none" {
		final := "acc.s"
		if r == "mean" {
			final = "acc.s / (f64)R"
		}
		all := make([]int, x.Rank())
		for i := range all {
			all[i] = i
		}
		return b.reduce(reduction{op: "binary_cross_entropy_with_logits", frame: lower.NewFrame(x.Shape(), all), ins: ops, out: out,
			acc: "SumAcc<f64>", value: e, final: final})
	}
	return b.mapRun("binary_cross_entropy_with_logits", ops, out, e, nil)
}

// bceBackwardKernel: d/dx = u*w*((1-t) - lw/(1 + exp(x))), d/dt =
// u*w*(-x + (pos_weight-1)*log(1 + exp(-x))), with u the upstream share.
func bceBackwardKernel(k *core.KernelCall) error {
	x, t, g := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	ops, w, lw, pw := bceOperands([]*core.Tensor{x, t, k.Inputs[3], k.Inputs[4]}, x)
	shape := x.Shape()
	var sc lower.Scalars
	u := fmt.Sprintf("f64(x%d)", len(ops))
	switch k.Attrs.String("reduction") {
	case "none":
		ops = append(ops, core.NewView(g, shape, lower.BroadcastStrides(g, shape), g.Offset()))
	case "mean":
		ops = append(ops, scalarOverShape(g, shape))
		sc.SetF(0, float64(shape.Numel()))
		u = "(" + u + " / pf(0u))"
	default:
		ops = append(ops, scalarOverShape(g, shape))
	}
	const xd, td = "f64(x0)", "f64(x1)"
	uw := "(" + u + " * " + w + ")"
	b := cudaOf(k)
	dx := uw + " * ((1.0 - " + td + ") - " + lw + " / (1.0 + m_exp(" + xd + ")))"
	if err := b.mapRun("_binary_cross_entropy_with_logits_backward", ops, k.Outputs[0], dx, &sc); err != nil {
		return err
	}
	dt := uw + " * (-" + xd + " + " + pw + " * " + softplusNeg(xd) + ")"
	return b.mapRun("_binary_cross_entropy_with_logits_backward", ops, k.Outputs[1], dt, &sc)
}

func init() {
	register("binary_cross_entropy_with_logits", bceKernel)
	register("_binary_cross_entropy_with_logits_backward", bceBackwardKernel)
}
