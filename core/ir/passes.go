package ir

import (
	"fmt"
	"sort"
	"strings"

	"github.com/webtensor/webtensor/core"
)

// PassStats counts what Optimize's passes changed.
type PassStats struct {
	Folded int // nodes computed once into constants
	Layout int // layout nodes removed or merged (SimplifyLayout)
	Slices int // sums of slice gradients made one concat (CombineSliceGrads)
	Merged int // duplicate nodes merged
	Dead   int // nodes whose outputs nothing used
}

// Optimize applies the passes in order - constant folding, layout
// simplification, slice gradients combined, common subexpression
// elimination, dead code elimination,
// each also inside loop bodies - and returns what folding, merging and dead
// code elimination removed (OptimizeStats has every count).
func (g *Graph) Optimize() (folded, merged, dead int, err error) {
	s, err := g.OptimizeStats()
	return s.Folded, s.Merged, s.Dead, err
}

// OptimizeStats is Optimize returning what every pass did.
func (g *Graph) OptimizeStats() (PassStats, error) {
	var s PassStats
	var err error
	if s.Folded, err = g.FoldConstants(); err != nil {
		return s, err
	}
	s.Layout = g.SimplifyLayout()
	s.Slices = g.CombineSliceGrads()
	s.Layout += g.ConcatBeforeReshape()
	s.Merged = g.EliminateCommon()
	s.Dead = g.EliminateDead()
	return s, nil
}

// maxFold bounds the elements a folded constant may have: folding trades
// work per run for memory held by the graph.
const maxFold = 1 << 20

// random reports whether a node draws random numbers (a loop does when its
// body does): it is never folded or merged, so each run draws afresh. An op
// the registry does not know counts as random, to be safe.
func random(n *Node) bool {
	if n.Body != nil {
		for _, b := range n.Body.Nodes {
			if random(b) {
				return true
			}
		}
		return false
	}
	if n.Fused != nil {
		return false
	}
	def, ok := core.LookupOp(n.Op)
	return !ok || def.Random
}

// FoldConstants computes, once, every node whose inputs are all constants
// (and that draws no random numbers), making its outputs constants. Inside
// a loop, the outer values a body reads that are constants become the
// body's constants first, so what depends only on them folds too.
func (g *Graph) FoldConstants() (int, error) {
	kept := g.Nodes[:0]
	folded := 0
	for _, n := range g.Nodes {
		if n.Body != nil {
			inlineConstInputs(n)
			f, err := n.Body.FoldConstants()
			folded += f
			if err != nil {
				return folded, err
			}
			kept = append(kept, n)
			continue
		}
		foldable := n.Fused == nil && !random(n)
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
		// A folded view (a linear layer's transposed weight) is stored dense:
		// kernels read contiguous operands fastest - the vec4 matmul needs
		// contiguous rows - and the copy is made once, not per run.
		for i, t := range outs {
			if t != nil && !t.IsContiguous() {
				dense := core.Call1("contiguous", nil, t)
				if err := dense.Err(); err != nil {
					return folded, fmt.Errorf("ir: folding %s: %w", n.Op, err)
				}
				outs[i] = dense
			}
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
// attributes on the same values (random ops excepted: two draws differ),
// in g and in its loop bodies.
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
		if n.Body != nil {
			merged += n.Body.EliminateCommon()
		}
		if random(n) {
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
	if n.Also != nil {
		b.WriteString(";" + exprString(n.Also))
	}
	if n.Body != nil {
		fmt.Fprintf(&b, "@%p", n.Body) // two loops merge only if they are one
	}
	for _, v := range n.Inputs {
		if v == nil {
			b.WriteString("|_")
		} else {
			fmt.Fprintf(&b, "|%d", v.ID)
		}
	}
	b.WriteString(attrKey(n.Attrs))
	return b.String()
}

// attrKey is a canonical string of attributes (sorted by name).
func attrKey(a core.Attrs) string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "|%s=%#v", k, a[k])
	}
	return b.String()
}

// EliminateDead removes the nodes none of whose outputs reach the graph's
// outputs, in g and in its loop bodies (where it also drops the outer
// values a body no longer reads).
func (g *Graph) EliminateDead() int {
	live := map[*Value]bool{}
	for _, v := range g.Outputs {
		live[v] = true
	}
	keep := make([]bool, len(g.Nodes))
	dead := 0
	for i := len(g.Nodes) - 1; i >= 0; i-- {
		n := g.Nodes[i]
		for _, o := range n.Outputs {
			if live[o] {
				keep[i] = true
			}
		}
		if !keep[i] {
			continue
		}
		if n.Body != nil {
			dead += n.Body.EliminateDead()
			pruneOuterInputs(n)
		}
		for _, v := range n.Inputs {
			if v != nil {
				live[v] = true
			}
		}
	}
	kept := g.Nodes[:0]
	for i, n := range g.Nodes {
		if keep[i] {
			kept = append(kept, n)
		}
	}
	dead += len(g.Nodes) - len(kept)
	g.Nodes = kept
	return dead
}
