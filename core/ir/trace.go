package ir

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
)

var traceMu sync.Mutex // one capture at a time: the tracer is process-wide

// active is the recorder ops are recorded into: the capture's, or while
// Loop traces a body, the body's (nil while Loop runs the iterations it does
// not record). Loop reads it to know whether to record; inBody counts the
// loop bodies running inside a capture, for clear errors.
var (
	active atomic.Pointer[recorder]
	inBody atomic.Int32
)

type recorder struct {
	g      *Graph
	values map[*core.Tensor]*Value
	err    error
	// parent is the enclosing graph's recorder while a loop body is traced;
	// outer lists the tensors of enclosing graphs the body reads (its
	// inputs after the carried ones), in the order of the body's inputs.
	parent *recorder
	outer  []*core.Tensor
	closed bool // the capture has ended or been aborted (set on the top recorder)
}

func (r *recorder) Record(def *core.OpDef, inputs []*core.Tensor, attrs core.Attrs, outs []*core.Tensor) {
	if r.err != nil {
		return
	}
	if shapeOnly[def.Name] && len(outs) == 1 {
		// ones_like(x) reads only x's shape, dtype and device, which a
		// graph fixes: its output is the same tensor on every run, so it is
		// a constant, and what is folded from it (the seed of a backward
		// pass) is computed once.
		v := r.g.newValue(outs[0].Shape(), outs[0].DType())
		v.Const = outs[0].Detach()
		r.values[outs[0]] = v
		return
	}
	n := &Node{Op: def.Name, Attrs: cloneAttrs(attrs)}
	for _, t := range inputs {
		if t == nil {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		n.Inputs = append(n.Inputs, r.use(t))
	}
	for i, t := range outs {
		v := r.g.newValue(t.Shape(), t.DType())
		v.Producer, v.Index = n, i
		r.values[t] = v
		n.Outputs = append(n.Outputs, v)
	}
	r.g.Nodes = append(r.g.Nodes, n)
}

// Alias follows a detached copy of a traced value: it is the same value
// (core.Aliaser). A gradient stored by Backward in a leaf's Grad is one.
func (r *recorder) Alias(src, dst *core.Tensor) {
	if v, ok := r.values[src]; ok {
		r.values[dst] = v
	}
}

// shapeOnly names the ops whose output depends on their input's shape,
// dtype and device but not its values.
var shapeOnly = map[string]bool{"ones_like": true, "zeros_like": true, "full_like": true}

// use is the value of a tensor the traced code reads. A tensor from outside
// the trace (a weight, a constant made before it) is captured by reference,
// as a constant; inside a loop body, one an enclosing graph computes becomes
// an input of the body.
func (r *recorder) use(t *core.Tensor) *Value {
	if v, ok := r.values[t]; ok {
		return v
	}
	v := r.g.newValue(t.Shape(), t.DType())
	if r.parent != nil && r.parent.computes(t) {
		v.Input = len(r.g.Inputs)
		r.g.Inputs = append(r.g.Inputs, v)
		r.outer = append(r.outer, t)
	} else {
		v.Const = t
	}
	r.values[t] = v
	return v
}

// computes reports whether t is a non-constant value of r's graph or of a
// graph enclosing it.
func (r *recorder) computes(t *core.Tensor) bool {
	if v, ok := r.values[t]; ok {
		return v.Const == nil
	}
	return r.parent != nil && r.parent.computes(t)
}

func cloneAttrs(a core.Attrs) core.Attrs {
	if len(a) == 0 {
		return nil
	}
	out := make(core.Attrs, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

// Capture is a trace in progress (Begin ... End), for callers that cannot
// hand over a function: the C ABI records what a Python or JavaScript
// program does between two calls.
type Capture struct {
	r    *recorder
	prev core.Tracer
	done bool
}

// Begin starts capturing the ops called from now on, with inputs as the
// graph's inputs. One capture at a time per process: End or Abort it.
func Begin(inputs ...*core.Tensor) (*Capture, error) {
	if !traceMu.TryLock() {
		if inBody.Load() > 0 {
			return nil, fmt.Errorf("ir: cannot begin a capture inside the body of an ir.Loop being captured: the body is recorded into the enclosing capture (call ir.Loop inside it for a nested loop)")
		}
		return nil, fmt.Errorf("ir: a capture is already in progress (end or abort it first)")
	}
	r := &recorder{g: &Graph{}, values: map[*core.Tensor]*Value{}}
	for i, t := range inputs {
		if t == nil {
			traceMu.Unlock()
			return nil, fmt.Errorf("ir: capture input %d is nil", i)
		}
		if err := t.Err(); err != nil {
			traceMu.Unlock()
			return nil, fmt.Errorf("ir: capture input %d: %w", i, err)
		}
		if _, dup := r.values[t]; dup {
			traceMu.Unlock()
			return nil, fmt.Errorf("ir: capture input %d is the same tensor as an earlier one", i)
		}
		v := r.g.newValue(t.Shape(), t.DType())
		v.Input = i
		r.values[t] = v
		r.g.Inputs = append(r.g.Inputs, v)
	}
	active.Store(r)
	return &Capture{r: r, prev: core.SetTracer(r)}, nil
}

func (c *Capture) stop() {
	if !c.done {
		c.done = true
		c.r.closed = true
		active.Store(nil)
		core.SetTracer(c.prev)
		traceMu.Unlock()
	}
}

// Abort stops the capture and drops it.
func (c *Capture) Abort() { c.stop() }

// End stops the capture and returns the graph from its inputs to outputs.
func (c *Capture) End(outputs ...*core.Tensor) (*Graph, error) {
	if c.done {
		return nil, fmt.Errorf("ir: the capture has already ended")
	}
	if inBody.Load() > 0 {
		return nil, fmt.Errorf("ir: End called inside the body of an ir.Loop being captured; end the capture after the loop returns")
	}
	c.stop()
	if c.r.err != nil {
		return nil, c.r.err
	}
	for i, t := range outputs {
		if t == nil {
			return nil, fmt.Errorf("ir: output %d is nil", i)
		}
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("ir: output %d: %w", i, err)
		}
		v, ok := c.r.values[t]
		if !ok {
			return nil, fmt.Errorf("ir: output %d was not computed by the traced code (return computed tensors, not inputs or outside tensors)", i)
		}
		c.r.g.Outputs = append(c.r.g.Outputs, v)
	}
	return c.r.g, nil
}

// Trace runs fn once on the example inputs, recording every op it calls,
// and returns the graph from the inputs to what fn returns. Tensors fn uses
// that are neither inputs nor made inside it become constants, held by
// reference: pass anything that changes between runs (the parameters of a
// model being trained, whose optimiser replaces their tensors) as an input.
func Trace(fn func(inputs []*core.Tensor) ([]*core.Tensor, error), examples ...*core.Tensor) (*Graph, error) {
	c, err := Begin(examples...)
	if err != nil {
		return nil, err
	}
	outs, err := fn(examples)
	if err != nil {
		c.Abort()
		return nil, fmt.Errorf("ir: Trace: the traced function failed: %w", err)
	}
	return c.End(outs...)
}
