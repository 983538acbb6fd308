package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// The row norms run one thread per row (a frame group), reading the row up
// to three times; the weight gradients sum over rows in a second launch
// with one thread per column, using per-row statistics saved by a first
// one. Everything is deterministic. Rows too long for one thread on a
// device with a loop limit take kernels_norm_long.go's path. rms_norm
// itself is a row body (core/ops_norm_rows.go, gpu_rows.go).

// normFrame splits x into rows and the trailing normalized_shape dims.
func normFrame(x *core.Tensor, a core.Attrs) frame {
	ns := len(a.Ints("normalized_shape"))
	axes := make([]int, ns)
	for i := range axes {
		axes[i] = x.Rank() - ns + i
	}
	return newFrame(x.Shape(), axes)
}

// present lists the non-nil tensors and says which were there.
func present(ts ...*core.Tensor) ([]*core.Tensor, []bool) {
	var out []*core.Tensor
	has := make([]bool, len(ts))
	for i, t := range ts {
		if t != nil {
			out = append(out, t)
			has[i] = true
		}
	}
	return out, has
}

// meanRstdWGSL is the row mean and 1/sqrt(biased variance + eps), eps in
// slot 0.
func meanRstdWGSL() string {
	return kahanSum("sum", "v0(o, r)") + "\tlet mean = sum / f32(R);\n" +
		kahanSum("ss", "(v0(o, r) - mean) * (v0(o, r) - mean)") + "\tlet rstd = 1.0 / sqrt(ss / f32(R) + pf(0u));\n"
}

func layerNormKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	return affineNorm(gpuOf(k), normFrame(x, k.Attrs), x, k.Inputs[1], k.Inputs[2], k.Outputs[0], k.Attrs.Float("eps"), false)
}

// affineNorm writes (x-mean)*rstd*w + b over frame f, each group of
// reduced dims normalised on its own; w and b (either may be nil) broadcast
// over f's shape.
func affineNorm(g *Backend, f frame, x, w, b, out *core.Tensor, eps float64, silu bool) error {
	ins, has := present(x, w, b)
	y := "(v0(o, r) - mean) * rstd"
	next := 1
	if has[1] {
		y = fmt.Sprintf("%s * v%d(o, r)", y, next)
		next++
	}
	if has[2] {
		y = fmt.Sprintf("%s + v%d(o, r)", y, next)
	}
	store := storeExpr(out.DType(), "nv")
	if silu { // GroupNorm+SiLU in the pass that writes the result
		store = storeExpr(out.DType(), "(nv * m_sigmoid(nv))")
	}
	body := meanRstdWGSL() + "\tfor (var r = 0u; r < R; r++) { let nv = " + y + "; out0[oat(o, r)] = " + store + "; }\n"
	if !g.frameFits(body, f) {
		return g.affineNormLong(f, x, w, b, out, eps, silu)
	}
	return g.reduceRun(f, ins, out, false, body, func(p *params) { p.setF(0, eps) })
}

// rowStat writes one statistic per row (mean, rstd or the rms scale) into a
// keepdim-shaped f32 tensor that broadcasts against x.
func rowStat(g *Backend, x *core.Tensor, f frame, expr string, eps float64) (*core.Tensor, error) {
	shape := x.Shape()
	for _, d := range f.Reduced {
		shape[d] = 1
	}
	st, err := core.Empty(g, shape, core.F32)
	if err != nil {
		return nil, err
	}
	body := expr + "\tout0[o] = stat;\n"
	return st, g.reduceRun(f, []*core.Tensor{x}, st, false, body, func(p *params) { p.setF(0, eps) })
}

// columnSums writes into out the sums of expr over the reduced dims of
// cols.
func columnSums(g *Backend, cols frame, ins []*core.Tensor, out *core.Tensor, expr string) error {
	return g.sumRun(cols, ins, out, expr, sumFinal(false))
}

// layerNormBackwardKernel: with xhat = (x-mean)*rstd and d = g*w,
// dx = rstd*(d - mean(d) - xhat*mean(d*xhat)) per row; dweight and dbias
// sum g*xhat and g over the rows.
func layerNormBackwardKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f := normFrame(x, k.Attrs)
	return normBackward(gpuOf(k), f, f.Kept, x, k.Inputs[1], k.Inputs[2], k.Outputs, k.Attrs.Float("eps"))
}

