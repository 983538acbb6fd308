package ir

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// maxFusedOps bounds a tree's ops: a tree is one expression in the
// generated kernel, and a value used twice inside it is computed twice, so
// trees stay small. How many leaves a tree may read is the device's
// (kernelLimits).
const maxFusedOps = 24

// kernelLimits are what one kernel of a device can bind and index
// (core.Capabilities; 0: no limit). The passes size fused nodes by them:
// a node the backend cannot bind would be refused at run time and run its
// original ops, unfused.
type kernelLimits struct{ buffers, rank int }

// passBackend is dev's backend and whether it implements F, the fusion
// interface a pass needs: ok is false on an error and where it does not,
// and a pass then leaves the graph as it is (returning err).
func passBackend[F any](dev core.Device) (b core.Backend, f F, ok bool, err error) {
	if b, err = core.BackendFor(dev); err != nil {
		return nil, f, false, err
	}
	f, ok = b.(F)
	return b, f, ok, nil
}

func limitsOf(b core.Backend) kernelLimits {
	c := b.Capabilities()
	return kernelLimits{buffers: c.MaxKernelBuffers, rank: c.MaxKernelRank}
}

// room is how many more tensors fit in a kernel that binds bound others.
func (l kernelLimits) room(bound int) int {
	if l.buffers <= 0 {
		return math.MaxInt
	}
	return l.buffers - bound
}

// rankFits says whether a kernel can index a result of rank dims.
func (l kernelLimits) rankFits(rank int) bool { return l.rank <= 0 || rank <= l.rank }

// operandSlots is how many operands n's op binds: every input its op
// declares, an absent optional one included, since kernels commonly bind a
// stand-in for it (WebGPU's convolution binds a third operand either way);
// reserving the slot never makes a node the device cannot bind.
func operandSlots(n *Node) int {
	k := len(n.Inputs)
	if def, ok := core.LookupOp(n.Op); ok {
		k = max(k, len(def.Inputs))
	}
	return k
}

// FuseElementwise replaces trees of elementwise ops - each intermediate
// used only by the next op of the tree - with fused nodes that dev's backend
// runs as one kernel (fusion.MapFuser). It returns how many ops went into
// fused nodes; a backend that cannot fuse leaves the graph as it is.
func (g *Graph) FuseElementwise(dev core.Device) (int, error) {
	b, fuser, ok, err := passBackend[fusion.MapFuser](dev)
	if !ok {
		return 0, err
	}
	// A tree's leaves share its kernel with the output and, in the
	// backward kernels of a run that records autograd, with the upstream
	// gradient (fuseWithGrad).
	maxLeaves := limitsOf(b).room(2)
	uses := g.useCounts()
	fusable := func(n *Node) bool {
		if n.Fused != nil || len(n.Outputs) != 1 || !fuser.Fusable(n.Op, n.Attrs, n.Outputs[0].DType) {
			return false
		}
		for i, v := range n.Inputs {
			// where's condition may be a bool: a comparison in the same tree
			// (a bool leaf is refused below).
			if v == nil || v.DType != core.F32 && !(n.Op == "where" && i == 0 && v.DType == core.Bool) {
				return false
			}
		}
		return true
	}
	absorbed := map[*Node]bool{}
	replace := map[*Node]*Node{}
	fusedOps := 0
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		root := g.Nodes[i]
		if absorbed[root] || !fusable(root) || root.Outputs[0].DType != core.F32 {
			continue
		}
		t := &treeBuilder{leafOf: map[*Value]int{}, fusable: fusable, uses: uses, absorbed: absorbed}
		expr := t.build(root)
		if t.ops < 2 || len(t.leaves) > maxLeaves || !allF32(t.leaves) {
			for _, n := range t.sub {
				delete(absorbed, n)
			}
			continue
		}
		// Sub in execution order: the tree was walked from the root.
		sub := make([]*Node, 0, len(t.sub))
		for _, n := range g.Nodes[:i+1] {
			if t.in[n] {
				sub = append(sub, n)
			}
		}
		replace[root] = &Node{Op: "fused", Inputs: t.leaves, Outputs: root.Outputs, Fused: expr, Sub: sub}
		fusedOps += t.ops
	}
	g.rewriteNodes(replace, absorbed)
	return fusedOps, nil
}

