package lower

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// Fused elementwise trees (fusion.Expr) become one expression over the
// leaves, so a chain like gelu(x * w + b) reads its inputs once and writes
// once instead of once per op. Only ops whose expressions need no scalar
// slots take part (a fused kernel cannot share slots between ops); values
// are f32.

var fusableUnary = map[string]bool{
	"neg": true, "abs": true, "exp": true, "expm1": true, "log": true, "log1p": true, "sqrt": true, "rsqrt": true,
	"square": true, "reciprocal": true, "sin": true, "cos": true, "tanh": true, "erf": true, "relu": true,
	"sigmoid": true, "sign": true, "gelu": true, "silu": true,
}

var fusableBinary = map[string]bool{"add": true, "sub": true, "mul": true, "div": true, "maximum": true, "minimum": true}

// attrFusable are the fusable ops that take attributes: their expressions
// choose a formula by them and need no scalar slots.
var attrFusable = map[string]func(core.Attrs) bool{"gelu": geluForm, "_gelu_backward": geluForm}

// geluForm accepts gelu's two formulas, exact and tanh.
func geluForm(a core.Attrs) bool {
	s, ok := a["approximate"].(string)
	return a["approximate"] == nil || ok && (s == "none" || s == "tanh")
}

// Fusable reports whether op, called with attrs, may appear in a fused
// tree. Values are f32 except a comparison's, a bool that only where reads
// (the graph passes keep bools inside a tree); where, the comparisons and
// gelu's gradient are what backward passes are made of (relu's gradient is
// where(x > 0, g, 0)).
func Fusable(op string, attrs core.Attrs, dtype core.DType) bool {
	if Compare[op] != "" {
		return dtype == core.Bool && len(attrs) == 0
	}
	if dtype != core.F32 {
		return false
	}
	if ok := attrFusable[op]; ok != nil {
		return ok(attrs)
	}
	if len(attrs) > 0 {
		return false
	}
	return fusableUnary[op] || fusableBinary[op] || op == "where" || fusablePointwise(op, 1) || fusablePointwise(op, 2)
}

// Fused writes the tree e as an f32 expression with input i read as
// leaf(i); nIn bounds the inputs a leaf may name.
func Fused(e *fusion.Expr, nIn int, leaf func(int) string) (string, error) {
	return fused(e, nIn, leaf, func(c *fusion.Expr) string { return F32Literal(c.Value) })
}

// fused is Fused with constant c written as konst(c).
func fused(e *fusion.Expr, nIn int, leaf func(int) string, konst func(*fusion.Expr) string) (string, error) {
	if e.Op == fusion.Const {
		return konst(e), nil
	}
	if e.Op == "" {
		if e.Arg < 0 || e.Arg >= nIn {
			return "", fmt.Errorf("fused expression reads input %d of %d", e.Arg, nIn)
		}
		return leaf(e.Arg), nil
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		s, err := fused(a, nIn, leaf, konst)
		if err != nil {
			return "", err
		}
		args[i] = s
	}
	switch {
	case Compare[e.Op] != "" && len(args) == 2:
		return CompareExpr(e.Op, args[0], args[1]), nil
	case e.Op == "where" && len(args) == 3:
		return "select(" + args[2] + ", " + args[1] + ", " + args[0] + ")", nil
	case e.Op == "_gelu_backward" && len(args) == 2:
		return GeluGrad(args[0], args[1], e.Attrs), nil
	case fusableUnary[e.Op] && len(args) == 1:
		return Unary[e.Op](args[0], F32, e.Attrs, nil), nil
	case fusableBinary[e.Op] && len(args) == 2:
		return Binary[e.Op](args[0], args[1], F32), nil
	case fusablePointwise(e.Op, len(args)):
		def, _ := core.LookupOp(e.Op)
		return def.Pointwise.Expr(args, F32, nil, nil), nil
	}
	return "", fmt.Errorf("%s with %d operands cannot be fused", e.Op, len(args))
}

// FusedX is Fused with input i read as the operand xi.
func FusedX(e *fusion.Expr, nIn int) (string, error) {
	return Fused(e, nIn, func(i int) string { return fmt.Sprintf("x%d", i) })
}

// FusedHoisted writes trees as FusedX does, but reads their constants from
// the scalar slots pf(k), which s receives, instead of writing them into
// the source: one compiled kernel then serves every value of them (an
// optimiser's learning rate and bias corrections change every step, and a
// kernel per step would compile forever). Constants are given slots in the
// order they are met, one per node, up to NumScalars; the rest, and NaN
// and infinities, stay literals. A slot holds the value at full width and
// f32(pf(k)) rounds it to f32 as the literal would.
func FusedHoisted(trees []*fusion.Expr, nIn int, s *Scalars) ([]string, error) {
	slots := map[*fusion.Expr]int{}
	konst := func(c *fusion.Expr) string {
		k, ok := slots[c]
		if !ok {
			if len(slots) >= NumScalars || math.IsNaN(c.Value) || math.IsInf(c.Value, 0) {
				return F32Literal(c.Value)
			}
			k = len(slots)
			slots[c] = k
			s.SetF(k, c.Value)
		}
		return fmt.Sprintf("f32(pf(%du))", k)
	}
	out := make([]string, len(trees))
	for i, e := range trees {
		expr, err := fused(e, nIn, func(i int) string { return fmt.Sprintf("x%d", i) }, konst)
		if err != nil {
			return nil, err
		}
		out[i] = expr
	}
	return out, nil
}
