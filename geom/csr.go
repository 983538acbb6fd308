package geom

import "github.com/webtensor/webtensor/core"

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
		g.out = buildCSR(g.NumSrcNodes(), g.src, g.dst)
	}
	return g.out
}

// csrTensors is the incoming adjacency on the graph's device, for spmm:
// row v holds the edges into v; perm[k] is the edge id of entry k (to put
// per-edge values in CSR order). Made once per graph.
type csrTensors struct {
	indptr, indices, perm *core.Tensor
}

func (g *Graph) inCSR() (*csrTensors, error) {
	if g.inT != nil {
		return g.inT, nil
	}
	c := g.In()
	dev := g.Device()
	t := &csrTensors{
		indptr:  core.FromSlice(c.Ptr, core.Shape{len(c.Ptr)}, dev),
		indices: core.FromSlice(c.Nbr, core.Shape{len(c.Nbr)}, dev),
		perm:    core.FromSlice(c.Edge, core.Shape{len(c.Edge)}, dev),
	}
	if err := firstErr(t.indptr, t.indices, t.perm); err != nil {
		return nil, err
	}
	g.inT = t
	return t, nil
}

// Propagate is out[i] = sum over edges e = (j -> i) of w[e] * x[j]: message
// passing with per-edge scalar weights as one sparse-dense product, so no
// [E, F] tensor of messages is ever made (the memory of a layer is its
// input and output). w nil means every edge weighs 1. x is [N, F].
func Propagate(g *Graph, x, w *core.Tensor) *core.Tensor {
	c, err := g.inCSR()
	if err != nil {
		return core.ErrTensor(err)
	}
	var vals *core.Tensor
	if w == nil {
		vals = g.memoize("ones-"+x.DType().String(), func() *core.Tensor {
			return core.Ones(core.Shape{g.NumEdges()}, x.DType(), x.Device())
		})
	} else {
		vals = Gather(castTo(w, x.DType()), c.perm)
	}
	return spmm(c, vals, x)
}

func spmm(c *csrTensors, vals, x *core.Tensor) *core.Tensor {
	return core.Call1("spmm", nil, c.indptr, c.indices, vals, x)
}

// propagateConstBias is Propagate with edge weights that depend on the
// graph only (GCN's normalisation, the mean's 1/degree: made by build once,
// kept in CSR order), plus bias [F] (nil: none) added to every row.
func propagateConstBias(g *Graph, x, bias *core.Tensor, key string, build func() *core.Tensor) *core.Tensor {
	c, err := g.inCSR()
	if err != nil {
		return core.ErrTensor(err)
	}
	vals := constWeights(g, c, x.DType(), key, build)
	if bias == nil {
		return spmm(c, vals, x)
	}
	if out := fusedSpmm(x, []*core.Tensor{vals, bias}, func(f spmmFuser) (*core.Tensor, bool, error) {
		return f.SpmmBias(c.indptr, c.indices, vals, x, bias)
	}); out != nil {
		return out
	}
	prod := spmm(c, vals, x)
	return addTerms(prod, bias, prod)
}

// constWeights is the per-edge weights build makes, in dtype and CSR order,
// made once per graph.
func constWeights(g *Graph, c *csrTensors, dt core.DType, key string, build func() *core.Tensor) *core.Tensor {
	return g.memoize("csr-"+key+"-"+dt.String(), func() *core.Tensor {
		return Gather(castTo(build(), dt), c.perm)
	})
}

// convTerms is a layer's output A x wᵀ + bias + root wRootᵀ: the aggregate
// of x over the edges through w [out, in], a bias [out] (nil: none) and a
// root term (nil: none; SAGE's lin_r of each node's own features).
type convTerms struct {
	x, w, bias, root, wRoot *core.Tensor
}

// propagateConstLinear is t's output with the aggregate taken as in
// propagateConstBias.
func propagateConstLinear(g *Graph, t convTerms, key string, build func() *core.Tensor) *core.Tensor {
	c, err := g.inCSR()
	if err != nil {
		return core.ErrTensor(err)
	}
	vals := constWeights(g, c, t.x.DType(), key, build)
	if out := fusedSpmm(t.x, []*core.Tensor{vals, t.w, t.bias, t.root, t.wRoot}, func(f spmmFuser) (*core.Tensor, bool, error) {
		return f.SpmmLinear(c.indptr, c.indices, vals, t.x, t.w, t.bias, t.root, t.wRoot)
	}); out != nil {
		return out
	}
	agg := spmm(c, vals, t.x)
	out := op("matmul", nil, agg, op("transpose", nil, t.w))
	release(agg)
	if t.bias != nil {
		out = addTerms(out, t.bias, out)
	}
	if t.root != nil {
		r := op("matmul", nil, t.root, op("transpose", nil, t.wRoot))
		out = addTerms(out, r, out, r)
	}
	return out
}

// spmmFuser is a backend with fused forms of a graph convolution (the CPU
// backend's): SpmmBias adds a bias row in spmm's store loop, SpmmLinear
// puts the product's rows through a linear map a block at a time. A
// layer's output is then its only [N, F] tensor.
type spmmFuser interface {
	SpmmBias(indptr, indices, values, dense, bias *core.Tensor) (out *core.Tensor, ok bool, err error)
	SpmmLinear(indptr, indices, values, x, w, bias, root, wRoot *core.Tensor) (out *core.Tensor, ok bool, err error)
}

// fusedSpmm runs call on x's backend if it has the fused forms, or returns
// nil where that is not taken: the fused calls record no gradient and no
// tracer sees them, so they run only when neither is wanted (x and the
// other operands need no gradient).
func fusedSpmm(x *core.Tensor, others []*core.Tensor, call func(spmmFuser) (*core.Tensor, bool, error)) *core.Tensor {
	if core.Tracing() {
		return nil
	}
	if core.GradEnabled() {
		for _, t := range append(others, x) {
			if t != nil && t.RequiresGrad() {
				return nil
			}
		}
	}
	f, ok := x.Backend().(spmmFuser)
	if !ok {
		return nil
	}
	out, ok, err := call(f)
	switch {
	case err != nil:
		return core.ErrTensor(err)
	case !ok:
		return nil
	}
	return out
}

// release frees intermediate tensors a layer made once they are used up,
// where no gradient is recorded (autograd would keep them for backward) and
// no tracer watches (a capture may hold them). Inference then holds one
// layer's tensors at a time rather than leaving the rest to the GC.
func release(ts ...*core.Tensor) {
	if core.GradEnabled() || core.Tracing() {
		return
	}
	for _, t := range ts {
		t.Release()
	}
}
