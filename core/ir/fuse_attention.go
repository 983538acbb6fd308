package ir

import (
	"slices"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// attnTransposedOp names a node that computes multi-head attention and
// writes its output [B, H, L, Ev] transposed, as contiguous [B, L, H, Ev].
const attnTransposedOp = "fused_attention_transposed"

// FuseAttentionTranspose finds attention whose only reader transposes heads
// and positions back (permute [0 2 1 3], as multi-head attention does before
// merging the heads for its output projection) and makes the two one node
// that writes each head in place. The transpose is a view, but the reshape
// that merges the heads after it must copy; written in place, the merged
// heads are a view and that copy goes. Where the device cannot, or autograd
// records the run, the original ops run. It returns how many it joined.
func (g *Graph) FuseAttentionTranspose(dev core.Device) (int, error) {
	if _, _, ok, err := passBackend[fusion.AttentionTransposer](dev); !ok {
		return 0, err
	}
	uses := g.useCounts()
	readers := g.readers()
	replace, removed := map[*Node]*Node{}, map[*Node]bool{}
	for _, a := range g.Nodes {
		if a.Op != "scaled_dot_product_attention" || a.Fused != nil || len(a.Outputs) != 1 || len(a.Outputs[0].Shape) != 4 {
			continue
		}
		heads := a.Outputs[0]
		if uses[heads] != 1 || len(readers[heads]) != 1 {
			continue
		}
		p := readers[heads][0]
		if p.Op != "permute" || !slices.Equal(p.Attrs.Ints("dims"), []int{0, 2, 1, 3}) || len(p.Outputs) != 1 {
			continue
		}
		out := p.Outputs[0]
		f := &Node{Op: attnTransposedOp, Attrs: a.Attrs, Inputs: a.Inputs, Outputs: []*Value{out}, Sub: []*Node{a, p}}
		out.Producer, out.Index = f, 0
		replace[a], removed[p] = f, true
	}
	g.rewriteNodes(replace, removed)
	return len(replace), nil
}

// runAttentionTransposed runs joined attention and transpose as one kernel
// where the device can, else the two ops it replaced.
func runAttentionTransposed(n *Node, ins []*core.Tensor, env map[*Value]*core.Tensor) error {
	if f, ok := fuserFor(ins); ok {
		if at, ok := f.(fusion.AttentionTransposer); ok {
			var mask *core.Tensor
			if len(ins) > 3 {
				mask = ins[3]
			}
			if out, err := at.AttentionTransposed(ins[0], ins[1], ins[2], mask, n.Attrs); err == nil {
				env[n.Outputs[0]] = out
				fusedRuns.Add(1)
				return nil
			}
		}
	}
	return runOriginal(n, env)
}
