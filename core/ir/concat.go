package ir

import (
	"slices"

	"github.com/webtensor/webtensor/core"
)

// CombineSliceGrads rewrites a sum of slice gradients that tile an axis
// into one concat, in g and its loop bodies, and returns how many sums it
// rewrote. Backward passes make these: a fused projection split into
// slices (attention's q, k and v) gets one gradient per slice, each a
// tensor of zeros the projection's size with the slice written in
// (_slice_grad), then adds them up. concat writes each part once, where the
// sum writes every zero three times and reads it back twice.
//
// The rewrite needs every part to be a step-1 slice of the same axis and
// shape, read only by the sum, with the parts' ranges neither overlapping
// nor leaving a gap; anything else is left alone. Results are unchanged:
// each element of the sum is one part's value plus zeros.
func (g *Graph) CombineSliceGrads() int {
	uses := g.useCounts()
	combined := 0
	removed := map[*Node]bool{}
	replace := map[*Node]*Node{}
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		if n.Body != nil {
			combined += n.Body.CombineSliceGrads()
			continue
		}
		if removed[n] || n.Op != "add" || len(n.Inputs) != 2 || len(n.Outputs) != 1 {
			continue
		}
		s := &sliceSum{uses: uses}
		if !s.collect(n.Inputs[0]) || !s.collect(n.Inputs[1]) {
			continue
		}
		axis, parts, ok := s.tiling(n.Outputs[0])
		if !ok {
			continue
		}
		replace[n] = &Node{Op: "concat", Attrs: core.Attrs{"axis": axis}, Inputs: parts, Outputs: n.Outputs}
		for _, m := range s.nodes {
			removed[m] = true
		}
		combined++
	}
	g.rewriteNodes(replace, removed)
	return combined
}

// sliceSum gathers the slice gradients under a tree of adds.
type sliceSum struct {
	uses  map[*Value]int
	grads []*Node // the _slice_grad nodes
	nodes []*Node // every node the concat replaces
}

// collect walks v: an add read only by the tree is walked into, a slice
// gradient read only by the tree is a part; anything else ends the match.
func (s *sliceSum) collect(v *Value) bool {
	if v == nil || v.Producer == nil || s.uses[v] != 1 || len(v.Producer.Outputs) != 1 {
		return false
	}
	p := v.Producer
	switch {
	case p.Op == "add" && p.Fused == nil && len(p.Inputs) == 2:
		s.nodes = append(s.nodes, p)
		return s.collect(p.Inputs[0]) && s.collect(p.Inputs[1])
	case p.Op == "_slice_grad" && len(p.Inputs) == 1 && p.Inputs[0] != nil:
		s.nodes = append(s.nodes, p)
		s.grads = append(s.grads, p)
		return true
	}
	return false
}

// tiling checks that the parts slice one axis of out's shape with step 1
// and cover it exactly, and returns the axis and the parts' values in
// order along it.
func (s *sliceSum) tiling(out *Value) (int, []*Value, bool) {
	type part struct {
		start, stop int
		v           *Value
	}
	parts := make([]part, 0, len(s.grads))
	axis := -1
	for _, n := range s.grads {
		a, err := core.NormalizeAttrs(n.Op, n.Attrs)
		if err != nil || !sameShape(core.Shape(a.Ints("shape")), out.Shape) || a.Int("step") != 1 {
			return 0, nil, false
		}
		ax := a.Int("axis")
		if ax < 0 {
			ax += len(out.Shape)
		}
		if ax < 0 || ax >= len(out.Shape) || (axis >= 0 && ax != axis) {
			return 0, nil, false
		}
		axis = ax
		start, stop := a.Int("start"), a.Int("stop")
		in := n.Inputs[0]
		if start < 0 || stop > out.Shape[ax] || start >= stop || in.DType != out.DType || in.Shape[ax] != stop-start {
			return 0, nil, false
		}
		parts = append(parts, part{start, stop, in})
	}
	slices.SortFunc(parts, func(a, b part) int { return a.start - b.start })
	at := 0
	vals := make([]*Value, len(parts))
	for i, p := range parts {
		if p.start != at {
			return 0, nil, false
		}
		at = p.stop
		vals[i] = p.v
	}
	if at != out.Shape[axis] {
		return 0, nil, false
	}
	return axis, vals, true
}

// ConcatBeforeReshape moves a concat above the reshapes that feed it, in g
// and its loop bodies, when each part is a reshape merging the same
// trailing dims into the concat axis: concat(reshape(u_i)) along the last
// axis equals reshape(concat(u_i)) along the merged axis. A reshape of a
// permuted tensor (attention's heads put back in place) is a copy, and
// concat copies again; after the move concat reads the permuted parts
// through their strides and the reshape of its fresh output is a view. It
// returns how many concats it moved.
func (g *Graph) ConcatBeforeReshape() int {
	uses := g.useCounts()
	moved := 0
	var nodes []*Node
	for _, n := range g.Nodes {
		if n.Body != nil {
			moved += n.Body.ConcatBeforeReshape()
		}
		parts, merged, ok := mergedParts(n, uses)
		if !ok {
			nodes = append(nodes, n)
			continue
		}
		out := n.Outputs[0]
		w := g.newValue(merged, out.DType)
		cat := &Node{Op: "concat", Attrs: core.Attrs{"axis": len(out.Shape) - 1}, Inputs: parts, Outputs: []*Value{w}}
		w.Producer = cat
		re := &Node{Op: "reshape", Attrs: core.Attrs{"shape": []int(out.Shape.Clone())}, Inputs: []*Value{w}, Outputs: n.Outputs}
		out.Producer = re
		nodes = append(nodes, cat, re)
		moved++
	}
	g.Nodes = nodes
	return moved
}

// mergedParts matches n = concat along its last axis of reshapes, each read
// only here, of u_i [P..., X_i, T...] to [P..., X_i * prod(T)] with the same
// P and T for every part; it returns the u_i and the shape of their concat
// along X.
func mergedParts(n *Node, uses map[*Value]int) ([]*Value, core.Shape, bool) {
	if n.Op != "concat" || n.Fused != nil || len(n.Inputs) < 2 || len(n.Outputs) != 1 {
		return nil, nil, false
	}
	out := n.Outputs[0]
	rank := len(out.Shape)
	if a, err := core.NormalizeAttrs("concat", n.Attrs); err != nil || rank == 0 || (a.Int("axis") != rank-1 && a.Int("axis") != -1) {
		return nil, nil, false
	}
	var parts []*Value
	var tail core.Shape
	merged := core.Shape{}
	for i, v := range n.Inputs {
		r := v.Producer
		if r == nil || r.Op != "reshape" || r.Fused != nil || uses[v] != 1 || len(r.Inputs) != 1 || r.Inputs[0] == nil {
			return nil, nil, false
		}
		u := r.Inputs[0]
		if u.DType != out.DType || len(u.Shape) <= rank || !sameShape(u.Shape[:rank-1], out.Shape[:rank-1]) ||
			u.Shape[rank-1:].Numel() != v.Shape[rank-1] {
			return nil, nil, false
		}
		t := u.Shape[rank:]
		if i == 0 {
			tail = t
			merged = append(merged, u.Shape[:rank]...)
		} else {
			if !sameShape(t, tail) {
				return nil, nil, false
			}
			merged[rank-1] += u.Shape[rank-1]
		}
		parts = append(parts, u)
	}
	return parts, append(merged, tail...), true
}