// allF32 says whether every value is f32: a fused kernel's operands are.
func allF32(vs []*Value) bool {
	for _, v := range vs {
		if v.DType != core.F32 {
			return false
		}
	}
	return true
}

// rewriteNodes puts each fused node in place of the node it replaces and
// drops the nodes folded into one, keeping execution order: the last step
// of every fusion pass.
func (g *Graph) rewriteNodes(replace map[*Node]*Node, removed map[*Node]bool) {
	kept := g.Nodes[:0]
	for _, n := range g.Nodes {
		if f, ok := replace[n]; ok {
			kept = append(kept, f)
		} else if !removed[n] {
			kept = append(kept, n)
		}
	}
	g.Nodes = kept
}

type treeBuilder struct {
	leaves   []*Value
	leafOf   map[*Value]int
	sub      []*Node
	in       map[*Node]bool
	ops      int
	fusable  func(*Node) bool
	uses     map[*Value]int
	absorbed map[*Node]bool
}

func (t *treeBuilder) build(n *Node) *fusion.Expr {
	if t.in == nil {
		t.in = map[*Node]bool{}
	}
	t.ops++
	t.sub = append(t.sub, n)
	t.in[n] = true
	if t.ops > 1 {
		t.absorbed[n] = true
	}
	e := &fusion.Expr{Op: n.Op, Attrs: n.Attrs}
	for _, v := range n.Inputs {
		p := v.Producer
		if p != nil && t.uses[v] == 1 && !t.absorbed[p] && t.fusable(p) && t.ops < maxFusedOps {
			e.Args = append(e.Args, t.build(p))
			continue
		}
		idx, ok := t.leafOf[v]
		if !ok {
			idx = len(t.leaves)
			t.leafOf[v] = idx
			t.leaves = append(t.leaves, v)
		}
		e.Args = append(e.Args, &fusion.Expr{Arg: idx})
	}
	return e
}

// fusedRuns and fallbackRuns count fused nodes run as one kernel and those
// that ran their original ops instead (gradients recorded, a device that
// cannot fuse, or a kernel the backend refused).
var fusedRuns, fallbackRuns atomic.Int64

// FusionCounts reports how many fused nodes ran as one kernel and how many
// fell back to their original ops, since the process started.
func FusionCounts() (fused, fellBack int64) { return fusedRuns.Load(), fallbackRuns.Load() }

// runFused computes a fused node as one kernel where its device fuses: with
// autograd recording, the elementwise tree runs through fuseWithGrad (one
// kernel forward, one per needed gradient backward) and a producer or
// reduction it was folded into runs as its own recorded op. Elsewhere (a
// device that cannot fuse, a kernel the backend refused) it runs its
// original nodes.
func runFused(n *Node, ins []*core.Tensor, env map[*Value]*core.Tensor) error {
	out := n.Outputs[0]
	var fused *core.Tensor
	var ok bool
	var err error
	switch grad := recordsGrad(ins); {
	case n.Also != nil && grad:
		// A pair of stores records no autograd: the original ops run.
	case n.Also != nil:
		var second *core.Tensor
		if fused, second, ok = tryFuseEpiloguePair(n, ins); ok {
			env[n.Outputs[1]] = second
		}
	case grad:
		fused, ok, err = runFusedWithGrad(n, ins, env)
		if err != nil {
			return err
		}
	case strings.HasPrefix(n.Op, reducePrefix):
		fused, ok = tryFuseReduce(n, ins)
	case n.Op != "fused":
		fused, ok = tryFuseEpilogue(n, ins)
	default:
		fused, ok = tryFuse(n, ins, out)
	}
	if ok {
		fusedRuns.Add(1)
		env[out] = fused
		return nil
	}
	return runOriginal(n, env)
}

