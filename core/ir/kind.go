package ir

import (
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Kind says what sort of computation a node is. It is derived from the op
// registry (the op's category and flags), never stored, so a graph built by
// any front end is typed the same way. The passes use it where the kinds
// differ in what is safe (random nodes are never folded or merged; layout
// nodes are views the layout pass may drop or merge) and the printer shows
// it, so a reader sees where a graph leaves dense elementwise-and-matmul
// territory.
type Kind string

// The node kinds.
const (
	KindDense   Kind = "dense"   // elementwise, reductions, matmul, nn ops: the default
	KindLayout  Kind = "layout"  // views (reshape, permute, transpose, expand, slice): no kernel, shared storage
	KindSparse  Kind = "sparse"  // products with a CSR matrix: spmm, sddmm
	KindSegment Kind = "segment" // reductions over segment ids (segment_sum, segment_mean, segment_max)
	KindFFT     Kind = "fft"     // discrete Fourier transforms
	KindRandom  Kind = "random"  // draws from the Philox stream: a replay draws afresh
	KindSelect  Kind = "select"  // where: an elementwise choice between two values
	KindControl Kind = "control" // a counted loop over a nested body graph
	KindFused   Kind = "fused"   // elementwise ops fused into one generated kernel
)

// Kind of the node. Ops the registry does not know (nodes other passes
// introduce) count as fused when their name says so, else as dense.
func (n *Node) Kind() Kind {
	switch {
	case n.Body != nil:
		return KindControl
	case n.Fused != nil:
		return KindFused
	}
	def, ok := core.LookupOp(n.Op)
	if !ok {
		if strings.HasPrefix(n.Op, "fused") {
			return KindFused
		}
		return KindDense
	}
	return opKind(def)
}

func opKind(def *core.OpDef) Kind {
	switch {
	case def.Random:
		return KindRandom
	case def.Name == "where":
		return KindSelect
	case def.View != nil:
		return KindLayout
	case def.Category == "spectral":
		return KindFFT
	case def.Category == "sparse" && strings.Contains(def.Name, "segment"):
		return KindSegment
	case def.Category == "sparse":
		return KindSparse
	}
	return KindDense
}

// KindCounts counts g's nodes by kind, loop bodies included.
func (g *Graph) KindCounts() map[Kind]int {
	counts := map[Kind]int{}
	g.walk(func(n *Node) { counts[n.Kind()]++ })
	return counts
}

// walk calls fn on every node of g and of the loop bodies in it, outer
// nodes before their bodies.
func (g *Graph) walk(fn func(*Node)) {
	for _, n := range g.Nodes {
		fn(n)
		if n.Body != nil {
			n.Body.walk(fn)
		}
	}
}
