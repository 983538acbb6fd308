package nn

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Every optimiser's update is written once, as elementwise trees over the
// parameter, its gradient and its state (fusion.Expr). A backend that
// runs several trees as one kernel (fusion.MultiMapFuser: the CPU's fused
// loop, WebGPU's and CUDA's generated kernels) computes a parameter's whole
// update in one pass; elsewhere, and for what a backend does not fuse, the
// trees run op by op through the registry (the op chain). The CPU's loop
// and CUDA's kernels round each node exactly as its op does, so there a
// step's bits do not depend on the path; WebGPU's shader compiler may
// contract a*b+c, so its kernels agree with its op chain within the f32
// tolerance (core/tolerance.go), as its ops agree with the CPU's.

type fx = *fusion.Expr

func fLeaf(i int) fx                 { return &fusion.Expr{Arg: i} }
func fConst(v float64) fx            { return &fusion.Expr{Op: fusion.Const, Value: v} }
func fOp(name string, args ...fx) fx { return &fusion.Expr{Op: name, Args: args} }

// fMulScalar and fAddScalar skip the op that changes nothing, as torch's
// formulas (and the chain they replace) do.
func fMulScalar(t fx, v float64) fx {
	if v == 1 {
		return t
	}
	return fOp("mul", t, fConst(v))
}

func fAddScalar(t fx, v float64) fx {
	if v == 0 {
		return t
	}
	return fOp("add", t, fConst(v))
}

// fLerp is torch's lerp, start + w·(end-start), computed from the nearer
// end as torch's kernel does so that the rounding matches.
func fLerp(start, end fx, w float64) fx {
	if w < 0.5 {
		return fOp("add", start, fMulScalar(fOp("sub", end, start), w))
	}
	return fOp("sub", end, fMulScalar(fOp("sub", end, start), 1-w))
}

// runTrees computes trees over ins on like's backend, fused when it can;
// results carry their errors as core tensors do.
func runTrees(trees []fx, ins []*core.Tensor, like *core.Tensor) []*core.Tensor {
	if outs, ok := fuse(trees, ins, like); ok {
		return outs
	}
	return chainTrees(trees, ins, like)
}

// fuse is fuseTrees, a variable so that tests can run the chain instead
// and compare the two paths bit for bit.
var fuse = fuseTrees

// fuseTrees runs the trees as one kernel when like's backend can and every
// input is like's shape, dtype and device (a gradient that broadcasts is
// left to the chain, whose result the step then refuses).
func fuseTrees(trees []fx, ins []*core.Tensor, like *core.Tensor) ([]*core.Tensor, bool) {
	fuser, ok := like.Backend().(fusion.MultiMapFuser)
	if !ok || like.Err() != nil {
		return nil, false
	}
	for _, t := range ins {
		if t == nil || t.Err() != nil || t.DType() != like.DType() || t.Device() != like.Device() || !t.Shape().Equal(like.Shape()) {
			return nil, false
		}
	}
	outs, err := fuser.FuseMaps(trees, ins, like.Shape(), like.DType())
	if err != nil || len(outs) != len(trees) {
		return nil, false
	}
	return outs, true
}

// chainTrees runs the trees op by op. A subtree shared between trees (the
// new moment, used by the new value too) is computed once; constants are
// scalars of like's dtype on its device, so an f64 constant does not
// promote an f32 parameter.
func chainTrees(trees []fx, ins []*core.Tensor, like *core.Tensor) []*core.Tensor {
	memo := map[fx]*core.Tensor{}
	var eval func(e fx) *core.Tensor
	eval = func(e fx) *core.Tensor {
		if t, ok := memo[e]; ok {
			return t
		}
		var t *core.Tensor
		switch e.Op {
		case "":
			t = ins[e.Arg]
		case fusion.Const:
			t = scalarLike(like, e.Value)
		default:
			args := make([]*core.Tensor, len(e.Args))
			for i, a := range e.Args {
				args[i] = eval(a)
			}
			t = core.Call1(e.Op, e.Attrs, args...)
		}
		memo[e] = t
		return t
	}
	outs := make([]*core.Tensor, len(trees))
	for i, tree := range trees {
		outs[i] = eval(tree)
	}
	return outs
}
