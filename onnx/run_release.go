package onnx

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
)

// A run gives an intermediate's memory back to the CPU backend's cache at
// the value's last use, as a compiled graph's Run does (core/ir's memory
// planning, whose StorageReleaser this uses) and as onnxruntime's planner
// reuses its buffers. Left to the collector, every node's output was a
// block last touched a collection ago, cold in every cache, and MiniLM's
// layer norms and adds ran at a third of their speed.
//
// Views share their source's storage (a Reshape of a node's output, an
// Identity), so storages are counted, not values: a storage goes when no
// live value uses it. Storages the run did not make - initializers, the
// caller's inputs, and whatever views them - are pinned, and the outputs
// stay live to the end. Runs that could hide a tensor from the count keep
// everything for the collector: a tracer (it may hold the tensors), a
// gradient (backward reads the intermediates), a model with control flow
// (a branch may return its own initializer), and once a sequence or
// optional value appears (it may hold views of any value).

type releaser struct {
	*ir.StorageReleaser
	off bool
}

// newReleaser starts the count for a run whose values so far (st.vals:
// initializers and inputs) are pinned; nil when the run keeps everything.
func newReleaser(m *Model, st *runState) *releaser {
	if m.dev != core.CPU || core.Tracing() {
		return nil
	}
	for _, n := range m.nodes {
		if len(n.branches) > 0 {
			return nil
		}
	}
	r := &releaser{StorageReleaser: ir.NewStorageReleaser(true)}
	for _, v := range st.vals {
		if t, ok := v.(*core.Tensor); ok {
			if core.GradEnabled() && t.RequiresGrad() {
				return nil
			}
			r.Pin(t)
		}
	}
	return r
}

// made counts the values node n just wrote.
func (r *releaser) made(n *node, st *runState) {
	if r == nil {
		return
	}
	for _, name := range n.outputs {
		switch v := st.vals[name].(type) {
		case nil:
		case *core.Tensor:
			r.Hold(v)
		default:
			r.off = true
		}
	}
}

// dead is value v's last use.
func (r *releaser) dead(v Value) {
	if t, ok := v.(*core.Tensor); ok && r != nil && !r.off {
		r.Drop(t)
	}
}
