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

// Trace runs fn once on the example inputs, recording every op it calls,
// and returns the graph from the inputs to what fn returns. Tensors fn uses
// that are neither inputs nor made inside it become constants, held by
// reference: pass anything that changes between runs (the parameters of a
// model being trained, whose optimiser replaces their tensors) as an input.
func Trace(fn func(inputs []*core.Tensor) ([]*core.Tensor, error), examples ...*core.Tensor) (*Graph, error) {
	traceMu.Lock()
	defer traceMu.Unlock()
	r := &recorder{g: &Graph{}, values: map[*core.Tensor]*Value{}}
	for i, t := range examples {
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("ir: Trace: example input %d: %w", i, err)
		}
		v := r.g.newValue(t.Shape(), t.DType())
		v.Input = i
		r.values[t] = v
		r.g.Inputs = append(r.g.Inputs, v)
	}
	prev := core.SetTracer(r)
	outs, err := fn(examples)
	core.SetTracer(prev)
	if err != nil {
		return nil, fmt.Errorf("ir: Trace: the traced function failed: %w", err)
	}
	if r.err != nil {
		return nil, r.err
	}
	for i, t := range outs {
		if err := t.Err(); err != nil {
			return nil, fmt.Errorf("ir: Trace: output %d: %w", i, err)
		}
		v, ok := r.values[t]
		if !ok {
			return nil, fmt.Errorf("ir: Trace: output %d was not computed by the traced function (return computed tensors, not inputs or outside tensors)", i)
		}
		r.g.Outputs = append(r.g.Outputs, v)
	}
	return r.g, nil
}