// runOriginal runs the ops a fused node replaced, one by one: where the
// device cannot fuse them, or autograd records the run.
func runOriginal(n *Node, env map[*Value]*core.Tensor) error {
	fallbackRuns.Add(1)
	for _, s := range n.Sub {
		if err := execNode(s, env); err != nil {
			return fmt.Errorf("%w (in a fused node)", err)
		}
	}
	return nil
}

// readers lists, for each value, the nodes of g that read it.
func (g *Graph) readers() map[*Value][]*Node {
	r := map[*Value][]*Node{}
	for _, n := range g.Nodes {
		for _, v := range n.Inputs {
			r[v] = append(r[v], n)
		}
	}
	return r
}

// recordsGrad says whether autograd records work on ins.
func recordsGrad(ins []*core.Tensor) bool {
	if !core.GradEnabled() {
		return false
	}
	for _, t := range ins {
		if t != nil && t.RequiresGrad() {
			return true
		}
	}
	return false
}

// runFusedWithGrad is runFused's recording path: the folded producer (an
// epilogue's matmul or spmm) or reduction runs as its recorded op around the
// tree, which runs through fuseWithGrad.
func runFusedWithGrad(n *Node, ins []*core.Tensor, env map[*Value]*core.Tensor) (*core.Tensor, bool, error) {
	switch {
	case n.Op == "fused":
		t, ok := fuseWithGrad(n.Fused, ins, n.Outputs[0].Shape)
		return t, ok, nil
	case strings.HasPrefix(n.Op, reducePrefix):
		r := n.Sub[len(n.Sub)-1]
		t, ok := fuseWithGrad(n.Fused, ins, r.Inputs[0].Shape)
		if !ok {
			return nil, false, nil
		}
		res, err := core.Call(r.Op, []*core.Tensor{t}, r.Attrs)
		if err != nil {
			return nil, false, fmt.Errorf("ir: Run: %s: %w", r.Op, err)
		}
		return res[0], true, nil
	}
	p := n.Sub[0]
	k := len(p.Inputs)
	if _, ok := deviceFuser(ins); !ok {
		return nil, false, nil
	}
	res, err := core.Call(p.Op, ins[:k], p.Attrs)
	if err != nil {
		return nil, false, fmt.Errorf("ir: Run: %s: %w", p.Op, err)
	}
	t, ok := fuseWithGrad(n.Fused, append([]*core.Tensor{res[0]}, ins[k:]...), n.Outputs[0].Shape)
	return t, ok, nil
}

func tryFuse(n *Node, ins []*core.Tensor, out *Value) (*core.Tensor, bool) {
	fuser, ok := fuserFor(ins)
	if !ok {
		return nil, false
	}
	t, err := fuser.FuseMap(n.Fused, ins, out.Shape, out.DType)
	return t, err == nil
}

// fuserFor is the fusing backend of ins when they share one device and no
// gradient is recorded through any of them.
func fuserFor(ins []*core.Tensor) (fusion.MapFuser, bool) {
	if recordsGrad(ins) {
		return nil, false
	}
	return deviceFuser(ins)
}

// deviceFuser is the fusing backend of ins when they share one device.
func deviceFuser(ins []*core.Tensor) (fusion.MapFuser, bool) {
	if len(ins) == 0 {
		return nil, false
	}
	var dev core.Device
	found := false
	for _, t := range ins {
		if t == nil {
			continue // an absent optional input
		}
		if !found {
			dev, found = t.Device(), true
		} else if t.Device() != dev {
			return nil, false
		}
	}
	if !found {
		return nil, false
	}
	b, err := core.BackendFor(dev)
	if err != nil {
		return nil, false
	}
	fuser, ok := b.(fusion.MapFuser)
	return fuser, ok
}
