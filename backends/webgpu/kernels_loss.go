package webgpu

import (
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/wgsl"
)

// Loss kernels (loss.wgsl): per-element losses run one thread per element,
// class losses one thread per row of C classes. Mean and sum reductions go
// through per-workgroup partial sums and one finishing workgroup, both in a
// fixed tree order, so a loss is deterministic; the sums are f32 where the
// CPU sums in float64.

// lpLossWG is the workgroup size of the loss kernels (and of their tree
// reductions).
const lpLossWG = 256

// lpLossData is the template data of loss.wgsl with every key a kind may
// read.
func lpLossData(kind string, ins, outs []string) map[string]any {
	return map[string]any{"WG": lpLossWG, "Kind": kind, "Ins": ins, "Outs": outs, "Reduce": false,
		"V0": "", "V1": "", "Store": "", "Store1": "", "Finish": "", "HasW": false, "WIn": 0,
		"Probs": false, "NLL": false, "DIn": 0, "DenOnly": false}
}

// lpLossKey is a pipeline key covering all of the template data.
func lpLossKey(data map[string]any) string {
	var sb strings.Builder
	sb.WriteString("lp_loss")
	for _, k := range []string{"Kind", "Ins", "Outs", "Reduce", "V0", "V1", "Store", "Store1", "Finish", "HasW", "WIn", "Probs", "NLL", "DIn", "DenOnly"} {
		fmt.Fprintf(&sb, "|%v", data[k])
	}
	return sb.String()
}

// lpLossRun compiles (once) and dispatches loss.wgsl over n threads.
func (b *Backend) lpLossRun(data map[string]any, prm *params, n int, ts ...*core.Tensor) error {
	ins := data["Ins"].([]string)
	p, err := b.pipelineFor(lpLossKey(data), len(ins), len(ts)-len(ins), func() (string, error) {
		return wgsl.Render("loss", data)
	})
	if err != nil {
		return err
	}
	bufs, err := buffers(ts...)
	if err != nil {
		return err
	}
	return b.run(p, prm, n, lpLossWG, bufs...)
}

// lpReduce runs data's reducing form over n threads into per-workgroup
// (sum, divisor) partials, then finishes them into out: sum, mean (sum over
// divisor) or both (the pair itself, for a backward pass's divisor).
func (b *Backend) lpReduce(data map[string]any, prm *params, n int, ins []*core.Tensor, out *core.Tensor, finish string) error {
	x, y := groupsFor(max(n, 1), lpLossWG)
	groups := int(x * y)
	partials, err := b.lpTemp(2 * groups)
	if err != nil {
		return err
	}
	defer partials.Release()
	data["Reduce"] = true
	data["Outs"] = []string{"f32"}
	if err := b.lpLossRun(data, prm, n, append(append([]*core.Tensor{}, ins...), partials)...); err != nil {
		return err
	}
	fin := lpLossData("finish", []string{"f32"}, []string{"f32"})
	fin["Finish"] = finish
	if finish != "both" {
		fin["Store"] = storeExpr(out.DType(), "v")
	}
	var fp params
	if n > 0 { // else no partial was written: the sum of nothing is 0
		fp.setI(0, groups)
	}
	return b.lpLossRun(fin, &fp, lpLossWG, partials, out)
}

// lpTemp is a scratch f32 tensor of n elements on the GPU.
func (b *Backend) lpTemp(n int) (*core.Tensor, error) {
	return core.Empty(b, core.Shape{n}, core.F32)
}

// lpPointExprs gives a per-element loss of d = input - target (x0 - x1)
// and its derivative, with beta in slot 1.
func lpPointExprs(name string) (loss, grad string) {
	const d = "(x0 - x1)"
	switch name {
	case "mse_loss":
		return d + " * " + d, "2.0 * " + d
	case "l1_loss":
		return "abs(" + d + ")", "lp_sign(" + d + ")"
	}
	return fmt.Sprintf("select(abs(%s) - 0.5 * pf(1u), 0.5 * %s * %s / pf(1u), abs(%s) < pf(1u))", d, d, d, d),
		fmt.Sprintf("select(lp_sign(%s), %s / pf(1u), abs(%s) < pf(1u))", d, d, d)
}

