package ir

import (
	"math"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Gradients through fused kernels. A fused elementwise tree f(x0..xn) has,
// for each leaf, the gradient g * df/dxi, itself an elementwise tree over
// the leaves and g. So a compiled graph that records autograd still runs the
// tree as one kernel forward, and its backward is one generated kernel per
// input that needs a gradient (broadcast leaves summed back to their shape
// by autograd), instead of every op's forward, saved intermediates and
// backward kernels. The rules are the registry ops' own (core/ops_unary*.go,
// ops_binary*.go) written as trees; maximum/minimum split ties evenly as
// they do.

// maxGradOps bounds a gradient tree: the forward subtrees a rule reads are
// recomputed inside it, so it grows with depth times size.
const maxGradOps = 400

func cnst(v float64) *fusion.Expr { return &fusion.Expr{Op: fusion.Const, Value: v} }

func un(op string, a *fusion.Expr) *fusion.Expr {
	return &fusion.Expr{Op: op, Args: []*fusion.Expr{a}}
}

func bin(op string, a, b *fusion.Expr) *fusion.Expr {
	return &fusion.Expr{Op: op, Args: []*fusion.Expr{a, b}}
}

// unaryGrad is up * d op(x)/dx, where y is the node op(x) itself.
var unaryGrad = map[string]func(x, y, up *fusion.Expr) *fusion.Expr{
	"neg":   func(x, y, up *fusion.Expr) *fusion.Expr { return un("neg", up) },
	"abs":   func(x, y, up *fusion.Expr) *fusion.Expr { return bin("mul", up, un("sign", x)) },
	"sign":  func(x, y, up *fusion.Expr) *fusion.Expr { return bin("mul", up, cnst(0)) },
	"exp":   func(x, y, up *fusion.Expr) *fusion.Expr { return bin("mul", up, y) },
	"expm1": func(x, y, up *fusion.Expr) *fusion.Expr { return bin("mul", up, bin("add", y, cnst(1))) },
	"log":   func(x, y, up *fusion.Expr) *fusion.Expr { return bin("div", up, x) },
	"log1p": func(x, y, up *fusion.Expr) *fusion.Expr { return bin("div", up, bin("add", x, cnst(1))) },
	"sqrt":  func(x, y, up *fusion.Expr) *fusion.Expr { return bin("div", up, bin("mul", y, cnst(2))) },
	"rsqrt": func(x, y, up *fusion.Expr) *fusion.Expr {
		return bin("mul", up, bin("mul", bin("div", y, x), cnst(-0.5)))
	},
	"square":     func(x, y, up *fusion.Expr) *fusion.Expr { return bin("mul", up, bin("mul", x, cnst(2))) },
	"reciprocal": func(x, y, up *fusion.Expr) *fusion.Expr { return un("neg", bin("mul", up, un("square", y))) },
	"sin":        func(x, y, up *fusion.Expr) *fusion.Expr { return bin("mul", up, un("cos", x)) },
	"cos":        func(x, y, up *fusion.Expr) *fusion.Expr { return un("neg", bin("mul", up, un("sin", x))) },
	"tanh": func(x, y, up *fusion.Expr) *fusion.Expr {
		return bin("mul", up, bin("sub", cnst(1), un("square", y)))
	},
	"erf": func(x, y, up *fusion.Expr) *fusion.Expr {
		return bin("mul", up, bin("mul", un("exp", un("neg", un("square", x))), cnst(2/math.SqrtPi)))
	},
	// relu: g where x > 0, else 0 (NaN included): sign(relu(x)) is exactly
	// that indicator.
	"relu": func(x, y, up *fusion.Expr) *fusion.Expr { return bin("mul", up, un("sign", un("relu", x))) },
	"sigmoid": func(x, y, up *fusion.Expr) *fusion.Expr {
		return bin("mul", up, bin("mul", y, bin("sub", cnst(1), y)))
	},
	// gelu (exact; the tanh form has no rule here): Phi(x) + x phi(x).
	"gelu": func(x, y, up *fusion.Expr) *fusion.Expr {
		cdf := bin("mul", cnst(0.5), bin("add", cnst(1), un("erf", bin("mul", x, cnst(1/math.Sqrt2)))))
		pdf := bin("mul", un("exp", bin("mul", un("square", x), cnst(-0.5))), cnst(1/math.Sqrt(2*math.Pi)))
		return bin("mul", up, bin("add", cdf, bin("mul", x, pdf)))
	},
	// silu: s (1 + x (1 - s)) with s = sigmoid(x).
	"silu": func(x, y, up *fusion.Expr) *fusion.Expr {
		s := un("sigmoid", x)
		return bin("mul", up, bin("mul", s, bin("add", cnst(1), bin("mul", x, bin("sub", cnst(1), s)))))
	},
}

// binaryGrad is (up * d op/da, up * d op/db), y the node op(a, b) itself.
var binaryGrad = map[string]func(a, b, y, up *fusion.Expr) (*fusion.Expr, *fusion.Expr){
	"add": func(a, b, y, up *fusion.Expr) (*fusion.Expr, *fusion.Expr) { return up, up },
	"sub": func(a, b, y, up *fusion.Expr) (*fusion.Expr, *fusion.Expr) { return up, un("neg", up) },
	"mul": func(a, b, y, up *fusion.Expr) (*fusion.Expr, *fusion.Expr) {
		return bin("mul", up, b), bin("mul", up, a)
	},
	"div": func(a, b, y, up *fusion.Expr) (*fusion.Expr, *fusion.Expr) {
		return bin("div", up, b), un("neg", bin("div", bin("mul", up, y), b))
	},
	"maximum": func(a, b, y, up *fusion.Expr) (*fusion.Expr, *fusion.Expr) { return extremumShares(a, b, up) },
	"minimum": func(a, b, y, up *fusion.Expr) (*fusion.Expr, *fusion.Expr) {
		gb, ga := extremumShares(a, b, up)
		return ga, gb
	},
}

// extremumShares splits up between a and b as maximum's gradient does: all
// to the larger, half each on a tie. With s = sign(a - b), a's share is
// (1 + s) / 2 and b's (1 - s) / 2.
func extremumShares(a, b, up *fusion.Expr) (*fusion.Expr, *fusion.Expr) {
	s := un("sign", bin("sub", a, b))
	half := bin("mul", up, cnst(0.5))
	return bin("mul", half, bin("add", cnst(1), s)), bin("mul", half, bin("sub", cnst(1), s))
}

// gradTrees returns, for a tree over n inputs, the tree of each input's
// gradient over n+1 inputs (the same ones, then the output's gradient as
// input n); false when an op has no rule here or a tree grows too big.
func gradTrees(e *fusion.Expr, n int) ([]*fusion.Expr, bool) {
	acc := make([]*fusion.Expr, n)
	var back func(e, up *fusion.Expr) bool
	back = func(e, up *fusion.Expr) bool {
		switch {
		case e.Op == fusion.Const:
			return true
		case e.Op == "":
			if acc[e.Arg] == nil {
				acc[e.Arg] = up
			} else {
				acc[e.Arg] = bin("add", acc[e.Arg], up)
			}
			return true
		case e.Op == "gelu" && e.Attrs["approximate"] != nil && e.Attrs["approximate"] != "none":
			return false
		case len(e.Args) == 1 && unaryGrad[e.Op] != nil:
			return back(e.Args[0], unaryGrad[e.Op](e.Args[0], e, up))
		case len(e.Args) == 2 && binaryGrad[e.Op] != nil:
			ga, gb := binaryGrad[e.Op](e.Args[0], e.Args[1], e, up)
			return back(e.Args[0], ga) && back(e.Args[1], gb)
		}
		return false
	}
	if !back(e, &fusion.Expr{Arg: n}) {
		return nil, false
	}
	for i, t := range acc {
		if t == nil {
			acc[i] = cnst(0) // an input the tree reads only through constants' rules
		}
		if size(acc[i]) > maxGradOps {
			return nil, false
		}
	}
	return acc, true
}

func size(e *fusion.Expr) int {
	n := 1
	for _, a := range e.Args {
		n += size(a)
	}
	return n
}

// gradCache keeps each fused tree's gradient trees (trees are immutable).
var gradCache sync.Map // *fusion.Expr -> []*fusion.Expr (nil: none)

func cachedGradTrees(e *fusion.Expr, n int) ([]*fusion.Expr, bool) {
	if v, ok := gradCache.Load(e); ok {
		trees := v.([]*fusion.Expr)
		return trees, trees != nil
	}
	trees, ok := gradTrees(e, n)
	gradCache.Store(e, trees)
	return trees, ok
}

// fuseWithGrad runs tree e over ins (broadcast to shape) as one kernel and,
// where autograd records, records one node whose backward runs each needed
// gradient tree as one kernel. It returns false where the device cannot
// fuse or a rule is missing, leaving the caller to run the original ops.
func fuseWithGrad(e *fusion.Expr, ins []*core.Tensor, shape core.Shape) (*core.Tensor, bool) {
	fuser, ok := deviceFuser(ins)
	if !ok {
		return nil, false
	}
	trees, ok := cachedGradTrees(e, len(ins))
	if !ok {
		return nil, false
	}
	out, err := fuser.FuseMap(e, ins, shape, core.F32)
	if err != nil {
		return nil, false
	}
	core.RecordFunction("fused", ins, []*core.Tensor{out}, func(ctx *core.GradCtx) ([]*core.Tensor, error) {
		up := ctx.Grad(0)
		withGrad := append(append([]*core.Tensor{}, ins...), up)
		res := make([]*core.Tensor, len(ins))
		// Inputs whose gradient trees are the same tree (both sides of an
		// add, every input of a sum) share one kernel; a tree that is just
		// the output's gradient (x + b: each input gets it as it is) needs
		// none.
		done := map[string]*core.Tensor{}
		for i := range ins {
			if !ctx.Need[i] {
				continue
			}
			if tr := trees[i]; tr.Op == "" && tr.Arg == len(ins) {
				res[i] = up
				continue
			}
			key := exprString(trees[i])
			if g, ok := done[key]; ok {
				res[i] = g
				continue
			}
			g, err := fuser.FuseMap(trees[i], withGrad, shape, core.F32)
			if err != nil {
				return nil, err
			}
			res[i], done[key] = g, g
		}
		return res, nil
	})
	return out, true
}
