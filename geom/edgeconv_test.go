package geom

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// EdgeConv and DynamicEdgeConv against PyG (testdata/gen_pyg_points.py):
// PyG's parameters load by their names ("nn.0.weight", ...); the output and
// the gradients of sum(out * up) with respect to the features and every
// parameter must match.

// edgeMLP is the generator's h: Linear(2F, hidden) -> ReLU -> Linear(hidden, out).
func edgeMLP(t *testing.T, f, hidden, out int, dt core.DType, dev core.Device) nn.Layer {
	t.Helper()
	l1, err := nn.NewLinear(2*f, hidden, nn.WithDType(dt), nn.WithDevice(dev))
	require.NoError(t, err)
	l2, err := nn.NewLinear(hidden, out, nn.WithDType(dt), nn.WithDevice(dev))
	require.NoError(t, err)
	h, err := nn.NewSequential(l1, &nn.ReLU{}, l2)
	require.NoError(t, err)
	return h
}

func runEdgeConvReference(t *testing.T, dev core.Device, dt core.DType, atol, rtol float64) {
	for _, c := range refCasesOfKind(t, dt, dev, "layer") {
		t.Run(c.name, func(t *testing.T) {
			x := c.get("x").Detach().SetRequiresGrad(true)
			f := x.Shape()[1]
			h := edgeMLP(t, f, int(c.attrs["hidden"].(float64)), int(c.attrs["out"].(float64)), dt, dev)
			aggr := c.attrs["aggr"].(string)
			var m nn.Module
			var out *core.Tensor
			if strings.HasPrefix(c.name, "dynamic") {
				l, err := NewDynamicEdgeConv(h, int(c.attrs["k"].(float64)), aggr)
				require.NoError(t, err)
				loadPyG(t, c, l)
				g, err := l.Graph(x, c.get("batch"))
				require.NoError(t, err)
				want, err := c.get("edge_index").Int64s()
				require.NoError(t, err)
				src, dst := g.Edges()
				require.Equal(t, want, append(append([]int64{}, src...), dst...), "the k-NN graph of the features")
				m, out = l, l.Forward(x, c.get("batch"))
			} else {
				l, err := NewEdgeConv(h, aggr)
				require.NoError(t, err)
				loadPyG(t, c, l)
				g, err := FromEdgeIndex(x.Shape()[0], c.get("edge_index"), nil, dev)
				require.NoError(t, err)
				m, out = l, l.Forward(x, g)
			}
			closeTo(t, "out", out, c.get("out"), atol, rtol)
			loss := core.Call1("sum", nil, core.Call1("mul", nil, out, c.get("up")))
			require.NoError(t, loss.Backward())
			closeTo(t, "grad x", x.Grad(), c.get("grad/x"), atol, rtol)
			require.Len(t, m.NamedParameters(), 4)
			for _, p := range m.NamedParameters() {
				closeTo(t, fmt.Sprintf("grad %s", p.Name), p.Param.Tensor().Grad(), c.get("grad/"+p.Name), atol, rtol)
			}
		})
	}
}

func loadPyG(t *testing.T, c refCase, m nn.Module) {
	t.Helper()
	for _, s := range m.StateDict() {
		v := c.get("param/" + s.Name)
		require.NotNil(t, v, "%s: PyG has no parameter %s", c.name, s.Name)
		require.NoError(t, s.Value.Set(v), "%s: %s", c.name, s.Name)
	}
}

func TestEdgeConvMatchesPyGOnCPU(t *testing.T) {
	runEdgeConvReference(t, core.CPU, core.F64, 1e-10, 1e-9)
}

func TestEdgeConvMatchesPyGOnWebGPU(t *testing.T) {
	dev := webgputest.Device
	webgputest.Need(t)
	runEdgeConvReference(t, dev, core.F32, 1e-5, 1e-4)
}

// The high-dimensional DynamicEdgeConv case goes through brute force under
// Auto; forcing each method must give the same graph and output.
func TestDynamicEdgeConvMethodsAgree(t *testing.T) {
	for _, c := range refCasesOfKind(t, core.F64, core.CPU, "layer") {
		if !strings.HasPrefix(c.name, "dynamic") {
			continue
		}
		var outs []*core.Tensor
		for _, m := range []Method{KDTree, BruteForce} {
			h := edgeMLP(t, c.get("x").Shape()[1], 5, 3, core.F64, core.CPU)
			l, err := NewDynamicEdgeConv(h, int(c.attrs["k"].(float64)), "")
			require.NoError(t, err)
			l.Search.Method = m
			loadPyG(t, c, l)
			outs = append(outs, l.Forward(c.get("x"), c.get("batch")))
		}
		closeTo(t, c.name+": brute force vs k-d tree", outs[1], outs[0], 0, 0)
		closeTo(t, c.name+": vs PyG", outs[0], c.get("out"), 1e-10, 1e-9)
	}
}

func TestEdgeConvErrors(t *testing.T) {
	h := edgeMLP(t, 2, 4, 3, core.F64, core.CPU)
	g, err := NewGraph(3, []int64{0, 1}, []int64{1, 2}, nil)
	require.NoError(t, err)
	ec, err := NewEdgeConv(h, "")
	require.NoError(t, err)
	require.Equal(t, "max", ec.Aggr)
	dc, err := NewDynamicEdgeConv(h, 2, "mean")
	require.NoError(t, err)
	flat := core.FromFloat64s(core.F64, core.Shape{3}, []float64{1, 2, 3})
	x := core.FromFloat64s(core.F64, core.Shape{3, 2}, []float64{1, 2, 3, 4, 5, 6})
	for _, tc := range []struct {
		name, want string
		err        func() error
	}{
		{"1-D features", "EdgeConv: features of shape [3], want [N, F]", func() error { return ec.Forward(flat, g).Err() }},
		{"wrong node count", "features of shape [3 2] for a graph of 4 nodes", func() error {
			g4, _ := NewGraph(4, nil, nil, nil)
			return ec.Forward(x, g4).Err()
		}},
		{"nil graph", "nil graph", func() error { return ec.Forward(x, nil).Err() }},
		{"dynamic 1-D", "DynamicEdgeConv: features of shape [3], want [N, F]", func() error { return dc.Forward(flat, nil).Err() }},
		{"dynamic batch length", "batch has shape [2] for 3 points, want [3]", func() error {
			return dc.Forward(x, core.FromSlice([]int64{0, 1}, core.Shape{2})).Err()
		}},
		{"k = 0", "DynamicEdgeConv: k = 0, want k >= 1", func() error { _, err := NewDynamicEdgeConv(h, 0, ""); return err }},
		{"aggregation", `unknown aggregation "median"`, func() error { _, err := NewEdgeConv(h, "median"); return err }},
		{"nil layer", "nil layer", func() error { _, err := NewEdgeConv(nil, "max"); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