// lpPointLoss computes expr over ins broadcast to shape, reduced into out
// as reduction says.
func lpPointLoss(k *core.KernelCall, ins []*core.Tensor, shape core.Shape, expr string, set func(*params)) error {
	b, out := gpuOf(k), k.Outputs[0]
	types := make([]string, len(ins))
	for i, t := range ins {
		types[i] = physical(t.DType())
	}
	data := lpLossData("point", types, []string{physical(out.DType())})
	data["V0"] = expr
	data["Store"] = storeExpr(out.DType(), "v")
	var prm params
	set(&prm)
	n := shape.Numel()
	if err := newIteration(shape, ins...).write(&prm, n); err != nil {
		return err
	}
	reduction := k.Attrs.String("reduction")
	if reduction == "none" {
		if n == 0 {
			return nil
		}
		return b.lpLossRun(data, &prm, n, append(append([]*core.Tensor{}, ins...), out)...)
	}
	return b.lpReduce(data, &prm, n, ins, out, reduction)
}

func lpPointwiseLoss(name string) core.Kernel {
	return func(k *core.KernelCall) error {
		x, t := k.Inputs[0], k.Inputs[1]
		shape, err := core.BroadcastShapes(x.Shape(), t.Shape())
		if err != nil {
			return err
		}
		loss, _ := lpPointExprs(name)
		return lpPointLoss(k, []*core.Tensor{x, t}, shape, loss, func(p *params) { p.setF(1, k.Attrs.Float("beta")) })
	}
}

// lpUpstream is the upstream gradient of one element, x2 holding g: the
// mean's share is g/n with n in slot 0.
func lpUpstream(reduction string) string {
	if reduction == "mean" {
		return "(x2 / pf(0u))"
	}
	return "x2"
}

// lpPointBackward writes two gradients (of input and of target) in the
// shape of the first output, from ins read through their strides.
func lpPointBackward(k *core.KernelCall, ins []*core.Tensor, v0, v1 string, set func(*params)) error {
	dx, dt := k.Outputs[0], k.Outputs[1]
	n := dx.Numel()
	if n == 0 {
		return nil
	}
	types := make([]string, len(ins))
	for i, t := range ins {
		types[i] = physical(t.DType())
	}
	data := lpLossData("point", types, []string{physical(dx.DType()), physical(dt.DType())})
	data["V0"], data["V1"] = v0, v1
	data["Store"], data["Store1"] = storeExpr(dx.DType(), "v"), storeExpr(dt.DType(), "v1")
	var prm params
	prm.setF(0, float64(n))
	set(&prm)
	if err := newIteration(dx.Shape(), ins...).write(&prm, n); err != nil {
		return err
	}
	return gpuOf(k).lpLossRun(data, &prm, n, append(append([]*core.Tensor{}, ins...), dx, dt)...)
}

func lpPointwiseLossBackward(k *core.KernelCall) error {
	_, grad := lpPointExprs(k.Attrs.String("loss"))
	v0 := lpUpstream(k.Attrs.String("reduction")) + " * " + grad
	return lpPointBackward(k, k.Inputs[:3], v0, "-("+v0+")", func(p *params) { p.setF(1, k.Attrs.Float("beta")) })
}

// lpBCEInputs lists input, target (and g) plus the optional weight and
// pos_weight, and the WGSL names of the latter two ("" when absent).
func lpBCEInputs(k *core.KernelCall, fixed int) (ins []*core.Tensor, w, pw string) {
	ins = append([]*core.Tensor{}, k.Inputs[:fixed]...)
	if t := k.Inputs[fixed]; t != nil {
		w = fmt.Sprintf("x%d", len(ins))
		ins = append(ins, t)
	}
	if t := k.Inputs[fixed+1]; t != nil {
		pw = fmt.Sprintf("x%d", len(ins))
		ins = append(ins, t)
	}
	return ins, w, pw
}

// lpBCELogWeight is 1 + (pos_weight - 1)*target, the weight of the
// positive term.
func lpBCELogWeight(pw string) string {
	if pw == "" {
		return "1.0"
	}
	return "(1.0 + (" + pw + " - 1.0) * x1)"
}

// lpBCE: loss = w*((1-t)*x + lw*log(1 + exp(-x))), the stable form.
func lpBCE(k *core.KernelCall) error {
	ins, w, pw := lpBCEInputs(k, 2)
	e := "((1.0 - x1) * x0 + " + lpBCELogWeight(pw) + " * lp_softplus_neg(x0))"
	if w != "" {
		e = "(" + w + " * " + e + ")"
	}
	return lpPointLoss(k, ins, k.Inputs[0].Shape(), e, func(*params) {})
}

