package cpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core/ir/fusion"
)

// exprNodes is what a fused program (FuseMap's mapNode, FuseMulti's
// fusedInstr) builds its node N from: a leaf reading input arg, a
// constant, or an operator. operator checks and builds an operator's node
// before its operands are compiled, so that an op the program cannot run
// is reported before anything below it; operands then links the node to
// the slots of its operands (nodes holds everything compiled so far).
type exprNodes[N any] struct {
	leaf     func(arg int) N
	constant func(v float64) N
	operator func(e *fusion.Expr) (N, error)
	operands func(n *N, args []int, nodes []N)
}

// compileExprs lists the nodes of trees in evaluation order, operands
// first, each distinct node once: a subtree shared within or between the
// trees is computed once. roots are the trees' slots. Both fused programs
// compile this way, so they agree on what is shared and on a bad leaf's
// error.
func compileExprs[N any](trees []*fusion.Expr, nIn int, b exprNodes[N]) (nodes []N, roots []int, err error) {
	slot := map[*fusion.Expr]int{}
	var emit func(e *fusion.Expr) (int, error)
	emit = func(e *fusion.Expr) (int, error) {
		if s, ok := slot[e]; ok {
			return s, nil
		}
		var nd N
		switch e.Op {
		case "":
			if e.Arg < 0 || e.Arg >= nIn {
				return 0, fmt.Errorf("cpu: fused leaf reads input %d of %d", e.Arg, nIn)
			}
			nd = b.leaf(e.Arg)
		case fusion.Const:
			nd = b.constant(e.Value)
		default:
			var err error
			if nd, err = b.operator(e); err != nil {
				return 0, err
			}
			args := make([]int, len(e.Args))
			for i, a := range e.Args {
				if args[i], err = emit(a); err != nil {
					return 0, err
				}
			}
			b.operands(&nd, args, nodes)
		}
		nodes = append(nodes, nd)
		slot[e] = len(nodes) - 1
		return len(nodes) - 1, nil
	}
	for _, t := range trees {
		s, err := emit(t)
		if err != nil {
			return nil, nil, err
		}
		roots = append(roots, s)
	}
	return nodes, roots, nil
}
