package ir

import (
	"fmt"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Optimize applies the passes in order - constant folding, common
// subexpression elimination, dead code elimination - and returns what each
// removed.
func (g *Graph) Optimize() (folded, merged, dead int, err error) {
	if folded, err = g.FoldConstants(); err != nil {
		return
	}
	merged = g.EliminateCommon()
	dead = g.EliminateDead()
	return
}

// maxFold bounds the elements a folded constant may have: folding trades
// work per run for memory held by the graph.
const maxFold = 1 << 20

func random(op string) bool {
	def, ok := core.LookupOp(op)
	return !ok || def.Random
}

// FoldConstants computes, once, every node whose inputs are all constants
// (and that draws no random numbers), making its outputs constants.
func (g *Graph) FoldConstants() (int, error) {
	kept := g.Nodes[:0]
	folded := 0
	for _, n := range g.Nodes {
		foldable := !random(n.Op)
		ins := make([]*core.Tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			if v == nil {
				continue
			}
			if v.Const == nil {
				foldable = false
				break
			}
			ins[i] = v.Const
		}
		for _, o := range n.Outputs {
			if o.Shape.Numel() > maxFold {
				foldable = false
			}
		}
		if !foldable {
			kept = append(kept, n)
			continue
		}
		outs, err := core.Call(n.Op, ins, n.Attrs)
		if err != nil {
			return folded, fmt.Errorf("ir: folding %s: %w", n.Op, err)
		}
		for i, o := range n.Outputs {
			o.Const, o.Producer = outs[i], nil
		}
		folded++
	}
	g.Nodes = kept
	return folded, nil
}

// EliminateCommon merges nodes that compute the same op with the same
// attributes on the same values (random ops excepted: two draws differ).
func (g *Graph) EliminateCommon() int {
	seen := map[string]*Node{}
	repl := map[*Value]*Value{}
	kept := g.Nodes[:0]
	merged := 0
	for _, n := range g.Nodes {
		for i, v := range n.Inputs {
			if r, ok := repl[v]; ok {
				n.Inputs[i] = r
			}
		}
		if random(n.Op) {
			kept = append(kept, n)
			continue
		}
		key := nodeKey(n)
		if prev, ok := seen[key]; ok {
			for i, o := range n.Outputs {
				repl[o] = prev.Outputs[i]
			}
			merged++
			continue
		}
		seen[key] = n
		kept = append(kept, n)
	}
	g.Nodes = kept
	for i, v := range g.Outputs {
		if r, ok := repl[v]; ok {
			g.Outputs[i] = r
		}
	}
	return merged
}

func nodeKey(n *Node) string {
	var b strings.Builder
	b.WriteString(n.Op)
	if n.Fused != nil {
		b.WriteString(exprString(n.Fused))
	}
	for _, v := range n.Inputs {
		if v == nil {
			b.WriteString("|_")
		} else {
			fmt.Fprintf(&b, "|%d", v.ID)
		}
	}
	keys := make([]string, 0, len(n.Attrs))
	for k := range n.Attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "|%s=%#v", k, n.Attrs[k])
	}
	return b.String()
}

// EliminateDead removes the nodes none of whose outputs reach the graph's
// outputs.
func (g *Graph) EliminateDead() int {
	live := map[*Value]bool{}
	for _, v := range g.Outputs {
		live[v] = true
	}
	keep := make([]bool, len(g.Nodes))
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		for _, o := range n.Outputs {
			if live[o] {
				keep[i] = true
			}
		}
		if keep[i] {
			for _, v := range n.Inputs {
				if v != nil {
					live[v] = true
				}
			}
		}
	}
	kept := g.Nodes[:0]
	for i, n := range g.Nodes {
		if keep[i] {
			kept = append(kept, n)
		}
	}
	dead := len(g.Nodes) - len(kept)
	g.Nodes = kept
	return dead
}
