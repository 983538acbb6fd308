package ir

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Memory planning. Eager code drops an intermediate tensor when Go's
// garbage collector finds it, so its buffer (on WebGPU, a pooled GPU
// buffer) stays taken until then. A graph knows each value's last reader,
// so Run releases an intermediate's storage as soon as the node that reads
// it last has run, and the device's pool hands the buffer to a later node.
//
// What is never released: graph inputs, constants and outputs, and any
// storage one of them shares (views); a storage still seen by a live
// value (another view of it); and nothing at all while autograd records the
// run (a graph input or constant requires a gradient): backward reads the
// tensors the forward pass saved.

// MemoryPlan is what Run's releasing does to a graph, estimated from the
// values' shapes: the buffers freed after each node and the peak bytes held
// with and without release. A view (layout node) shares its input's buffer,
// so a buffer is freed after the last use of every view of it; a reshape
// the strides forbid counts as the copy it makes (see memlayout.go). Loop
// bodies count as their own peak, once per loop node.
type MemoryPlan struct {
	// FreeAfter[i] lists the buffers (named by the value that allocated
	// them) released once node i has run.
	FreeAfter [][]*Value
	// Allocated is the bytes of every buffer a run allocates (node
	// outputs, views excepted; loop bodies once per iteration): what it
	// holds at its end when nothing is released before the run returns.
	Allocated int64
	// Peak is the most bytes held at once when each buffer is released
	// after its last use (graph outputs stay).
	Peak  int64
	nodes []*Node
}

// Saved is the fraction of Allocated that releasing saves at the peak.
func (p *MemoryPlan) Saved() float64 {
	if p.Allocated == 0 {
		return 0
	}
	return 1 - float64(p.Peak)/float64(p.Allocated)
}

// MemoryPlan computes g's plan. It does not change g; Run follows the same
// last uses (unless KeepIntermediates is set).
func (g *Graph) MemoryPlan() *MemoryPlan {
	p := &MemoryPlan{FreeAfter: make([][]*Value, len(g.Nodes)), nodes: g.Nodes}
	root := map[*Value]*Value{} // the value whose buffer a value uses
	last := map[*Value]int{}    // root -> the last node that reads any view of it
	pinned := map[*Value]bool{}
	strides := map[*Value][]int{} // each value's layout, as far as known
	for i, n := range g.Nodes {
		for _, v := range n.Inputs {
			if r := root[v]; r != nil {
				last[r] = i
			}
		}
		for _, o := range n.Outputs {
			if in := viewSource(n, strides); in != nil {
				root[o] = root[in] // nil when in is an input or constant: never freed
			} else {
				root[o] = o
				last[o] = i
			}
		}
	}
	for _, v := range g.Outputs {
		if r := root[v]; r != nil {
			pinned[r] = true
		}
	}
	var live int64
	for i, n := range g.Nodes {
		var alloc int64
		for _, o := range n.Outputs {
			if root[o] == o {
				alloc += bufferBytes(o)
			}
		}
		live += alloc
		p.Allocated += alloc
		peak := live
		if n.Body != nil {
			body := n.Body.MemoryPlan()
			peak += body.Peak
			p.Allocated += int64(n.Attrs.Int("n")) * body.Allocated
		}
		p.Peak = max(p.Peak, peak)
		for _, o := range g.rootsFreedAt(i, root, last, pinned) {
			p.FreeAfter[i] = append(p.FreeAfter[i], o)
			live -= bufferBytes(o)
		}
	}
	return p
}

// rootsFreedAt lists, in node order, the buffers whose last reader is
// node i and that no output pins.
func (g *Graph) rootsFreedAt(i int, root map[*Value]*Value, last map[*Value]int, pinned map[*Value]bool) []*Value {
	var out []*Value
	seen := map[*Value]bool{}
	consider := func(v *Value) {
		r := root[v]
		if r == nil || seen[r] || pinned[r] || last[r] != i {
			return
		}
		seen[r] = true
		out = append(out, r)
	}
	for _, v := range g.Nodes[i].Inputs {
		consider(v)
	}
	for _, v := range g.Nodes[i].Outputs {
		consider(v)
	}
	return out
}

// viewSource is the input whose storage a layout node's output shares
// (nil when the node computes a new buffer, a reshape that copies
// included); strides follows each value's layout.
func viewSource(n *Node, strides map[*Value][]int) *Value {
	o := n.Outputs[0]
	if n.Kind() != KindLayout || len(n.Inputs) != 1 || n.Inputs[0] == nil {
		for _, o := range n.Outputs {
			strides[o] = core.ContiguousStrides(o.Shape)
		}
		return nil
	}
	in := n.Inputs[0]
	st, ok := strides[in]
	if !ok && in.Producer == nil { // an input or constant
		st = core.ContiguousStrides(in.Shape)
	}
	out, view := viewStrides(n, st)
	strides[o] = out
	if !view {
		return nil
	}
	return in
}

