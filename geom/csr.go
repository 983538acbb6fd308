package geom

// CSR is a compressed adjacency: the neighbours of node v are
// Nbr[Ptr[v]:Ptr[v+1]], and Edge[k] is the edge id (position in the
// graph's edge list) of entry k. Kept on the host: samplers walk it.
type CSR struct {
	Ptr  []int64
	Nbr  []int64
	Edge []int64
}

// Degree is the number of neighbours of v.
func (c *CSR) Degree(v int64) int64 { return c.Ptr[v+1] - c.Ptr[v] }

// buildCSR groups the edges by key (their destination for incoming
// adjacency, source for outgoing), in edge order within a node, so the
// result is deterministic.
func buildCSR(n int, key, other []int64) *CSR {
	c := &CSR{Ptr: make([]int64, n+1), Nbr: make([]int64, len(key)), Edge: make([]int64, len(key))}
	for _, v := range key {
		c.Ptr[v+1]++
	}
	for v := range n {
		c.Ptr[v+1] += c.Ptr[v]
	}
	next := append([]int64(nil), c.Ptr[:n]...)
	for e, v := range key {
		at := next[v]
		next[v]++
		c.Nbr[at], c.Edge[at] = other[e], int64(e)
	}
	return c
}

// In is the incoming adjacency (for each node, the sources of the edges
// into it: the nodes it aggregates from), built once.
func (g *Graph) In() *CSR {
	if g.in == nil {
		g.in = buildCSR(g.NumNodes, g.dst, g.src)
	}
	return g.in
}

// Out is the outgoing adjacency (for each node, the destinations of its edges), built once.
func (g *Graph) Out() *CSR {
	if g.out == nil {
		g.out = buildCSR(g.NumNodes, g.src, g.dst)
	}
	return g.out
}
