package geom

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// GCNConv and SAGEConv choose the order of their linear map and sparse
// product (aggregateFirst) and, where no gradient is recorded, add the bias
// inside the product (propagateConstBias): every path must give PyG's
// values. runReference covers an input that needs a gradient; here x is a
// constant (a first layer), with and without gradients recorded, in f64 and
// in f32 (the fused path's dtype).
func TestLayerOrdersMatchPyG(t *testing.T) {
	tols := map[core.DType][2]float64{core.F64: {1e-10, 1e-9}, core.F32: {1e-5, 1e-4}}
	for dt, tol := range tols {
		for _, c := range loadRef(t, dt, core.CPU) {
			if !strings.HasPrefix(c.name, "gcn") && !strings.HasPrefix(c.name, "sage") {
				continue
			}
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				m, fwd := layerFor(t, c, dt, core.CPU)
				g, err := FromEdgeIndex(7, c.get("edge_index"), nilIfAbsent(c, "edge_weight"))
				require.NoError(t, err)
				out := fwd(c.get("x"), g)
				closeTo(t, "out", out, c.get("out"), tol[0], tol[1])
				require.NoError(t, core.Call1("sum", nil, core.Call1("mul", nil, out, c.get("up"))).Backward())
				for _, p := range m.NamedParameters() {
					closeTo(t, "grad "+p.Name, p.Param.Tensor().Grad(), c.get("grad/"+p.Name), tol[0], tol[1])
				}
				core.NoGrad(func() { out = fwd(c.get("x"), g) })
				closeTo(t, "out without gradients", out, c.get("out"), tol[0], tol[1])
			})
		}
	}
}

type opNames []string

func (o *opNames) Record(def *core.OpDef, _ []*core.Tensor, _ core.Attrs, _ []*core.Tensor) {
	*o = append(*o, def.Name)
}

// The fused product calls the backend directly, which a tracer would not
// see: while one is installed the layer makes the plain op calls.
func TestFusedBiasStaysVisibleToTracers(t *testing.T) {
	g, err := NewGraph(3, []int64{0, 1, 2}, []int64{1, 2, 0}, nil)
	require.NoError(t, err)
	core.EnterNoGrad()
	defer func() { require.NoError(t, core.ExitNoGrad()) }()
	for _, io := range [][2]int{{4, 2}, {2, 4}} { // SpmmBias, SpmmLinear
		c, err := NewGCNConv(io[0], io[1], Options{})
		require.NoError(t, err)
		x := core.Ones(core.Shape{3, io[0]}, core.F32)
		want := c.Forward(x, g) // fused, and the per-graph constants made
		var seen opNames
		prev := core.SetTracer(&seen)
		got := c.Forward(x, g)
		core.SetTracer(prev)
		assert.Contains(t, seen, "spmm")
		assert.Contains(t, seen, "matmul")
		assert.Contains(t, seen, "add")
		closeTo(t, "traced", got, want, 1e-6, 1e-6)
	}
}

// Without gradients a layer that does not narrow its features aggregates
// first and maps the aggregate block by block with its bias (SpmmLinear on
// the CPU, for f32; f64 takes the plain op calls and releases their
// intermediates): the values of the op calls a training step makes, and
// the parameters intact afterwards.
func TestFusedInferenceMatchesTraining(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	n := 600
	src, dst := make([]int64, 5*n), make([]int64, 5*n)
	for i := range src {
		src[i], dst[i] = rng.Int64N(int64(n)), rng.Int64N(int64(n))
	}
	g, err := NewGraph(n, src, dst, nil)
	require.NoError(t, err)
	for _, dt := range []core.DType{core.F32, core.F64} {
		for _, io := range [][2]int{{3, 5}, {8, 8}, {8, 3}} {
			o := Options{DType: dt}
			gcn, err := NewGCNConv(io[0], io[1], o)
			require.NoError(t, err)
			sage, err := NewSAGEConv(io[0], io[1], "mean", o)
			require.NoError(t, err)
			require.NoError(t, nn.Uniform(sage.LinL.Bias, -1, 1))
			require.NoError(t, nn.Uniform(gcn.Bias, -1, 1))
			xs := make([]float64, n*io[0])
			for i := range xs {
				xs[i] = rng.NormFloat64()
			}
			x := core.FromFloat64s(dt, core.Shape{n, io[0]}, xs)
			for name, fwd := range map[string]func(*core.Tensor, *Graph) *core.Tensor{"gcn": gcn.Forward, "sage": sage.Forward} {
				what := fmt.Sprintf("%s %s %v", dt, name, io)
				var infer, again *core.Tensor
				core.NoGrad(func() { infer, again = fwd(x, g), fwd(x, g) })
				train := fwd(x.Detach().SetRequiresGrad(true), g)
				closeTo(t, what, infer, train.Detach(), 1e-5, 1e-5)
				closeTo(t, what+" again", again, infer, 0, 0)
			}
		}
	}
}
