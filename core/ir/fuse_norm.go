package ir

import "github.com/webtensor/webtensor/core"

// FuseNormActivation makes a group_norm whose only reader is a silu one
// group_norm node with activation "silu": every backend's group_norm kernel
// applies SiLU in the pass that writes its result, so the normalised tensor
// is never stored and read back (a diffusion ResNet block writes
// GroupNorm+SiLU twice). The joined node is a registry op with its own
// gradient, so it runs and records like any other. It returns how many it
// joined. dev is unused: every backend implements the attribute.
func (g *Graph) FuseNormActivation(core.Device) (int, error) {
	uses := g.useCounts()
	readers := g.readers()
	removed := map[*Node]bool{}
	for _, n := range g.Nodes {
		if n.Op != "group_norm" || n.Fused != nil || len(n.Outputs) != 1 || n.Attrs.String("activation") == "silu" {
			continue
		}
		y := n.Outputs[0]
		if uses[y] != 1 || len(readers[y]) != 1 {
			continue
		}
		s := readers[y][0]
		if s.Op != "silu" || s.Fused != nil || len(s.Outputs) != 1 || removed[s] {
			continue
		}
		attrs := n.Attrs.Clone()
		if attrs == nil {
			attrs = core.Attrs{}
		}
		attrs["activation"] = "silu"
		n.Attrs = attrs
		out := s.Outputs[0]
		n.Outputs[0] = out
		out.Producer, out.Index = n, 0
		removed[s] = true
	}
	g.rewriteNodes(nil, removed)
	return len(removed), nil
}
