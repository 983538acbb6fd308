package nn

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// On a backend that fuses exactly (core.ExactFuser: CUDA), Adam's step is
// one kernel per output tensor - the parameter, m, v (and v̂) - instead of
// about fifteen ops and five scalar uploads per parameter. The trees below
// are Adam.update's op chain written out, constant for constant, so the
// fused kernels round exactly as the chain does and the step's bits do not
// depend on the path (nor on the SDK, whose optimisers run the chain).

type fx = *core.FusedExpr

func fLeaf(i int) fx                 { return &core.FusedExpr{Arg: i} }
func fConst(v float64) fx            { return &core.FusedExpr{Op: core.FusedConst, Value: v} }
func fOp(name string, args ...fx) fx { return &core.FusedExpr{Op: name, Args: args} }
func fMulScalar(t fx, v float64) fx  { return cond(v == 1, t, fOp("mul", t, fConst(v))) }
func fAddScalar(t fx, v float64) fx  { return cond(v == 0, t, fOp("add", t, fConst(v))) }
func cond[T any](c bool, yes, no T) T {
	if c {
		return yes
	}
	return no
}

// fLerp is lerp's tree: start + w·(end-start) from the nearer end.
func fLerp(start, end fx, w float64) fx {
	if w < 0.5 {
		return fOp("add", start, fMulScalar(fOp("sub", end, start), w))
	}
	return fOp("sub", end, fMulScalar(fOp("sub", end, start), 1-w))
}

// fusedUpdate is update through the backend's exact fuser, or ok false when
// the parameter's backend has none or the tensors are not plain f32 of one
// shape on it (the op chain then runs).
func (o *Adam) fusedUpdate(i int, p *Parameter) (update, bool) {
	x, g := p.Tensor(), p.Grad()
	fuser, ok := x.Backend().(core.ExactFuser)
	if !ok || !fuser.FusesExactly() || g == nil || !g.Shape().Equal(x.Shape()) {
		return update{}, false
	}
	c, s := o.cfg, o.states[i]
	ins := []*core.Tensor{x, g}
	if s.expAvg != nil {
		ins = append(ins, s.expAvg, s.expAvgSq)
		if c.AMSGrad {
			ins = append(ins, s.maxExpAvgSq)
		}
	}
	for _, t := range ins {
		if t == nil || t.DType() != core.F32 || t.Device() != x.Device() || !t.Shape().Equal(x.Shape()) {
			return update{}, false
		}
	}
	X, G := fLeaf(0), fLeaf(1)
	m, v, vmax := fConst(0), fConst(0), fConst(0)
	if s.expAvg != nil {
		m, v = fLeaf(2), fLeaf(3)
		if c.AMSGrad {
			vmax = fLeaf(4)
		}
	}
	xe, wd := X, c.WeightDecay
	if o.decoupled {
		xe = fMulScalar(xe, 1-c.LR*wd)
		wd = 0
	}
	ge := G
	if c.Maximize {
		ge = fOp("neg", ge)
	}
	if wd != 0 {
		ge = fOp("add", ge, fMulScalar(X, wd))
	}
	m = fLerp(m, ge, 1-c.Beta1)
	v = fOp("add", fMulScalar(v, c.Beta2), fMulScalar(fOp("mul", ge, ge), 1-c.Beta2))
	step := float64(s.step + 1)
	stepSize := c.LR / (1 - math.Pow(c.Beta1, step))
	bc2Sqrt := math.Sqrt(1 - math.Pow(c.Beta2, step))
	second := v
	trees := []fx{nil, m, v}
	if c.AMSGrad {
		vmax = fOp("maximum", vmax, v)
		second = vmax
		trees = append(trees, vmax)
	}
	denom := fAddScalar(fOp("div", fOp("sqrt", second), fConst(bc2Sqrt)), c.Eps)
	trees[0] = fOp("sub", xe, fMulScalar(fOp("div", m, denom), stepSize))
	outs := make([]*core.Tensor, len(trees))
	for k, tree := range trees {
		out, err := fuser.FuseMap(tree, ins, x.Shape(), core.F32)
		if err != nil {
			for _, t := range outs[:k] {
				t.Release()
			}
			return update{}, false
		}
		outs[k] = out
	}
	return update{index: i, value: outs[0], state: outs[1:]}, true
}
