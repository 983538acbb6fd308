package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// The norms over rows too long for one thread (launch_rows_long.go).

// affineNormLong is affineNorm over long groups: (x-mean)*rstd*w + b with
// the statistics reduced first, and SiLU of that when silu is set.
func (b *Backend) affineNormLong(f frame, x, w, bias, out *core.Tensor, eps float64, silu bool) error {
	mean, rstd, err := b.groupMeanRstd(f, x, eps)
	if err != nil {
		return err
	}
	defer releaseAll(mean, rstd)
	ins := []*core.Tensor{x, mean, rstd}
	y := "(x0 - x1) * x2"
	if w != nil {
		y += fmt.Sprintf(" * x%d", len(ins))
		ins = append(ins, w)
	}
	if bias != nil {
		y += fmt.Sprintf(" + x%d", len(ins))
		ins = append(ins, bias)
	}
	if silu {
		y = "((" + y + ") * m_sigmoid(" + y + "))"
	}
	return b.mapRun(ins, out, y, nil)
}

// normBackwardLong is normBackward over long groups: mean, rstd, sum(d)
// and sum(d*xhat) are reductions, dx a map, and the weight gradients the
// same column sums as normBackward's.
func (b *Backend) normBackwardLong(f frame, sumAxes []int, x, gr, w *core.Tensor, outs []*core.Tensor, eps float64) error {
	mean, rstd, err := b.groupMeanRstd(f, x, eps)
	if err != nil {
		return err
	}
	defer releaseAll(mean, rstd)
	// Operands by name: x, g, w (when given), mean, rstd, then the sums.
	ins := []*core.Tensor{x, gr}
	if w != nil {
		ins = append(ins, w)
	}
	names := map[string]string{"x": "0", "g": "1", "w": "2"}
	names["mean"], names["rstd"] = fmt.Sprint(len(ins)), fmt.Sprint(len(ins)+1)
	ins = append(ins, mean, rstd)
	at := func(expr, prefix, suffix string) string {
		m := map[string]string{}
		for k, v := range names {
			m[k] = prefix + v + suffix
		}
		return mapExpr(expr, m)
	}
	d := "{g}"
	if w != nil {
		d = "({g} * {w})"
	}
	sd, err := b.groupReduce(f, ins[:len(ins)-2], at(d, "v", "(o, r)"), sumFinal(false))
	if err != nil {
		return err
	}
	defer sd.Release()
	sdx, err := b.groupReduce(f, ins, at(d+" * (({x} - {mean}) * {rstd})", "v", "(o, r)"), sumFinal(false))
	if err != nil {
		return err
	}
	defer sdx.Release()
	names["sd"], names["sdx"] = fmt.Sprint(len(ins)), fmt.Sprint(len(ins)+1)
	r := lower.F32Literal(float64(f.Members()))
	dx := at("{rstd} * ("+d+" - {sd} / "+r+" - ({x} - {mean}) * {rstd} * ({sdx} / "+r+"))", "x", "")
	if err := b.mapRun(append(ins, sd, sdx), outs[0], dx, nil); err != nil {
		return err
	}
	if len(outs) < 3 {
		return nil
	}
	cols := newFrame(f.Shape, sumAxes)
	if dw := outs[1]; dw != nil {
		if err := columnSums(b, cols, []*core.Tensor{x, gr, mean, rstd}, dw, "v1(o, r) * (v0(o, r) - v2(o, r)) * v3(o, r)"); err != nil {
			return err
		}
	}
	if db := outs[2]; db != nil {
		return columnSums(b, cols, []*core.Tensor{gr}, db, "v0(o, r)")
	}
	return nil
}

// rmsScale is 1/sqrt(mean(x^2)+eps) per group of f.
func (b *Backend) rmsScale(f frame, x *core.Tensor, eps float64) (*core.Tensor, error) {
	return b.groupReduce(f, []*core.Tensor{x}, "v0(o, r) * v0(o, r)", rsqrtMean(eps))
}

// rsqrtMean is a sum's final 1/sqrt(sum/count + eps).
func rsqrtMean(eps float64) func(acc, count string) string {
	return func(acc, count string) string {
		return fmt.Sprintf("1.0 / sqrt(%s / %s + %s)", acc, count, lower.F32Literal(eps))
	}
}

// rmsNormBackwardLong is rmsNormBackwardKernel's dx over long rows:
// s*d - s^3 * x * mean(d*x), d = g*w.
func (b *Backend) rmsNormBackwardLong(f frame, x, gr, w, dx *core.Tensor, eps float64) error {
	s, err := b.rmsScale(f, x, eps)
	if err != nil {
		return err
	}
	defer s.Release()
	ins, d, vd := []*core.Tensor{x, gr, s}, "x1", "v1(o, r)"
	if w != nil {
		ins, d, vd = append(ins, w), "(x1 * x3)", "(v1(o, r) * v3(o, r))"
	}
	dot, err := b.groupReduce(f, ins, vd+" * v0(o, r)", sumFinal(false))
	if err != nil {
		return err
	}
	defer dot.Release()
	r := lower.F32Literal(float64(f.Members()))
	k := fmt.Sprintf("x%d", len(ins))
	return b.mapRun(append(ins, dot), dx, "x2 * "+d+" - x2 * x2 * x2 * "+k+" / "+r+" * x0", nil)
}