// lpBCEBackward: d/dx = u*((1-t) - lw/(1+exp(x))), d/dt = u*(-x +
// (pos_weight-1)*log(1+exp(-x))) with u the upstream times the weight.
func lpBCEBackward(k *core.KernelCall) error {
	ins, w, pw := lpBCEInputs(k, 3)
	u := lpUpstream(k.Attrs.String("reduction"))
	if w != "" {
		u = "(" + u + " * " + w + ")"
	}
	pos := "0.0"
	if pw != "" {
		pos = "(" + pw + " - 1.0)"
	}
	v0 := u + " * ((1.0 - x1) - " + lpBCELogWeight(pw) + " / (1.0 + m_exp(x0)))"
	v1 := u + " * (-x0 + " + pos + " * lp_softplus_neg(x0))"
	return lpPointBackward(k, ins, v0, v1, func(*params) {})
}

// lpClassLayout describes x, target, g and weight over x's shape for the
// class kernels: a row-shaped operand (targets, per-row g) steps 0 along
// the class dim, a weight only along it, a scalar g never.
func lpClassLayout(x *core.Tensor, ops []*core.Tensor, kinds []string) iteration {
	shape := x.Shape()
	classDim := 1
	if len(shape) == 1 {
		classDim = 0
	}
	full := make([][]int, len(ops))
	offs := make([]int, len(ops))
	for i, t := range ops {
		offs[i] = t.Offset()
		st := make([]int, len(shape))
		ts := t.Strides()
		switch kinds[i] {
		case "full":
			copy(st, ts)
		case "row":
			for d := range shape {
				switch {
				case d < classDim:
					st[d] = ts[d]
				case d > classDim:
					st[d] = ts[d-1]
				}
			}
		case "class":
			st[classDim] = ts[0]
		}
		full[i] = st
	}
	shape2, strides := lower.Coalesce(shape, full)
	return iteration{lower.Iteration{Shape: shape2, Strides: strides, Offsets: offs}}
}

// lpCheckLabels refuses class targets outside [0, C) other than
// ignore_index, as the CPU does. It reads the targets back: an index out of
// range would otherwise read another row's memory.
func lpCheckLabels(t *core.Tensor, c int, ignore int64) error {
	labels, err := t.Int64s()
	if err != nil {
		return err
	}
	for r, y := range labels {
		if y != ignore && (y < 0 || y >= int64(c)) {
			return fmt.Errorf("target %d at position %d is out of range [0, %d)", y, r, c)
		}
	}
	return nil
}

// lpCheckLabelsOnDevice is lpCheckLabels run on the GPU: the targets are
// read back only to word a failure. An ignore_index outside i32 matches no
// target the GPU holds (i64 is held as i32), so it is switched off there.
func lpCheckLabelsOnDevice(b *Backend, kind string, t *core.Tensor, c int, ignore int64) error {
	v := asI32(t.DType())
	bad := fmt.Sprintf("(pi(2u) == 0 || %s != pi(1u)) && (%s < 0 || %s >= pi(0u))", v, v, v)
	fits := ignore >= math.MinInt32 && ignore <= math.MaxInt32
	return b.checkOnDevice(kind, t, bad, func(p *params) {
		p.setI(0, c)
		if fits {
			p.setI(1, int(ignore))
			p.setI(2, 1)
		}
	}, func() error { return lpCheckLabels(t, c, ignore) })
}

// lpClassSetup validates the targets (when check) and fills the class kernels' data
// and slots for x, target, the optional g (scalar or per row) and weight.
func lpClassSetup(k *core.KernelCall, kind string, nll bool, g, w *core.Tensor, check bool) (map[string]any, params, []*core.Tensor, int, error) {
	x, t := k.Inputs[0], k.Inputs[1]
	n, c, s := oprules.ClassLayout(x.Shape())
	probs := t.DType().IsFloat()
	var prm params
	// A row's thread loops over its classes three times (the maximum, the
	// sum of exponentials, the loss terms), and each read of an operand at
	// a class runs loc's loop over the input's dims; a vocabulary past the
	// driver's loop limit would be cut short (on lavapipe 16,000 classes
	// already were).
	reads := 1
	if w != nil {
		reads++
	}
	if probs {
		reads++
	}
	if err := gpuOf(k).checkLoops("", 3*c*(1+reads*max(x.Rank()-1, 1)), 1); err != nil {
		return nil, prm, nil, 0, err
	}
	ignore := int64(k.Attrs.Int("ignore_index"))
	if !probs && check {
		if err := lpCheckLabelsOnDevice(gpuOf(k), kind, t, c, ignore); err != nil {
			return nil, prm, nil, 0, err
		}
	}
	ops, kinds := []*core.Tensor{x, t}, []string{"full", "row"}
	if probs {
		kinds[1] = "full"
	}
	if g != nil {
		ops = append(ops, g)
		kinds = append(kinds, "row")
		if g.Shape().Numel() == 1 && len(g.Shape()) == 0 {
			kinds[2] = "scalar"
		}
	}
	types := make([]string, len(ops))
	for i, o := range ops {
		types[i] = physical(o.DType())
	}
	data := lpClassData(kind, types, nll, probs)
	if w != nil {
		data["HasW"], data["WIn"] = true, len(ops)
		ops = append(ops, w)
		kinds = append(kinds, "class")
		data["Ins"] = append(types, physical(w.DType()))
	}
	rows := n * s
	ls := k.Attrs.Float("label_smoothing")
	prm.setF(0, ls)
	prm.setF(1, 1-ls)
	prm.setF(2, ls/float64(c))
	prm.setI(4, c)
	prm.setI(5, s)
	prm.setI(6, int(int32(ignore)))
	if err := lpClassLayout(x, ops, kinds).write(&prm, rows); err != nil {
		return nil, prm, nil, 0, err
	}
	return data, prm, ops, rows, nil
}

