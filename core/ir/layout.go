package ir

import (
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// SimplifyLayout removes layout nodes that change nothing and merges
// chains of them, in g and in its loop bodies, and returns how many nodes
// it removed or rewrote. Model code is full of these: a transpose undone
// two lines later, a reshape to the shape a tensor already has, a reshape
// of a reshape. Each costs a node to run (and, for a reshape that cannot be
// a view, a copy), and each hides the op behind it from fusion.
//
//   - reshape, flatten, squeeze, unsqueeze and expand to the input's own
//     shape, permute by the identity, transpose of a dim with itself, and a
//     slice with step 1 over the whole axis are dropped;
//   - a permute or transpose of a permute or transpose becomes one permute,
//     or nothing when the two cancel;
//   - a reshape-like node of a reshape-like node becomes one reshape to the
//     final shape, an expand of an expand one expand (when the inner node's
//     output is read only there, so no copy is made twice).
//
// Results never change: the rewrites only use the static shapes the graph
// holds, and a node whose attributes it cannot read is left alone.
func (g *Graph) SimplifyLayout() int {
	uses := g.useCounts()
	repl := map[*Value]*Value{}
	dead := map[*Node]bool{}
	changed := 0
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if r, ok := repl[v]; ok {
				n.Inputs[i] = r
			}
		}
		if n.Body != nil {
			changed += n.Body.SimplifyLayout()
			continue
		}
		if n.Fused != nil || len(n.Inputs) != 1 || len(n.Outputs) != 1 || n.Inputs[0] == nil {
			continue
		}
		x, out := n.Inputs[0], n.Outputs[0]
		if identityLayout(n) {
			repl[out] = x
			uses[x] += uses[out] - 1
			dead[n] = true
			changed++
			continue
		}
		if p := x.Producer; p != nil && !dead[p] && mergeLayout(p, n, uses[x] == 1) {
			uses[x]--
			if uses[x] == 0 {
				dead[p] = true
				changed++
			}
			uses[n.Inputs[0]]++
			changed++
			if identityLayout(n) { // the two cancelled
				x = n.Inputs[0]
				repl[out] = x
				uses[x] += uses[out] - 1
				dead[n] = true
			}
		}
	}
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if !dead[n] {
			kept = append(kept, n)
		}
	}
	g.Nodes = kept
	for i, v := range g.Outputs {
		if r, ok := repl[v]; ok {
			g.Outputs[i] = r
		}
	}
	return changed
}

var reshapeLike = map[string]bool{"reshape": true, "flatten": true, "squeeze": true, "unsqueeze": true}

// identityLayout reports whether the single-input layout node n returns
// its input unchanged.
func identityLayout(n *Node) bool {
	x, out := n.Inputs[0], n.Outputs[0]
	if x.DType != out.DType || !sameShape(x.Shape, out.Shape) {
		return false
	}
	switch {
	case reshapeLike[n.Op] || n.Op == "expand":
		return true
	case n.Op == "permute" || n.Op == "transpose":
		p, ok := permOf(n)
		return ok && isIdentity(p)
	case n.Op == "slice":
		step, ok := attrInt(n, "step")
		return ok && step == 1
	}
	return false
}

// mergeLayout rewrites n = outer(p(x)) to read x directly when the two
// layout nodes compose into one; single says p's output is read only by n.
func mergeLayout(p, n *Node, single bool) bool {
	if p.Body != nil || p.Fused != nil || len(p.Inputs) != 1 || len(p.Outputs) != 1 || p.Inputs[0] == nil {
		return false
	}
	x, out := p.Inputs[0], n.Outputs[0]
	switch {
	case reshapeLike[n.Op] && reshapeLike[p.Op] && single:
		n.Op, n.Attrs = "reshape", core.Attrs{"shape": slices.Clone([]int(out.Shape))}
	case n.Op == "expand" && p.Op == "expand" && single:
		n.Attrs = core.Attrs{"shape": slices.Clone([]int(out.Shape))}
	case isPermute(n.Op) && isPermute(p.Op):
		inner, ok1 := permOf(p)
		outer, ok2 := permOf(n)
		if !ok1 || !ok2 {
			return false
		}
		q := make([]int, len(outer))
		for j, d := range outer {
			q[j] = inner[d]
		}
		n.Op, n.Attrs = "permute", core.Attrs{"dims": q}
	default:
		return false
	}
	n.Inputs = []*Value{x}
	return true
}

func isPermute(op string) bool { return op == "permute" || op == "transpose" }

func isIdentity(p []int) bool {
	for i, d := range p {
		if d != i {
			return false
		}
	}
	return true
}

// permOf is the permutation a permute or transpose node applies (output
// dim j is input dim p[j]), read from its attributes as the traced code
// gave them (defaults from the registry where absent).
func permOf(n *Node) ([]int, bool) {
	rank := len(n.Inputs[0].Shape)
	if n.Op == "transpose" {
		d0, ok0 := attrInt(n, "dim0")
		d1, ok1 := attrInt(n, "dim1")
		d0, e0 := core.NormAxis(d0, rank)
		d1, e1 := core.NormAxis(d1, rank)
		if !ok0 || !ok1 || e0 != nil || e1 != nil {
			return nil, false
		}
		p := make([]int, rank)
		for i := range p {
			p[i] = i
		}
		p[d0], p[d1] = d1, d0
		return p, true
	}
	dims, ok := toInts(n.Attrs["dims"])
	if !ok || len(dims) != rank {
		return nil, false
	}
	p, err := oprules.NormAxesOrdered(dims, rank)
	return p, err == nil
}

// attrInt reads an int attribute of n, or the registry's default for it.
func attrInt(n *Node, name string) (int, bool) {
	if v, ok := n.Attrs[name]; ok && v != nil {
		return toInt(v)
	}
	def, ok := core.LookupOp(n.Op)
	if !ok {
		return 0, false
	}
	for _, s := range def.Attrs {
		if s.Name == name && s.Default != nil {
			return toInt(s.Default)
		}
	}
	return 0, false
}

// toInt reads an integer attribute whatever integer type the caller used
// (Go code passes int; the C ABI and SDKs may pass int64 or float64).
func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case int32:
		return int(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x), true
		}
	}
	return 0, false
}

func toInts(v any) ([]int, bool) {
	switch x := v.(type) {
	case []int:
		return x, true
	case []int64, []int32, []float64, []any:
		var out []int
		ok := true
		each(x, func(e any) {
			i, good := toInt(e)
			out, ok = append(out, i), ok && good
		})
		return out, ok
	}
	return nil, false
}

func each(list any, fn func(any)) {
	switch x := list.(type) {
	case []int64:
		for _, e := range x {
			fn(e)
		}
	case []int32:
		for _, e := range x {
			fn(e)
		}
	case []float64:
		for _, e := range x {
			fn(e)
		}
	case []any:
		for _, e := range x {
			fn(e)
		}
	}
}
