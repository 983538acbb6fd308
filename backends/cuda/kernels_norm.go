//go:build linux && cgo

package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Layer norm forward and backward and RMS norm's backward, as row programs
// (rows.go; rms_norm itself is a row body, core/ops_norm_rows.go). The norms take their moments in f64 in two passes as the CPU
// does (so a large mean costs no precision), and the weight gradients sum
// over rows in a reduction reading per-row statistics the first kernel
// saved.

// normFrame splits x into rows and the trailing normalized_shape dims.
func normFrame(x *core.Tensor, a core.Attrs) lower.Frame {
	ns := len(a.Ints("normalized_shape"))
	axes := make([]int, ns)
	for i := range axes {
		axes[i] = x.Rank() - ns + i
	}
	return lower.NewFrame(x.Shape(), axes)
}

// present lists the non-nil tensors; names gives each its operand name.
func present(ts ...*core.Tensor) ([]*core.Tensor, []string) {
	var out []*core.Tensor
	names := make([]string, len(ts))
	for i, t := range ts {
		if t != nil {
			names[i] = fmt.Sprintf("x%d", len(out))
			out = append(out, t)
		}
	}
	return out, names
}

// momentPasses are the CPU's two passes (nnMeanRstd): the mean of x0,
// then the biased variance around it, declaring mean and rstd =
// 1/sqrt(var + eps), eps in pf(0). A row held in registers makes the
// second pass cost no memory traffic.
var momentPasses = []rowPass{
	{stats: []rowStat{{name: "ms", acc: "SumAcc<f64>", value: "(f64)x0"}}, then: "const f64 mean = ms.s / (f64)R;"},
	{stats: []rowStat{{name: "mq", acc: "SumAcc<f64>", value: "((f64)x0 - mean) * ((f64)x0 - mean)"}},
		then: "const f64 rstd = 1.0 / sqrt(mq.s / (f64)R + pf(0));"},
}

func layerNormKernel(k *core.KernelCall) error {
	x, w, b := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	ins, names := present(x, w, b)
	y := "(x0 - mean) * rstd"
	if w != nil {
		y += " * " + names[1]
	}
	if b != nil {
		y += " + " + names[2]
	}
	var sc lower.Scalars
	sc.SetF(0, k.Attrs.Float("eps"))
	return cudaOf(k).rows(rowProgram{op: "layer_norm", frame: normFrame(x, k.Attrs), ins: ins, outs: k.Outputs[:1],
		passes: momentPasses, writes: []string{y}, sc: &sc})
}

// layerNormBackwardKernel: with xhat = (x-mean)*rstd and d = g*w,
// dx = rstd*(d - mean(d) - xhat*mean(d*xhat)) per row; dweight and dbias
// sum g*xhat and g over the rows.
func layerNormBackwardKernel(k *core.KernelCall) error {
	x, g, w := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	f := normFrame(x, k.Attrs)
	ins, names := present(x, g, w)
	d := "(f64)x1"
	if w != nil {
		d = "((f64)x1 * " + names[2] + ")"
	}
	xhat := "((x0 - mean) * rstd)"
	var sc lower.Scalars
	sc.SetF(0, k.Attrs.Float("eps"))
	wantParams := len(k.Outputs) >= 3 && (k.Outputs[1] != nil || k.Outputs[2] != nil)
	p := rowProgram{op: "_layer_norm_backward", frame: f, ins: ins, outs: k.Outputs[:1], sc: &sc,
		passes: append(append([]rowPass{}, momentPasses...), rowPass{stats: []rowStat{{name: "sd", acc: "SumAcc<f64>", value: d}, {name: "sdx", acc: "SumAcc<f64>", value: d + " * " + xhat}}}),
		writes: []string{"rstd * (" + d + " - sd.s / (f64)R - " + xhat + " * (sdx.s / (f64)R))"}}
	b := cudaOf(k)
	if !wantParams {
		return b.rows(p)
	}
	stats, err := core.Empty(b, core.Shape{f.Groups(), 2}, core.F64)
	if err != nil {
		return err
	}
	defer stats.Release()
	p.rowOut, p.rowWrites = stats, []string{"mean", "rstd"}
	if err := b.rows(p); err != nil {
		return err
	}
	mean, rstd := statViews(stats, x.Shape(), f, 2)
	if dw := k.Outputs[1]; dw != nil {
		if err := b.columnSums("_layer_norm_backward", f, []*core.Tensor{x, g, mean, rstd}, dw, "x1 * (x0 - x2) * x3"); err != nil {
			return err
		}
	}
	if db := k.Outputs[2]; db != nil {
		return b.columnSums("_layer_norm_backward", f, []*core.Tensor{g}, db, "x0")
	}
	return nil
}

