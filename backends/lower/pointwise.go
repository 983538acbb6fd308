package lower

import "github.com/webtensor/webtensor/core"

// Ops described by their arithmetic (core.Pointwise) carry their own
// expression; these adapters give it the shapes of Unary's and Binary's
// entries, so the GPU backends build such an op's kernel, and fused trees
// include it, exactly as for the ops listed in those tables.

// PointwiseUnary is the UnaryExpr of a one-input Pointwise op.
func PointwiseUnary(def *core.OpDef) UnaryExpr {
	expr := def.Pointwise.Expr
	return func(v, ct string, a core.Attrs, s *Scalars) string {
		var slots core.ScalarSlots
		if s != nil { // a nil *Scalars in the interface would not read as nil
			slots = s
		}
		return expr([]string{v}, ct, a, slots)
	}
}

// PointwiseBinary is the BinaryExpr of a two-input Pointwise op.
func PointwiseBinary(def *core.OpDef) BinaryExpr {
	expr := def.Pointwise.Expr
	return func(a, b, ct string) string { return expr([]string{a, b}, ct, nil, nil) }
}

// pointwise returns op's Pointwise description when it has one and takes
// n inputs.
func pointwise(op string, n int) (*core.OpDef, bool) {
	def, ok := core.LookupOp(op)
	if !ok || def.Pointwise == nil {
		return nil, false
	}
	if n == 1 {
		return def, def.Pointwise.F != nil
	}
	return def, n == 2 && def.Pointwise.F2 != nil
}

// fusablePointwise reports whether a Pointwise op may sit in a fused tree:
// one without attributes, whose expression then needs no scalar slots.
func fusablePointwise(op string, n int) bool {
	def, ok := pointwise(op, n)
	return ok && len(def.Attrs) == 0
}
