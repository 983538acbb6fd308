package core

import (
	"fmt"
	"slices"
	"sync"
)

// Reverse-mode autograd over a tape: every op call whose inputs require a
// gradient records a node (op, inputs, outputs, attributes). Backward walks
// the nodes in reverse topological order and applies each OpDef's backward
// rule, which is itself written with registry ops, so gradients run on the
// device the tensors live on. Gradients of broadcast inputs are summed back to
// the input's shape by the rules; views are ordinary ops here, so gradients
// flow through them without aliasing hazards (we have no in-place ops on the
// tape).

type node struct {
	op      *OpDef
	inputs  []*Tensor
	outputs []*Tensor
	attrs   Attrs
}

// GradCtx is what a backward rule sees.
type GradCtx struct {
	Op      *OpDef
	Inputs  []*Tensor
	Outputs []*Tensor
	Attrs   Attrs
	Grads   []*Tensor // gradient of each output; nil where none flowed
	Need    []bool    // whether input i needs a gradient
}

// Grad returns the gradient of output i, zeros where none flowed.
func (g *GradCtx) Grad(i int) *Tensor {
	if g.Grads[i] != nil {
		return g.Grads[i]
	}
	return ZerosLike(g.Outputs[i])
}

// RequiresGrad reports whether gradients flow to or through t.
func (t *Tensor) RequiresGrad() bool { return t != nil && t.requiresGrad }

// SetRequiresGrad marks a leaf tensor as a parameter to differentiate.
// Only floating-point leaves can require a gradient.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	if t.Err() != nil {
		return t
	}
	if t.node != nil {
		return errTensor(fmt.Errorf("requires_grad: can only be set on a leaf tensor (this one was made by %s); use Detach first", t.node.op.Name))
	}
	if on && !t.dtype.IsInexact() {
		return errTensor(fmt.Errorf("requires_grad: only floating-point tensors (and complex ones) can require gradients, got %s", t.dtype))
	}
	t.requiresGrad = on
	return t
}

// IsLeaf reports whether t was made by the user rather than by a recorded op.
func (t *Tensor) IsLeaf() bool { return t.node == nil }

// Grad is the accumulated gradient of a leaf after Backward (nil if none).
func (t *Tensor) Grad() *Tensor { return t.grad }

// SetGrad replaces the accumulated gradient (optimisers and clipping use it).
func (t *Tensor) SetGrad(g *Tensor) { t.grad = g }

// ZeroGrad drops the accumulated gradient.
func (t *Tensor) ZeroGrad() { t.grad = nil }

// Detach returns a view of the same storage that is cut from the graph.
func (t *Tensor) Detach() *Tensor {
	if t.err != nil {
		return t
	}
	// Its own shape and strides: t's live in t's allocation (newHeader), and
	// sharing them would keep t, its graph included, alive with out.
	out := newHeader(t.shape, t.strides)
	out.offset, out.dtype, out.storage, out.backend = t.offset, t.dtype, t.storage, t.backend
	if tb := tracer.Load(); tb != nil {
		if a, ok := tb.t.(Aliaser); ok {
			a.Alias(t, out)
		}
	}
	return out
}

func record(def *OpDef, inputs, outputs []*Tensor, a Attrs) {
	if def.Backward == nil {
		return
	}
	need := false
	for i, t := range inputs {
		if t != nil && t.requiresGrad && !def.Inputs[min(i, len(def.Inputs)-1)].NoGrad {
			need = true
		}
	}
	// Grad mode last: while a goroutine is in NoGrad, asking costs a
	// goroutine-id lookup, which ops on tensors that need no gradient skip.
	if !need || !GradEnabled() {
		return
	}
	// The node keeps its own copies of the slices: a caller may reuse the
	// ones it passed or got back (replacing an output in place would
	// otherwise cut the gradient's path).
	n := &node{op: def, inputs: slices.Clone(inputs), outputs: slices.Clone(outputs), attrs: a}
	for i, o := range outputs {
		if o.dtype.IsInexact() {
			o.requiresGrad, o.node, o.outIndex = true, n, i
		}
	}
}

// RecordFunction records outputs as computed from inputs by one step whose
// gradient rule is backward (called with the outputs' gradients and which
// inputs need one; it returns a gradient per input, nil where none, at the
// input's shape or one that sums to it). Graph compilers use it for work
// they run as one kernel (a fused elementwise tree) so autograd sees one
// node instead of the ops it replaced. Nothing is recorded when no input
// needs a gradient or recording is off.
func RecordFunction(name string, inputs, outputs []*Tensor, backward func(*GradCtx) ([]*Tensor, error)) {
	def := &OpDef{Name: name, Inputs: make([]InputSpec, len(inputs)), Backward: backward}
	if len(def.Inputs) == 0 {
		return
	}
	record(def, inputs, outputs, nil)
}