func lpClassData(kind string, types []string, nll, probs bool) map[string]any {
	data := lpLossData(kind, types, nil)
	data["NLL"], data["Probs"] = nll, probs
	return data
}

func lpClassLoss(nll bool) core.Kernel {
	return func(k *core.KernelCall) error {
		out := k.Outputs[0]
		data, prm, ops, rows, err := lpClassSetup(k, "class", nll, nil, k.Inputs[2], true)
		if err != nil {
			return err
		}
		data["Store"] = storeExpr(out.DType(), "v")
		b := gpuOf(k)
		if r := k.Attrs.String("reduction"); r != "none" {
			return b.lpReduce(data, &prm, rows, ops, out, r)
		}
		if rows == 0 {
			return nil
		}
		data["Outs"] = []string{physical(out.DType())}
		return b.lpLossRun(data, &prm, rows, append(ops, out)...)
	}
}

// lpClassLossBackward writes d(input) (and d(target) for probability
// targets) row by row; a mean first sums the rows' divisors on the GPU.
func lpClassLossBackward(nll bool) core.Kernel {
	return func(k *core.KernelCall) error {
		b := gpuOf(k)
		dx := k.Outputs[0]
		data, prm, ops, rows, err := lpClassSetup(k, "classgrad", nll, k.Inputs[2], k.Inputs[3], true)
		if err != nil {
			return err
		}
		if rows == 0 || dx.Numel() == 0 {
			return b.lpZero(k.Outputs)
		}
		if k.Attrs.String("reduction") == "mean" {
			den, err := b.lpTemp(2)
			if err != nil {
				return err
			}
			defer den.Release()
			// The divisor pass sees x, target and weight only.
			dd, dprm, dops, _, err := lpClassSetup(k, "class", nll, nil, k.Inputs[3], false)
			if err != nil {
				return err
			}
			dd["DenOnly"] = true
			if err := b.lpReduce(dd, &dprm, rows, dops, den, "both"); err != nil {
				return err
			}
			data["DIn"] = len(ops)
			data["Ins"] = append(data["Ins"].([]string), "f32")
			ops = append(ops, den)
		}
		outs := []string{physical(dx.DType())}
		data["Store"] = storeExpr(dx.DType(), "v")
		ts := append(ops, dx)
		if len(k.Outputs) > 1 {
			outs = append(outs, physical(k.Outputs[1].DType()))
			data["Store1"] = storeExpr(k.Outputs[1].DType(), "v1")
			ts = append(ts, k.Outputs[1])
		}
		data["Outs"] = outs
		return b.lpLossRun(data, &prm, rows, ts...)
	}
}

// lpZero fills ts with zeros (gradients of an empty loss).
func (b *Backend) lpZero(ts []*core.Tensor) error {
	for _, t := range ts {
		if t.Numel() == 0 {
			continue
		}
		data := lpLossData("point", nil, []string{physical(t.DType())})
		data["V0"], data["Store"] = "0.0", storeExpr(t.DType(), "v")
		var prm params
		if err := newIteration(t.Shape()).write(&prm, t.Numel()); err != nil {
			return err
		}
		if err := b.lpLossRun(data, &prm, t.Numel(), t); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	register("cross_entropy", lpClassLoss(false))
	register("_cross_entropy_backward", lpClassLossBackward(false))
	register("nll_loss", lpClassLoss(true))
	register("_nll_loss_backward", lpClassLossBackward(true))
	for _, name := range []string{"mse_loss", "l1_loss", "smooth_l1_loss"} {
		register(name, lpPointwiseLoss(name))
	}
	register("_pointwise_loss_backward", lpPointwiseLossBackward)
	register("binary_cross_entropy_with_logits", lpBCE)
	register("_binary_cross_entropy_with_logits_backward", lpBCEBackward)
}