// columnSums writes into out the sums of value over f's kept dims (the
// rows), each operand broadcast to f's shape.
func (b *Backend) columnSums(op string, f lower.Frame, ins []*core.Tensor, out *core.Tensor, value string) error {
	return b.reduce(reduction{op: op, frame: lower.NewFrame(f.Shape, f.Kept), ins: ins, out: out,
		acc: "SumAcc<f64>", value: value, final: "acc.s"})
}

// statViews are views of stats ([groups, n], one row per group of f) that
// broadcast against x's shape: column i for i < n.
func statViews(stats *core.Tensor, shape core.Shape, f lower.Frame, n int) (*core.Tensor, *core.Tensor) {
	view := shape.Clone()
	for _, d := range f.Reduced {
		view[d] = 1
	}
	strides := make([]int, len(view))
	acc := n
	for i := len(view) - 1; i >= 0; i-- {
		if view[i] == 1 {
			continue
		}
		strides[i] = acc
		acc *= view[i]
	}
	first := core.NewView(stats, view, strides, 0)
	if n < 2 {
		return first, nil
	}
	return first, core.NewView(stats, view, strides, 1)
}

// rmsScale declares the row's 1/sqrt(mean(x^2) + eps), eps in pf(0).
const rmsScale = "const f64 s = 1.0 / sqrt(q.s / (f64)R + pf(0));\n"

// rmsNormBackwardKernel: y = x*s*w with s = (mean(x^2)+eps)^-1/2 gives
// dx = s*g*w - s^3 * x * mean(g*w*x), dweight = sum over rows of g*x*s.
func rmsNormBackwardKernel(k *core.KernelCall) error {
	x, g, w := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	f := normFrame(x, k.Attrs)
	ins, names := present(x, g, w)
	d := "(f64)x1"
	if w != nil {
		d = "((f64)x1 * " + names[2] + ")"
	}
	var sc lower.Scalars
	sc.SetF(0, oprules.RMSNormEps(k.Attrs, x.DType()))
	p := rowProgram{op: "_rms_norm_backward", frame: f, ins: ins, outs: k.Outputs[:1], sc: &sc,
		passes: []rowPass{{stats: []rowStat{{name: "q", acc: "SumAcc<f64>", value: "(f64)x0 * x0"}, {name: "dot", acc: "SumAcc<f64>", value: d + " * x0"}},
			then: rmsScale + "const f64 c = s * s * s * dot.s / (f64)R;"}},
		writes: []string{"s * " + d + " - c * x0"}}
	b := cudaOf(k)
	if len(k.Outputs) < 2 || k.Outputs[1] == nil {
		return b.rows(p)
	}
	scale, err := core.Empty(b, core.Shape{f.Groups(), 1}, core.F64)
	if err != nil {
		return err
	}
	defer scale.Release()
	p.rowOut, p.rowWrites = scale, []string{"s"}
	if err := b.rows(p); err != nil {
		return err
	}
	s, _ := statViews(scale, x.Shape(), f, 1)
	return b.columnSums("_rms_norm_backward", f, []*core.Tensor{x, g, s}, k.Outputs[1], "x1 * x0 * x2")
}

func init() {
	register("layer_norm", layerNormKernel)
	register("_layer_norm_backward", layerNormBackwardKernel)
	register("_rms_norm_backward", rmsNormBackwardKernel)
}
