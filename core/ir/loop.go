package ir

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// LoopBody is one iteration of a counted loop: it gets the iteration index
// and the carried values and returns the next carried values, as many and
// each with the shape and dtype it got.
type LoopBody func(i int, carried []*core.Tensor) ([]*core.Tensor, error)

// Loop runs body n times, threading the carried values through it, and
// returns the last iteration's values (carried itself when n is 0).
//
// Outside a capture it simply runs the body. Inside one (Trace, Begin) it
// still runs every iteration, so the traced code sees real values, but
// records a single loop node whose body is a nested graph traced once:
// replaying the graph runs that body n times instead of n unrolled copies.
// Tensors the body reads from the enclosing code become inputs of the body
// (computed ones) or constants (outside ones); loops nest. Because the body
// is replayed, it must do the same thing on every iteration: it may not
// branch on i or on tensor values, nor compute attributes from i. Loop
// records iterations 0 and 1 and refuses a body whose two traces differ;
// carry whatever changes from one iteration to the next as a tensor.
func Loop(n int, carried []*core.Tensor, body LoopBody) ([]*core.Tensor, error) {
	if n < 0 {
		return nil, fmt.Errorf("ir: Loop: n is %d, want a count of at least 0", n)
	}
	if body == nil {
		return nil, fmt.Errorf("ir: Loop: the body is nil")
	}
	for j, t := range carried {
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("ir: Loop: carried value %d: %w", j, err)
		}
	}
	cur := slices.Clone(carried)
	outer := active.Load()
	if outer == nil || n == 0 {
		for i := range n {
			next, err := body(i, cur)
			if err := checkCarried(i, cur, next, err); err != nil {
				return nil, err
			}
			cur = next
		}
		return cur, nil
	}
	return captureLoop(outer, n, cur, body)
}

// checkCarried checks what iteration i returned against what it got.
func checkCarried(i int, in, out []*core.Tensor, err error) error {
	if err != nil {
		return fmt.Errorf("ir: Loop: iteration %d: %w", i, err)
	}
	if len(out) != len(in) {
		return fmt.Errorf("ir: Loop: iteration %d returned %d values for %d carried ones (return one value per carried value)", i, len(out), len(in))
	}
	for j, t := range out {
		if err := t.Err(); err != nil {
			return fmt.Errorf("ir: Loop: iteration %d: carried value %d: %w", i, j, err)
		}
		if !sameShape(t.Shape(), in[j].Shape()) || t.DType() != in[j].DType() {
			return fmt.Errorf("ir: Loop: carried value %d goes into iteration %d as %s%v and comes out as %s%v (each carried value must keep its shape and dtype)",
				j, i, in[j].DType(), []int(in[j].Shape()), t.DType(), []int(t.Shape()))
		}
	}
	return nil
}

// captureLoop runs the loop inside a capture and records it as one node of
// outer's graph. The tracer is switched per iteration: to a body recorder
// for iterations 0 and 1, off for the rest.
func captureLoop(outer *recorder, n int, carried []*core.Tensor, body LoopBody) (_ []*core.Tensor, err error) {
	prev := core.SetTracer(nil)
	inBody.Add(1)
	defer func() {
		inBody.Add(-1)
		if !outer.root().closed { // an Abort inside the body already put the tracer back
			core.SetTracer(prev)
			active.Store(outer)
		}
	}()
	cur := carried
	var first *recorder
	for i := range n {
		in, rec := cur, (*recorder)(nil)
		if i < 2 {
			if rec, in, err = bodyRecorder(outer, cur); err != nil {
				return nil, err
			}
			active.Store(rec)
			core.SetTracer(rec)
		}
		next, err := body(i, in)
		core.SetTracer(nil)
		active.Store(nil)
		if err := checkCarried(i, cur, next, err); err != nil {
			return nil, err
		}
		if rec != nil {
			for _, t := range next {
				rec.g.Outputs = append(rec.g.Outputs, rec.use(t))
			}
			if i == 0 {
				first = rec
				outer.g.nextID = rec.g.nextID
			} else if diff := sameBody(first.g, rec.g, first.outer, rec.outer); diff != "" {
				return nil, fmt.Errorf("ir: Loop: the body did different things at i=0 and i=1 (%s); a captured loop replays one trace of its body, so it must not branch on i or on values: carry what changes as a tensor", diff)
			}
		}
		cur = next
	}
	node := &Node{Op: "loop", Attrs: core.Attrs{"n": n}, Body: first.g}
	for _, t := range carried {
		node.Inputs = append(node.Inputs, outer.use(t))
	}
	for _, t := range first.outer {
		node.Inputs = append(node.Inputs, outer.use(t))
	}
	for j, t := range cur {
		v := outer.g.newValue(t.Shape(), t.DType())
		v.Producer, v.Index = node, j
		outer.values[t] = v
		node.Outputs = append(node.Outputs, v)
	}
	outer.g.Nodes = append(outer.g.Nodes, node)
	return cur, nil
}

// bodyRecorder starts the trace of one iteration. The body gets fresh
// tensors (views of the carried ones, made with no tracer installed) as its
// inputs, so that a carried tensor the body also reads directly from the
// enclosing code, or one carried twice, still maps to the right value.
func bodyRecorder(outer *recorder, carried []*core.Tensor) (*recorder, []*core.Tensor, error) {
	// the body's values are numbered on from the enclosing graph's, so a
	// printed graph names every value once
	rec := &recorder{g: &Graph{nextID: outer.g.nextID}, values: map[*core.Tensor]*Value{}, parent: outer}
	in := make([]*core.Tensor, len(carried))
	for j, t := range carried {
		view, err := core.Call("reshape", []*core.Tensor{t}, core.Attrs{"shape": []int(t.Shape())})
		if err != nil {
			return nil, nil, fmt.Errorf("ir: Loop: carried value %d: %w", j, err)
		}
		in[j] = view[0]
		v := rec.g.newValue(t.Shape(), t.DType())
		v.Input = j
		rec.values[in[j]] = v
		rec.g.Inputs = append(rec.g.Inputs, v)
	}
	return rec, in, nil
}

