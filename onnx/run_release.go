package onnx

import "github.com/webtensor/webtensor/core"

// A run gives an intermediate's memory back to the CPU backend's cache at
// the value's last use, as onnxruntime's planner reuses its buffers. Left
// to the collector, every node's output was a block last touched a
// collection ago, cold in every cache, and MiniLM's layer norms and adds
// ran at a third of their speed.
//
// Views share their source's storage (a Reshape of a node's output, an
// Identity), so storages are counted, not values: a storage goes when no
// live value uses it. Storages the run did not make - initializers, the
// caller's inputs, and whatever they are viewed as - are never released,
// nor are the outputs (live at the end). Runs that could hide a tensor
// from the count keep everything for the collector: a tracer (it may hold
// the tensors), a gradient (backward reads the intermediates), a model
// with control flow (a branch may return its own initializer), and a
// sequence or optional value (it may hold views of any value).

type releaser struct {
	live   map[core.Storage]int
	pinned map[core.Storage]bool
	off    bool
}

// newReleaser starts the count for a run whose values so far (st.vals:
// initializers and inputs) are all pinned; nil when the run keeps
// everything.
func newReleaser(m *Model, st *runState) *releaser {
	if m.dev != core.CPU || core.Tracing() {
		return nil
	}
	for _, n := range m.nodes {
		if len(n.branches) > 0 {
			return nil
		}
	}
	r := &releaser{live: map[core.Storage]int{}, pinned: map[core.Storage]bool{}}
	for _, v := range st.vals {
		t, ok := v.(*core.Tensor)
		if !ok {
			continue
		}
		if core.GradEnabled() && t.RequiresGrad() {
			return nil
		}
		if s := t.Storage(); s != nil {
			r.pinned[s] = true
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
			if s := v.Storage(); s != nil {
				r.live[s]++
			}
		default:
			r.off = true
		}
	}
}

// dead is value v's last use: its storage goes when no live value uses it.
func (r *releaser) dead(v Value) {
	t, ok := v.(*core.Tensor)
	if r == nil || r.off || !ok {
		return
	}
	s := t.Storage()
	if s == nil || r.pinned[s] {
		return
	}
	if r.live[s]--; r.live[s] > 0 {
		return
	}
	delete(r.live, s)
	if t.Device() == core.CPU && !t.RequiresGrad() {
		t.Release()
	}
}