// transferDef carries gradients across a device copy made by To.
var transferDef = &OpDef{Name: "to_device", Doc: "device copy", Inputs: []InputSpec{{Name: "x"}}}

func init() {
	transferDef.Backward = func(g *GradCtx) ([]*Tensor, error) {
		return []*Tensor{g.Grads[0].To(g.Inputs[0].Device())}, nil
	}
}

func recordTransfer(in, out *Tensor) *Tensor {
	n := &node{op: transferDef, inputs: []*Tensor{in}, outputs: []*Tensor{out}}
	out.requiresGrad, out.node = true, n
	return out
}

// Backward computes gradients of t with respect to every leaf that requires
// one and accumulates them into the leaves' Grad. t must be a one-element
// tensor unless grad (the gradient of some scalar with respect to t) is given.
func (t *Tensor) Backward(grad ...*Tensor) (err error) {
	defer catch("backward", &err)
	return t.backward(grad, accumulate)
}

// Gradients returns the gradients of t (a one-element tensor) with respect
// to each of wrt, as torch.autograd.grad does: nothing is accumulated into
// any leaf's Grad, and a tensor t does not depend on gets zeros. Each of
// wrt must be a leaf that requires grad. Every gradient is an op's output,
// so a traced training step (core/ir) captures the whole backward pass.
func Gradients(t *Tensor, wrt []*Tensor) (grads []*Tensor, err error) {
	defer catch("gradients", &err)
	want := make(map[*Tensor]int, len(wrt))
	for i, w := range wrt {
		if err := w.Err(); err != nil {
			return nil, fmt.Errorf("gradients: wrt %d: %w", i, err)
		}
		if !w.requiresGrad || w.node != nil {
			return nil, fmt.Errorf("gradients: wrt %d (shape %v) is not a leaf that requires grad; call SetRequiresGrad(true) on it before computing t", i, w.shape)
		}
		want[w] = i
	}
	grads = make([]*Tensor, len(wrt))
	collect := func(leaf, g *Tensor) error {
		i, ok := want[leaf]
		if !ok {
			return nil
		}
		if grads[i] != nil {
			g = Call1("add", nil, grads[i], g)
		}
		grads[i] = g
		return g.Err()
	}
	if err := t.backward(nil, collect); err != nil {
		return nil, err
	}
	for i, g := range grads {
		if g == nil {
			grads[i] = ZerosLike(wrt[i])
		}
	}
	return grads, nil
}

// backward runs the chain rule from t and hands each leaf's gradient to
// onLeaf.
func (t *Tensor) backward(grad []*Tensor, onLeaf func(leaf, g *Tensor) error) error {
	if err := t.Err(); err != nil {
		return err
	}
	if !t.requiresGrad {
		return fmt.Errorf("backward: tensor does not require grad (no input had SetRequiresGrad(true), or it was computed under NoGrad)")
	}
	var g *Tensor
	if len(grad) > 0 && grad[0] != nil {
		g = grad[0]
		if err := g.Err(); err != nil {
			return fmt.Errorf("backward: gradient: %w", err)
		}
		if g.storage == nil {
			return fmt.Errorf("backward: gradient: %w", ErrReleased)
		}
		if !g.shape.Equal(t.shape) {
			return fmt.Errorf("backward: gradient shape %v differs from tensor shape %v", g.shape, t.shape)
		}
		g = g.Detach()
	} else {
		if t.Numel() != 1 {
			return fmt.Errorf("backward: tensor has shape %v; pass a gradient or reduce it to one element first", t.shape)
		}
		g = OnesLike(t)
	}
	if t.node == nil {
		return onLeaf(t, g)
	}
	grads := map[*Tensor]*Tensor{t: g}
	for _, n := range topoOrder(t.node) {
		if err := backwardNode(n, grads, onLeaf); err != nil {
			return err
		}
	}
	return nil
}