func bufferBytes(v *Value) int64 { return int64(v.Shape.Numel()) * int64(v.DType.Size()) }

// String prints the plan against g's nodes, for `webtensor ir show`.
func (p *MemoryPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "peak %s held with buffers released after their last use, %s allocated without (%.0f%% less)\n",
		byteSize(p.Peak), byteSize(p.Allocated), 100*p.Saved())
	for i, vs := range p.FreeAfter {
		if len(vs) == 0 {
			continue
		}
		names := make([]string, len(vs))
		for j, v := range vs {
			names[j] = fmt.Sprintf("%%%d (%s)", v.ID, byteSize(bufferBytes(v)))
		}
		n := p.nodes[i]
		fmt.Fprintf(&b, "after node %d (%s -> %%%d): free %s\n", i, n.Op, n.Outputs[0].ID, strings.Join(names, ", "))
	}
	return b.String()
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// lastUses lists, per node, the values whose last reader it is (or that
// it made and nobody reads): what Run drops after the node. Graph outputs,
// inputs and constants are never listed.
func (g *Graph) lastUses() [][]*Value {
	last := map[*Value]int{}
	for i, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil {
				last[v] = i
			}
		}
		for _, o := range n.Outputs {
			if _, ok := last[o]; !ok {
				last[o] = i
			}
		}
	}
	for _, v := range g.Outputs {
		delete(last, v)
	}
	drops := make([][]*Value, len(g.Nodes))
	for _, n := range g.Nodes { // in node order, so a run's releases are deterministic
		for _, v := range n.Outputs {
			if j, ok := last[v]; ok {
				drops[j] = append(drops[j], v)
			}
		}
	}
	return drops
}

// StorageReleaser releases storages at run time. Values map to tensors and
// tensors to storages; a storage is released when the last live tensor
// over it is dropped, unless it is pinned (an input, constant or output
// sees it). It releases nothing when made off. Run uses one, and so does
// the ONNX importer's executor.
type StorageReleaser struct {
	on     bool
	refs   map[core.Storage]int
	pinned map[core.Storage]bool
}

// NewStorageReleaser makes a releaser; off (on false), it only counts.
func NewStorageReleaser(on bool) *StorageReleaser {
	return &StorageReleaser{on: on, refs: map[core.Storage]int{}, pinned: map[core.Storage]bool{}}
}

// storageOf is t's storage when it can be tracked (a comparable handle).
func storageOf(t *core.Tensor) (core.Storage, bool) {
	if t == nil {
		return nil, false
	}
	s := t.Storage()
	if s == nil || !reflect.TypeOf(s).Comparable() {
		return nil, false
	}
	return s, true
}

// Pin keeps t's storage for good (an input, a constant, an output).
func (r *StorageReleaser) Pin(t *core.Tensor) {
	if s, ok := storageOf(t); ok {
		r.pinned[s] = true
	}
}

// Hold counts one more live tensor over t's storage.
func (r *StorageReleaser) Hold(t *core.Tensor) {
	if s, ok := storageOf(t); ok {
		r.refs[s]++
	}
}

// Drop counts one live tensor over t's storage fewer, and releases the
// storage when none is left and it is not pinned.
func (r *StorageReleaser) Drop(t *core.Tensor) {
	s, ok := storageOf(t)
	if !ok {
		return
	}
	r.refs[s]--
	if r.refs[s] > 0 || r.pinned[s] || !r.on {
		return
	}
	delete(r.refs, s)
	t.Release()
}

// recordsGrad reports whether autograd records a run of g on inputs: then
// nothing may be released, since backward reads saved tensors.
func (g *Graph) recordsGrad(inputs []*core.Tensor) bool {
	if !core.GradEnabled() {
		return false
	}
	for _, t := range inputs {
		if t.RequiresGrad() {
			return true
		}
	}
	grad := false
	g.forConsts(func(t *core.Tensor) { grad = grad || t.RequiresGrad() })
	return grad
}

// forConsts calls fn on every constant g and its loop bodies read or return.
func (g *Graph) forConsts(fn func(*core.Tensor)) {
	for _, v := range g.Outputs {
		if v.Const != nil {
			fn(v.Const)
		}
	}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			if v != nil && v.Const != nil {
				fn(v.Const)
			}
		}
		if n.Body != nil {
			n.Body.forConsts(fn)
		}
	}
}

// releaseCarried releases the carried tensors of a loop iteration once the
// next has used them, unless the loop's inputs, the new carried values or
// the body's constants share their storage.
func releaseCarried(old, loopInputs, next []*core.Tensor, body *Graph) {
	r := NewStorageReleaser(true)
	for _, t := range loopInputs {
		r.Pin(t)
	}
	for _, t := range next {
		r.Pin(t)
		if t.RequiresGrad() {
			return
		}
	}
	body.forConsts(r.Pin)
	for _, t := range old { // a carried value may appear twice, or be a view of another
		r.Hold(t)
	}
	for _, t := range old {
		r.Drop(t)
	}
}
