package ir

import (
	"fmt"
	"sync"

	"github.com/webtensor/webtensor/core"
)

var traceMu sync.Mutex // one capture at a time: the tracer is process-wide

type recorder struct {
	g      *Graph
	values map[*core.Tensor]*Value
	err    error
}

func (r *recorder) Record(def *core.OpDef, inputs []*core.Tensor, attrs core.Attrs, outs []*core.Tensor) {
	if r.err != nil {
		return
	}
	n := &Node{Op: def.Name, Attrs: cloneAttrs(attrs)}
	for _, t := range inputs {
		if t == nil {
			n.Inputs = append(n.Inputs, nil)
			continue
		}
		v, ok := r.values[t]
		if !ok {
			// A tensor from outside the trace (a weight, a constant made
			// before it): captured by reference, as a constant.
			v = r.g.newValue(t.Shape(), t.DType())
			v.Const = t
			r.values[t] = v
		}
		n.Inputs = append(n.Inputs, v)
	}
	for i, t := range outs {
		v := r.g.newValue(t.Shape(), t.DType())
		v.Producer, v.Index = n, i
		r.values[t] = v
		n.Outputs = append(n.Outputs, v)
	}
	r.g.Nodes = append(r.g.Nodes, n)
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
	return &Capture{r: r, prev: core.SetTracer(r)}, nil
}

func (c *Capture) stop() {
	if !c.done {
		c.done = true
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