// batchNormBackwardLong is batchNormBackwardKernel over channels too long
// for one thread: x and g are [N, C, S] views, f reduces N and S, ins
// holds the optional inputs (running mean and variance, weight, and the
// gradients of the returned statistics; nil where absent) and a is the
// weight of the statistics' gradients. In training
// dx = rstd*d + P*(x-mean) + Q per channel with d = g*w,
// P = -rstd^2*sum(d*xhat)/R + 2a*g_var/(R-1) and Q = -rstd*sum(d)/R +
// a*g_mean/R, so the map over x reads seven operands.
func (b *Backend) batchNormBackwardLong(f frame, x, g *core.Tensor, ins [5]*core.Tensor, outs []*core.Tensor, training bool, a, eps float64) error {
	rm, rv, w, gm, gv := ins[0], ins[1], ins[2], ins[3], ins[4]
	var mean, rstd *core.Tensor
	if training {
		var err error
		if mean, rstd, err = b.groupMeanRstd(f, x, eps); err != nil {
			return err
		}
		defer releaseAll(mean, rstd)
	} else {
		var err error
		if rstd, err = core.Empty(b, rv.Shape(), core.F32); err != nil {
			return err
		}
		defer rstd.Release()
		if err := b.mapRun([]*core.Tensor{rv}, rstd, "1.0 / sqrt(x0 + "+lower.F32Literal(eps)+")", nil); err != nil {
			return err
		}
		mean = rm
	}
	dIns, d, vd := []*core.Tensor{g}, "x0", "v0(o, r)"
	if w != nil {
		dIns, d, vd = append(dIns, w), "x0 * x1", "v0(o, r) * v1(o, r)"
	}
	if !training {
		if err := b.mapRun(append(dIns, rstd), outs[0], "x"+fmt.Sprint(len(dIns))+" * "+d, nil); err != nil {
			return err
		}
	} else if err := b.batchNormDx(f, x, g, w, mean, rstd, gm, gv, vd, outs[0], a); err != nil {
		return err
	}
	if len(outs) > 1 && outs[1] != nil {
		if err := b.sumRun(f, []*core.Tensor{x, g, mean, rstd}, outs[1], "v1(o, r) * (v0(o, r) - v2(o, r)) * v3(o, r)", sumFinal(false)); err != nil {
			return err
		}
	}
	if len(outs) > 2 && outs[2] != nil {
		return b.sumRun(f, []*core.Tensor{g}, outs[2], "v0(o, r)", sumFinal(false))
	}
	return nil
}

// batchNormDx writes training batch norm's dx (see batchNormBackwardLong);
// vd is d over v0 (g) and v1 (w).
func (b *Backend) batchNormDx(f frame, x, g, w, mean, rstd, gm, gv *core.Tensor, vd string, dx *core.Tensor, a float64) error {
	wIns := []*core.Tensor{g}
	if w != nil {
		wIns = append(wIns, w)
	}
	sd, err := b.groupReduce(f, wIns, vd, sumFinal(false))
	if err != nil {
		return err
	}
	defer sd.Release()
	n := len(wIns)
	xhat := fmt.Sprintf("(v%d(o, r) - v%d(o, r)) * v%d(o, r)", n, n+1, n+2)
	sdx, err := b.groupReduce(f, append(append([]*core.Tensor{}, wIns...), x, mean, rstd), vd+" * "+xhat, sumFinal(false))
	if err != nil {
		return err
	}
	defer sdx.Release()
	r := float64(f.Members())
	coef := func(ins []*core.Tensor, expr, extra string, grad *core.Tensor) (*core.Tensor, error) {
		t, err := core.Empty(b, rstd.Shape(), core.F32)
		if err != nil {
			return nil, err
		}
		if grad != nil {
			ins, expr = append(ins, grad.Reshape(rstd.Shape())), expr+" + x2 * "+extra
		}
		if err := b.mapRun(ins, t, expr, nil); err != nil {
			t.Release()
			return nil, err
		}
		return t, nil
	}
	p, err := coef([]*core.Tensor{rstd, sdx}, "-x0 * x0 * x1 / "+lower.F32Literal(r), lower.F32Literal(2*a/(r-1)), gv)
	if err != nil {
		return err
	}
	defer p.Release()
	q, err := coef([]*core.Tensor{rstd, sd}, "-x0 * x1 / "+lower.F32Literal(r), lower.F32Literal(a/r), gm)
	if err != nil {
		return err
	}
	defer q.Release()
	ins, dm := []*core.Tensor{x, g}, "x1"
	if w != nil {
		ins, dm = append(ins, w), "x1 * x2"
	}
	k := len(ins)
	expr := fmt.Sprintf("x%d * %s + x%d * (x0 - x%d) + x%d", k+1, dm, k+2, k, k+3)
	return b.mapRun(append(ins, mean, rstd, p, q), dx, expr, nil)
}