// normBackward writes dx (outs[0]) of affineNorm over frame f and, when
// asked, dweight and dbias (outs[1], outs[2]) summed over sumAxes of f's
// shape. With xhat = (x-mean)*rstd and d = g*w per group,
// dx = rstd*(d - mean(d) - xhat*mean(d*xhat)). When the weight gradients
// are asked for, each group's mean and rstd are computed once (one launch
// writes both) and read by dx and by the column sums alike.
func normBackward(g *Backend, f frame, sumAxes []int, x, gr, w *core.Tensor, outs []*core.Tensor, eps float64) error {
	// The dx kernel reads a group five times (the statistics, two sums, the
	// result).
	if !g.frameFits(meanRstdWGSL()+kahanSum("sd", "")+kahanSum("sdx", "")+wholeLoop, f) {
		return g.normBackwardLong(f, sumAxes, x, gr, w, outs, eps)
	}
	wantParams := len(outs) >= 3 && (outs[1] != nil || outs[2] != nil)
	var mean, rstd *core.Tensor
	if wantParams {
		stats, err := core.Empty(g, core.Shape{f.Groups(), 2}, core.F32)
		if err != nil {
			return err
		}
		defer stats.Release()
		body := meanRstdWGSL() + "\tout0[2u * o] = mean;\n\tout0[2u * o + 1u] = rstd;\n"
		if err := g.reduceRun(f, []*core.Tensor{x}, stats, false, body, func(p *params) { p.setF(0, eps) }); err != nil {
			return err
		}
		mean, rstd = statViews(stats, x.Shape(), f)
	}
	ins := []*core.Tensor{x, gr}
	d := "v1(o, r)"
	if w != nil {
		ins = append(ins, w)
		d = "(v1(o, r) * v2(o, r))"
	}
	stat := meanRstdWGSL()
	if wantParams {
		k := len(ins)
		ins = append(ins, mean, rstd)
		stat = fmt.Sprintf("\tlet mean = v%d(o, 0u);\n\tlet rstd = v%d(o, 0u);\n", k, k+1)
	}
	xhat := "((v0(o, r) - mean) * rstd)"
	body := stat + kahanSum("sd", d) + kahanSum("sdx", d+" * "+xhat) +
		"\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(outs[0].DType(), "rstd * ("+d+" - sd / f32(R) - "+xhat+" * (sdx / f32(R)))") + "; }\n"
	if err := g.reduceRun(f, ins, outs[0], false, body, func(p *params) { p.setF(0, eps) }); err != nil {
		return err
	}
	if !wantParams {
		return nil
	}
	cols := newFrame(f.Shape, sumAxes)
	if dw := outs[1]; dw != nil {
		if err := columnSums(g, cols, []*core.Tensor{x, gr, mean, rstd}, dw, "v1(o, r) * (v0(o, r) - v2(o, r)) * v3(o, r)"); err != nil {
			return err
		}
	}
	if db := outs[2]; db != nil {
		return columnSums(g, cols, []*core.Tensor{gr}, db, "v0(o, r)")
	}
	return nil
}

// statViews are the mean and rstd columns of stats ([groups, 2], one row
// per group of f) as tensors of x's shape with f's reduced dims of size 1,
// so they broadcast against x.
func statViews(stats *core.Tensor, shape core.Shape, f frame) (*core.Tensor, *core.Tensor) {
	view := shape.Clone()
	for _, d := range f.Reduced {
		view[d] = 1
	}
	strides := make([]int, len(view))
	acc := 2
	for i := len(view) - 1; i >= 0; i-- {
		if view[i] == 1 {
			continue
		}
		strides[i] = acc
		acc *= view[i]
	}
	return core.NewView(stats, view, strides, 0), core.NewView(stats, view, strides, 1)
}

const rmsScale = "\tlet s = 1.0 / sqrt(q / f32(R) + pf(0u));\n"

// rmsNormBackwardKernel: y = x*s*w with s = (mean(x^2)+eps)^-1/2 gives
// dx = s*g*w - s^3 * x * mean(g*w*x), dweight = sum over rows of g*x*s.
func rmsNormBackwardKernel(k *core.KernelCall) error {
	g := gpuOf(k)
	x, gr, w := k.Inputs[0], k.Inputs[1], k.Inputs[2]
	f := normFrame(x, k.Attrs)
	eps := oprules.RMSNormEps(k.Attrs, x.DType())
	ins := []*core.Tensor{x, gr}
	d := "v1(o, r)"
	if w != nil {
		ins = append(ins, w)
		d = "(v1(o, r) * v2(o, r))"
	}
	body := kahanSum("q", "v0(o, r) * v0(o, r)") + rmsScale + kahanSum("dot", d+" * v0(o, r)") +
		"\tlet c = s * s * s * dot / f32(R);\n" +
		"\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(k.Outputs[0].DType(), "s * "+d+" - c * v0(o, r)") + "; }\n"
	if !g.frameFits(body, f) {
		if err := g.rmsNormBackwardLong(f, x, gr, w, k.Outputs[0], eps); err != nil {
			return err
		}
	} else if err := g.reduceRun(f, ins, k.Outputs[0], false, body, func(p *params) { p.setF(0, eps) }); err != nil {
		return err
	}
	if len(k.Outputs) < 2 || k.Outputs[1] == nil {
		return nil
	}
	var scale *core.Tensor
	var err error
	if stat := kahanSum("q", "v0(o, r) * v0(o, r)") + rmsScale + "\tlet stat = s;\n"; g.frameFits(stat, f) {
		scale, err = rowStat(g, x, f, stat, eps)
	} else {
		scale, err = g.rmsScale(f, x, eps)
	}
	if err != nil {
		return err
	}
	defer scale.Release()
	return columnSums(g, newFrame(f.Shape, f.Kept), []*core.Tensor{x, gr, scale}, k.Outputs[1], "v1(o, r) * v0(o, r) * v2(o, r)")
}

func init() {
	register("layer_norm", layerNormKernel)
	register("_layer_norm_backward", layerNormBackwardKernel)
	register("_rms_norm_backward", rmsNormBackwardKernel)
}
