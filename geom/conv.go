package geom

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// Options for the layers.
type Options struct {
	DType  core.DType  // default f32
	Device core.Device // default: the default device
}

func (o Options) dtype() core.DType {
	if o.DType == core.Invalid {
		return core.F32
	}
	return o.DType
}

func (o Options) devOpt() []nn.Option {
	opts := []nn.Option{nn.WithDType(o.dtype())}
	if o.Device.Kind != "" {
		opts = append(opts, nn.WithDevice(o.Device))
	}
	return opts
}

func (o Options) devices() []core.Device {
	if o.Device.Kind == "" {
		return nil
	}
	return []core.Device{o.Device}
}

// param makes a parameter of shape filled by init (glorot or zeros).
func param(shape core.Shape, glorot bool, o Options) (*nn.Parameter, error) {
	p, err := nn.NewParameter(core.Zeros(shape, o.dtype(), o.devices()...))
	if err != nil {
		return nil, err
	}
	if glorot {
		if err := nn.XavierUniform(p, 1); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func op(name string, a core.Attrs, in ...*core.Tensor) *core.Tensor {
	return core.Call1(name, a, in...)
}

// linearNoBias is x W^T.
func linearNoBias(x *core.Tensor, w *nn.Parameter) *core.Tensor {
	return op("matmul", nil, x, op("transpose", nil, w.Tensor()))
}

// GCNConv is PyG's GCNConv (Kipf and Welling): x' = D^-1/2 (A + I) D^-1/2 X W + b,
// degrees counted at the destination with the edge weights, self loops of
// weight 1 added. State: lin.weight (Out, In), bias (Out).
type GCNConv struct {
	nn.Base
	In, Out   int
	LinWeight *nn.Parameter
	Bias      *nn.Parameter
}

// NewGCNConv makes a GCNConv with PyG's initialisation (glorot weight, zero bias).
func NewGCNConv(in, out int, o Options) (*GCNConv, error) {
	w, err := param(core.Shape{out, in}, true, o)
	if err != nil {
		return nil, fmt.Errorf("geom: GCNConv: %w", err)
	}
	b, err := param(core.Shape{out}, false, o)
	if err != nil {
		return nil, fmt.Errorf("geom: GCNConv: %w", err)
	}
	c := &GCNConv{In: in, Out: out, LinWeight: w, Bias: b}
	lin := &weightOnly{W: w}
	if err := lin.RegisterParameter("weight", w); err != nil {
		return nil, err
	}
	if err := c.RegisterModule("lin", lin); err != nil {
		return nil, err
	}
	return c, c.RegisterParameter("bias", b)
}

// weightOnly is a bias-free linear map's state, so names come out as PyG's "lin.weight".
type weightOnly struct {
	nn.Base
	W *nn.Parameter
}

// Forward maps node features [N, In] to [N, Out] over g.
func (c *GCNConv) Forward(x *core.Tensor, g *Graph) *core.Tensor {
	if err := checkNodes(x, g, "GCNConv"); err != nil {
		return core.ErrTensor(err)
	}
	loops, err := g.WithSelfLoops(1)
	if err != nil {
		return core.ErrTensor(err)
	}
	norm := func(dt core.DType) func() *core.Tensor {
		return func() *core.Tensor { return gcnNorm(loops, dt) }
	}
	if aggregateFirst(x, c.LinWeight, c.In, c.Out) {
		return propagateConstLinear(loops, convTerms{x: x, w: c.LinWeight.Tensor(), bias: c.Bias.Tensor()}, "gcn-norm", norm(x.DType()))
	}
	h := linearNoBias(x, c.LinWeight)
	out := propagateConstBias(loops, h, c.Bias.Tensor(), "gcn-norm", norm(h.DType()))
	release(h)
	return out
}

// aggregateFirst says whether a layer of in -> out features should
// aggregate x over the edges before its linear map w, (A x) W rather than
// A (x W): the same product in another order, the one with the cheaper
// sparse products. Those cost edges x width, forward and - where x or w
// needs a gradient - backward too (w's gradient needs A^T of the output's
// gradient when the map comes first; x's needs it either way). So the
// narrower side goes through the sparse product, except that a layer whose
// input needs no gradient (the first: x is the data) while w does
// aggregates first unless that is twice as wide. On a tie: in training
// the map first (PyG's order); without gradients the aggregation, whose
// rows can then go through the map and take the bias block by block
// (propagateConstLinear) with no [N, F] intermediate.
func aggregateFirst(x *core.Tensor, w *nn.Parameter, in, out int) bool {
	switch grad := core.GradEnabled(); {
	case grad && x.RequiresGrad():
		return in < out
	case grad && w.Tensor().RequiresGrad():
		return in < 2*out
	}
	return in <= out
}

// gcnNorm is the per-edge weight deg(src)^-1/2 * w * deg(dst)^-1/2 of a
// graph with its self loops; GCNConv makes it once per graph and dtype (it
// depends on the edges only; PyG recomputes it unless cached=True).
func gcnNorm(loops *Graph, dt core.DType) *core.Tensor {
	deg := loops.InDegree(dt)
	// deg^-1/2 with 0 for isolated nodes (rsqrt(0) = inf), as PyG's masked_fill.
	inv := op("rsqrt", nil, deg)
	inv = op("where", nil, op("isinf", nil, inv), core.Scalar(0, dt, loops.Device()), inv)
	norm := op("mul", nil, Gather(inv, loops.Src), Gather(inv, loops.Dst))
	if loops.Weight != nil {
		norm = op("mul", nil, norm, castTo(loops.Weight, dt))
	}
	return norm
}

func castTo(t *core.Tensor, dt core.DType) *core.Tensor {
	if t.DType() == dt {
		return t
	}
	return op("cast", core.Attrs{"dtype": dt}, t)
}

// SAGEConv is PyG's SAGEConv (GraphSAGE): x'_i = W_l agg_{j -> i} x_j + b + W_r x_i,
// agg "mean" or "max". State: lin_l.weight, lin_l.bias, lin_r.weight.
type SAGEConv struct {
	nn.Base
	In, Out int
	Aggr    string
	LinL    *nn.Linear
	LinR    *nn.Linear
}

// NewSAGEConv makes a SAGEConv; aggr is "mean" (PyG's default), "max", "sum" or "min".
func NewSAGEConv(in, out int, aggr string, o Options) (*SAGEConv, error) {
	return NewBipartiteSAGEConv(in, in, out, aggr, o)
}

// NewBipartiteSAGEConv is SAGEConv((inSrc, inDst), out) for a relation
// between two node sets: lin_l maps the aggregated source features, lin_r
// the destination's own.
func NewBipartiteSAGEConv(inSrc, inDst, out int, aggr string, o Options) (*SAGEConv, error) {
	switch aggr {
	case "mean", "max", "sum", "min":
	default:
		return nil, fmt.Errorf("geom: SAGEConv: unknown aggregation %q (mean, max, sum, min)", aggr)
	}
	l, err := nn.NewLinear(inSrc, out, o.devOpt()...)
	if err != nil {
		return nil, fmt.Errorf("geom: SAGEConv: %w", err)
	}
	r, err := nn.NewLinear(inDst, out, append(o.devOpt(), nn.WithoutBias())...)
	if err != nil {
		return nil, fmt.Errorf("geom: SAGEConv: %w", err)
	}
	c := &SAGEConv{In: inSrc, Out: out, Aggr: aggr, LinL: l, LinR: r}
	if err := c.RegisterModule("lin_l", l); err != nil {
		return nil, err
	}
	return c, c.RegisterModule("lin_r", r)
}

// Forward maps [N, In] to [N, Out] over g.
func (c *SAGEConv) Forward(x *core.Tensor, g *Graph) *core.Tensor {
	if err := checkNodes(x, g, "SAGEConv"); err != nil {
		return core.ErrTensor(err)
	}
	return c.ForwardBipartite(x, x, g)
}

// ForwardBipartite maps source features [NumSrcNodes, inSrc] and
// destination features [NumNodes, inDst] to [NumNodes, Out] over a
// relation g.
func (c *SAGEConv) ForwardBipartite(xSrc, x *core.Tensor, g *Graph) *core.Tensor {
	if err := firstErr(xSrc, x); err != nil {
		return core.ErrTensor(err)
	}
	if s, d := xSrc.Shape(), x.Shape(); len(s) != 2 || len(d) != 2 || s[0] != g.NumSrcNodes() || d[0] != g.NumNodes {
		return core.ErrTensor(fmt.Errorf("geom: SAGEConv: features %v -> %v for a relation of %d -> %d nodes", s, d, g.NumSrcNodes(), g.NumNodes))
	}
	if c.Aggr == "sum" || c.Aggr == "mean" {
		return c.linearAggregate(xSrc, x, g)
	}
	agg := Aggregate(Gather(xSrc, g.Src), g.Dst, g.NumNodes, c.Aggr)
	left, self := c.LinL.Forward(agg), c.LinR.Forward(x)
	return addTerms(left, self, agg, left, self)
}

// addTerms is a + b, then releases the intermediates done where no
// gradient is recorded (see release).
func addTerms(a, b *core.Tensor, done ...*core.Tensor) *core.Tensor {
	out := op("add", nil, a, b)
	release(done...)
	return out
}

// linearAggregate is the layer with the sum or mean over the edges into
// each node, as one sparse product with per-edge weights (1/in-degree for
// the mean; they depend on the edges only, so they are made once per
// graph). Both are linear, so lin_l's weight may go before or after the
// product (see aggregateFirst); its bias is added to the product's output.
func (c *SAGEConv) linearAggregate(xSrc, x *core.Tensor, g *Graph) *core.Tensor {
	key, weights := "ones", func() *core.Tensor { return core.Ones(core.Shape{g.NumEdges()}, xSrc.DType(), xSrc.Device()) }
	if c.Aggr == "mean" {
		key, weights = "mean", func() *core.Tensor {
			deg := op("clamp", core.Attrs{"min": 1.0}, g.InDegree(xSrc.DType()))
			return Gather(op("reciprocal", nil, deg), g.Dst)
		}
	}
	var bias *core.Tensor
	if c.LinL.Bias != nil {
		bias = c.LinL.Bias.Tensor()
	}
	if aggregateFirst(xSrc, c.LinL.Weight, c.In, c.Out) {
		return propagateConstLinear(g, convTerms{x: xSrc, w: c.LinL.Weight.Tensor(), bias: bias,
			root: x, wRoot: c.LinR.Weight.Tensor()}, key, weights)
	}
	h := linearNoBias(xSrc, c.LinL.Weight)
	left := propagateConstBias(g, h, bias, key, weights)
	release(h)
	self := c.LinR.Forward(x)
	return addTerms(left, self, left, self)
}

// GINConv is PyG's GINConv: x'_i = h((1 + eps) x_i + sum_{j -> i} x_j) with
// h a layer (an MLP); eps is fixed. State: h's, under "nn.".
type GINConv struct {
	nn.Base
	Eps float64
	NN  nn.Layer
}

// NewGINConv wraps h.
func NewGINConv(h nn.Layer, eps float64) (*GINConv, error) {
	c := &GINConv{Eps: eps, NN: h}
	return c, c.RegisterModule("nn", h)
}

// Forward maps [N, F] through the sum of neighbours and h.
func (c *GINConv) Forward(x *core.Tensor, g *Graph) *core.Tensor {
	if err := checkNodes(x, g, "GINConv"); err != nil {
		return core.ErrTensor(err)
	}
	agg := Propagate(g, x, nil)
	self := x
	if c.Eps != 0 {
		self = op("mul", nil, x, core.Scalar(1+c.Eps, x.DType(), x.Device()))
	}
	return c.NN.Forward(op("add", nil, self, agg))
}

// GATConv is PyG's GATConv (graph attention): per head h, alpha_ij =
// softmax_j(LeakyReLU(a_src . W x_j + a_dst . W x_i)) over the edges into i
// (with self loops), x'_i = sum_j alpha_ij W x_j; heads concatenated or
// averaged, then a bias. Attention dropout while training. State:
// att_src, att_dst (1, H, C), bias, lin.weight (H*C, In).
type GATConv struct {
	nn.Base
	In, Out, Heads int
	Concat         bool
	NegativeSlope  float64
	Dropout        float64
	AttSrc, AttDst *nn.Parameter
	Bias           *nn.Parameter
	LinWeight      *nn.Parameter
}

// NewGATConv makes a GATConv with PyG's initialisation (glorot, zero bias).
func NewGATConv(in, out, heads int, concat bool, dropout float64, o Options) (*GATConv, error) {
	if heads < 1 || in < 0 || out < 0 || !(dropout >= 0 && dropout < 1) {
		return nil, fmt.Errorf("geom: GATConv: bad sizes or dropout (in %d, out %d, heads %d, dropout %v)", in, out, heads, dropout)
	}
	c := &GATConv{In: in, Out: out, Heads: heads, Concat: concat, NegativeSlope: 0.2, Dropout: dropout}
	var err error
	if c.AttSrc, err = param(core.Shape{1, heads, out}, true, o); err != nil {
		return nil, err
	}
	if c.AttDst, err = param(core.Shape{1, heads, out}, true, o); err != nil {
		return nil, err
	}
	bias := out
	if concat {
		bias = heads * out
	}
	if c.Bias, err = param(core.Shape{bias}, false, o); err != nil {
		return nil, err
	}
	if c.LinWeight, err = param(core.Shape{heads * out, in}, true, o); err != nil {
		return nil, err
	}
	lin := &weightOnly{W: c.LinWeight}
	for _, r := range []func() error{
		func() error { return c.RegisterParameter("att_src", c.AttSrc) },
		func() error { return c.RegisterParameter("att_dst", c.AttDst) },
		func() error { return c.RegisterParameter("bias", c.Bias) },
		func() error { return lin.RegisterParameter("weight", c.LinWeight) },
		func() error { return c.RegisterModule("lin", lin) },
	} {
		if err := r(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Forward maps [N, In] to [N, Heads*Out] (concat) or [N, Out].
func (c *GATConv) Forward(x *core.Tensor, g *Graph) *core.Tensor {
	if err := checkNodes(x, g, "GATConv"); err != nil {
		return core.ErrTensor(err)
	}
	loops, err := g.WithSelfLoops(1)
	if err != nil {
		return core.ErrTensor(err)
	}
	n, h, ch := g.NumNodes, c.Heads, c.Out
	wx := op("reshape", core.Attrs{"shape": []int{n, h, ch}}, linearNoBias(x, c.LinWeight))
	sum := core.Attrs{"axes": []int{-1}}
	aSrc := op("sum", sum, op("mul", nil, wx, c.AttSrc.Tensor())) // [N, H]
	aDst := op("sum", sum, op("mul", nil, wx, c.AttDst.Tensor()))
	score := op("add", nil, Gather(aSrc, loops.Src), Gather(aDst, loops.Dst)) // [E, H]
	score = op("leaky_relu", core.Attrs{"negative_slope": c.NegativeSlope}, score)
	alpha := SegmentSoftmax(score, loops.Dst, n)
	if c.Dropout > 0 && c.Training() {
		alpha = op("dropout", core.Attrs{"p": c.Dropout, "training": true}, alpha)
	}
	msg := op("mul", nil, Gather(wx, loops.Src), op("unsqueeze", core.Attrs{"axis": 2}, alpha)) // [E, H, C]
	out := Aggregate(msg, loops.Dst, n, "sum")                                                  // [N, H, C]
	if c.Concat {
		out = op("reshape", core.Attrs{"shape": []int{n, h * ch}}, out)
	} else {
		out = op("mean", core.Attrs{"axes": []int{1}}, out)
	}
	return op("add", nil, out, c.Bias.Tensor())
}