func backwardNode(n *node, grads map[*Tensor]*Tensor, onLeaf func(leaf, g *Tensor) error) error {
	// The rule sees detached tensors: what it computes from them is not
	// recorded, without switching recording off for anyone else.
	ctx := &GradCtx{Op: n.op, Inputs: detachAll(n.inputs), Outputs: detachAll(n.outputs), Attrs: n.attrs,
		Grads: make([]*Tensor, len(n.outputs)), Need: make([]bool, len(n.inputs))}
	any := false
	for i, o := range n.outputs {
		if g, ok := grads[o]; ok {
			ctx.Grads[i], any = g, true
			delete(grads, o)
		}
	}
	if !any {
		return nil
	}
	for i, in := range n.inputs {
		ctx.Need[i] = in != nil && in.requiresGrad && !n.op.Inputs[min(i, len(n.op.Inputs)-1)].NoGrad
	}
	gin, err := n.op.Backward(ctx)
	if err != nil {
		return fmt.Errorf("backward of %s: %w", n.op.Name, err)
	}
	for i, gi := range gin {
		if gi == nil || i >= len(n.inputs) || !ctx.Need[i] {
			continue
		}
		if err := gi.Err(); err != nil {
			return fmt.Errorf("backward of %s, input %d: %w", n.op.Name, i, err)
		}
		in := n.inputs[i]
		if !gi.shape.Equal(in.shape) {
			if gi = SumToShape(gi, in.shape); gi.err != nil {
				return fmt.Errorf("backward of %s, input %d: %w", n.op.Name, i, gi.err)
			}
		}
		if gi.dtype != in.dtype {
			gi = gi.Cast(in.dtype)
		}
		if in.node == nil {
			if err := onLeaf(in, gi); err != nil {
				return err
			}
			continue
		}
		if prev, ok := grads[in]; ok {
			gi = Call1("add", nil, prev, gi)
			if gi.err != nil {
				return gi.err
			}
		}
		grads[in] = gi
	}
	return nil
}

// detachAll detaches each tensor, keeping nils and repeats (x * x) as they
// are.
func detachAll(ts []*Tensor) []*Tensor {
	out := make([]*Tensor, len(ts))
	for i, t := range ts {
		if t == nil {
			continue
		}
		if j := slices.Index(ts[:i], t); j >= 0 {
			out[i] = out[j]
			continue
		}
		out[i] = t.Detach()
	}
	return out
}

// accumulateMu serialises accumulation into leaves' Grad: goroutines that
// run Backward through graphs sharing a leaf (shared weights) must each add
// their gradient, not overwrite one another's.
var accumulateMu sync.Mutex

func accumulate(leaf, g *Tensor) error {
	accumulateMu.Lock()
	defer accumulateMu.Unlock()
	if leaf.grad == nil {
		leaf.grad = g.Detach()
		return nil
	}
	sum := Call1("add", nil, leaf.grad, g)
	if sum.err != nil {
		return sum.err
	}
	leaf.grad = sum
	return nil
}

// topoOrder lists nodes so that every node comes before the nodes that made
// its inputs (reverse topological order of the forward pass).
func topoOrder(root *node) []*node {
	var order []*node
	seen := map[*node]bool{}
	type frame struct {
		n    *node
		next int
	}
	stack := []frame{{n: root}}
	seen[root] = true
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < len(f.n.inputs) {
			in := f.n.inputs[f.next]
			f.next++
			if in != nil && in.node != nil && !seen[in.node] {
				seen[in.node] = true
				stack = append(stack, frame{n: in.node})
			}
			continue
		}
		order = append(order, f.n)
		stack = stack[:len(stack)-1]
	}
	slices.Reverse(order)
	return order
}

// SumToShape sums a broadcast gradient back to shape (the inverse of
// broadcasting): leading extra dims are summed away, dims of size 1 in shape
// are summed with keepdim.
func SumToShape(g *Tensor, shape Shape) *Tensor {
	if g.err != nil || g.shape.Equal(shape) {
		return g
	}
	extra := len(g.shape) - len(shape)
	if extra < 0 {
		return errTensor(fmt.Errorf("cannot sum gradient of shape %v to larger shape %v", g.shape, shape))
	}
	var axes []int
	for i := range g.shape {
		if i < extra || (shape[i-extra] == 1 && g.shape[i] != 1) {
			axes = append(axes, i)
		} else if shape[i-extra] != g.shape[i] {
			return errTensor(fmt.Errorf("cannot sum gradient of shape %v to shape %v", g.shape, shape))
		}
	}
	out := g
	if len(axes) > 0 {
		out = Call1("sum", Attrs{"axes": axes, "keepdim": true}, g)
	}
	return out.Reshape(shape)
}