func (r *recorder) root() *recorder {
	for r.parent != nil {
		r = r.parent
	}
	return r
}

// sameBody compares two traces of a loop body and describes the first
// difference ("" when they match): the same ops with the same attributes on
// the same values, the same outer tensors read, equal constants.
func sameBody(a, b *Graph, outerA, outerB []*core.Tensor) string {
	if len(a.Inputs) != len(b.Inputs) || !slices.Equal(outerA, outerB) {
		return "it read different tensors from the enclosing code"
	}
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("%d ops at i=0, %d at i=1", len(a.Nodes), len(b.Nodes))
	}
	ra, rb := valueRefs(a), valueRefs(b)
	same := func(x, y *Value) bool {
		switch {
		case x == nil || y == nil:
			return x == y
		case x.Const != nil || y.Const != nil:
			return x.Const != nil && y.Const != nil && sameConst(x.Const, y.Const)
		}
		return ra[x] == rb[y]
	}
	for i, n := range a.Nodes {
		m := b.Nodes[i]
		if n.Op != m.Op || attrKey(n.Attrs) != attrKey(m.Attrs) {
			return fmt.Sprintf("op %d is %s%s at i=0 and %s%s at i=1", i, n.Op, attrString(n.Attrs), m.Op, attrString(m.Attrs))
		}
		if len(n.Inputs) != len(m.Inputs) {
			return fmt.Sprintf("op %d (%s) has %d inputs at i=0 and %d at i=1", i, n.Op, len(n.Inputs), len(m.Inputs))
		}
		for j := range n.Inputs {
			if !same(n.Inputs[j], m.Inputs[j]) {
				return fmt.Sprintf("input %d of op %d (%s) differs", j, i, n.Op)
			}
		}
		if (n.Body == nil) != (m.Body == nil) {
			return fmt.Sprintf("op %d is a loop only once", i)
		}
		if n.Body != nil {
			if d := sameBody(n.Body, m.Body, nil, nil); d != "" {
				return fmt.Sprintf("in the loop at op %d: %s", i, d)
			}
		}
	}
	for j := range a.Outputs {
		if !same(a.Outputs[j], b.Outputs[j]) {
			return fmt.Sprintf("carried value %d comes from a different place", j)
		}
	}
	return ""
}

// valueRefs names every non-constant value of g by where it comes from:
// its input position or its producer's position and output index.
func valueRefs(g *Graph) map[*Value]string {
	refs := map[*Value]string{}
	for _, v := range g.Inputs {
		refs[v] = fmt.Sprintf("in%d", v.Input)
	}
	for i, n := range g.Nodes {
		for j, o := range n.Outputs {
			refs[o] = fmt.Sprintf("n%d.%d", i, j)
		}
	}
	return refs
}

func sameConst(x, y *core.Tensor) bool {
	if x == y {
		return true
	}
	if x.DType() != y.DType() || !sameShape(x.Shape(), y.Shape()) {
		return false
	}
	bx, err1 := x.Bytes()
	by, err2 := y.Bytes()
	return err1 == nil && err2 == nil && bytes.Equal(bx, by)
}

// runLoop runs a loop node: the body n times, each iteration on the
// carried values the previous one returned and the same outer values. With
// release on, carried tensors an iteration made are released once the next
// iteration has used them.
func runLoop(n *Node, ins []*core.Tensor, env map[*Value]*core.Tensor, release bool) error {
	k := len(n.Outputs)
	cur, outer := slices.Clone(ins[:k]), ins[k:]
	for i := range n.Attrs.Int("n") {
		next, err := n.Body.run(append(slices.Clone(cur), outer...), release)
		if err != nil {
			return fmt.Errorf("%w (in iteration %d of a loop)", err, i)
		}
		if release && i > 0 {
			releaseCarried(cur, ins, next, n.Body)
		}
		cur = next
	}
	for j, o := range n.Outputs {
		env[o] = cur[j]
	}
	return nil
}

// inlineConstInputs turns the outer values a loop body reads that are
// constants (after folding) into constants of the body.
func inlineConstInputs(n *Node) {
	removeOuterInputs(n, func(j int) bool {
		c := n.Inputs[j].Const
		if c == nil {
			return false
		}
		v := n.Body.Inputs[j]
		v.Const, v.Input = c, -1
		return true
	})
}

// pruneOuterInputs drops the outer values a loop body no longer reads.
func pruneOuterInputs(n *Node) {
	used := map[*Value]bool{}
	for _, v := range n.Body.Outputs {
		used[v] = true
	}
	for _, b := range n.Body.Nodes {
		for _, v := range b.Inputs {
			used[v] = true
		}
	}
	removeOuterInputs(n, func(j int) bool { return !used[n.Body.Inputs[j]] })
}

// removeOuterInputs removes the loop's outer inputs j (never the carried
// ones) for which drop says so, from the node and its body, and numbers
// the body's inputs again.
func removeOuterInputs(n *Node, drop func(j int) bool) {
	k := len(n.Outputs)
	ins, bodyIns := n.Inputs[:k:k], n.Body.Inputs[:k:k]
	for j := k; j < len(n.Inputs); j++ {
		if !drop(j) {
			ins = append(ins, n.Inputs[j])
			bodyIns = append(bodyIns, n.Body.Inputs[j])
		}
	}
	for j, v := range bodyIns {
		v.Input = j
	}
	n.Inputs, n.Body.Inputs = ins, bodyIns
}
