package geom

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

// The layers against PyTorch Geometric: testdata/pyg.safetensors holds, per
// case, a graph, features, PyG's parameters, its output and the gradients of
// sum(out * up) (testdata/gen_pyg.py, `make geom-vectors`). The same
// parameters load into the geom layer by their PyG names.

type refCase struct {
	name  string
	attrs map[string]any
	get   func(what string) *core.Tensor
}

func loadRef(t *testing.T, dt core.DType, dev core.Device) []refCase {
	t.Helper()
	return loadRefFile(t, "testdata/pyg.safetensors", dt, dev)
}

// loadRefFile reads the cases of a reference file written by a
// testdata/gen_pyg*.py script (`make geom-vectors`), in map order: each
// case's tensors come on dev, the float ones cast to dt.
func loadRefFile(t *testing.T, path string, dt core.DType, dev core.Device) []refCase {
	t.Helper()
	f, err := safetensors.ReadFile(path)
	require.NoError(t, err, path+" (make geom-vectors)")
	var meta map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(f.Metadata["cases"]), &meta))
	var out []refCase
	for name, attrs := range meta {
		out = append(out, refCase{name: name, attrs: attrs, get: func(what string) *core.Tensor {
			st, ok := f.Tensors[name+"/"+what]
			if !ok {
				return nil
			}
			x := st.ToTensor()
			if x.DType().IsFloat() && x.DType() != dt {
				x = core.Call1("cast", core.Attrs{"dtype": dt}, x)
			}
			return x.To(dev)
		}})
	}
	return out
}

// layerFor builds the geom layer of a case with PyG's parameters loaded.
func layerFor(t *testing.T, c refCase, dt core.DType, dev core.Device) (nn.Module, func(x *core.Tensor, g *Graph) *core.Tensor) {
	t.Helper()
	o := Options{DType: dt, Device: dev}
	var m nn.Module
	var fwd func(x *core.Tensor, g *Graph) *core.Tensor
	var err error
	switch {
	case strings.HasPrefix(c.name, "gcn"):
		var l *GCNConv
		l, err = NewGCNConv(4, 3, o)
		m, fwd = l, l.Forward
	case strings.HasPrefix(c.name, "sage"):
		var l *SAGEConv
		l, err = NewSAGEConv(4, 3, c.attrs["aggr"].(string), o)
		m, fwd = l, l.Forward
	case c.name == "gin":
		var h *nn.Linear
		h, err = nn.NewLinear(4, 3, nn.WithDType(dt), nn.WithDevice(dev))
		require.NoError(t, err)
		var l *GINConv
		l, err = NewGINConv(h, c.attrs["eps"].(float64))
		m, fwd = l, l.Forward
	case strings.HasPrefix(c.name, "gat"):
		var l *GATConv
		l, err = NewGATConv(4, 3, 2, c.attrs["concat"].(bool), 0, o)
		m, fwd = l, l.Forward
	case strings.HasPrefix(c.name, "pool_"):
		how := c.attrs["pool"].(string)
		return nil, func(x *core.Tensor, _ *Graph) *core.Tensor {
			return Pool(x, c.get("batch"), 3, how)
		}
	default:
		t.Fatalf("no layer for case %s", c.name)
	}
	require.NoError(t, err, c.name)
	for _, s := range m.StateDict() {
		v := c.get("param/" + s.Name)
		require.NotNil(t, v, "%s: PyG has no parameter %s", c.name, s.Name)
		require.NoError(t, s.Value.Set(v), "%s: %s", c.name, s.Name)
	}
	return m, fwd
}

func closeTo(t *testing.T, what string, got, want *core.Tensor, atol, rtol float64) {
	t.Helper()
	require.NoError(t, got.Err(), what)
	require.Equal(t, want.Shape(), got.Shape(), what)
	g, err := got.Float64s()
	require.NoError(t, err, what)
	w, err := want.Float64s()
	require.NoError(t, err, what)
	for i := range w {
		if d := math.Abs(g[i] - w[i]); d > atol+rtol*math.Abs(w[i]) {
			t.Fatalf("%s: element %d: got %v, PyG %v (|diff| %.3g)", what, i, g[i], w[i], d)
		}
	}
}

func runReference(t *testing.T, dev core.Device, dt core.DType, atol, rtol float64) {
	for _, c := range loadRef(t, dt, dev) {
		if c.name == "hetero" {
			continue // TestHeteroConvMatchesPyG
		}
		t.Run(c.name, func(t *testing.T) {
			m, fwd := layerFor(t, c, dt, dev)
			g, err := FromEdgeIndex(7, c.get("edge_index"), nilIfAbsent(c, "edge_weight"), dev)
			require.NoError(t, err)
			x := c.get("x").Detach().SetRequiresGrad(true)
			out := fwd(x, g)
			closeTo(t, "out", out, c.get("out"), atol, rtol)
			loss := core.Call1("sum", nil, core.Call1("mul", nil, out, c.get("up")))
			require.NoError(t, loss.Backward())
			closeTo(t, "grad x", x.Grad(), c.get("grad/x"), atol, rtol)
			if m == nil {
				return
			}
			for _, p := range m.NamedParameters() {
				closeTo(t, fmt.Sprintf("grad %s", p.Name), p.Param.Tensor().Grad(), c.get("grad/"+p.Name), atol, rtol)
			}
		})
	}
}

// Only the weighted GCN case uses the weights; the others ignore them, as PyG did.
func nilIfAbsent(c refCase, what string) *core.Tensor {
	if c.attrs["weighted"] == true {
		return c.get(what)
	}
	return nil
}

func TestLayersMatchPyGOnCPU(t *testing.T) {
	runReference(t, core.CPU, core.F64, 1e-10, 1e-9)
}

func TestLayersMatchPyGOnWebGPU(t *testing.T) {
	dev := webgputest.Device
	webgputest.Need(t)
	runReference(t, dev, core.F32, 1e-5, 1e-4)
}

func TestHeteroConvMatchesPyG(t *testing.T) {
	devs := map[core.Device][3]float64{core.CPU: {float64(core.F64), 1e-10, 1e-9}}
	if webgputest.Present(t) {
		devs[webgputest.Device] = [3]float64{float64(core.F32), 1e-4, 1e-4}
	}
	for dev, tol := range devs {
		t.Run(dev.String(), func(t *testing.T) {
			dt := core.DType(tol[0])
			var c refCase
			for _, rc := range loadRef(t, dt, dev) {
				if rc.name == "hetero" {
					c = rc
				}
			}
			require.NotNil(t, c.get, "no hetero case in testdata/pyg.safetensors")
			h := NewHeteroGraph(map[string]int{"author": 4, "paper": 5})
			for _, r := range []EdgeType{{"author", "writes", "paper"}, {"paper", "cites", "paper"}, {"paper", "rev_writes", "author"}} {
				ei, err := c.get("edge_index/" + r.String()).Int64s()
				require.NoError(t, err)
				require.NoError(t, h.AddEdges(r, ei[:len(ei)/2], ei[len(ei)/2:], dev))
			}
			conv, err := NewHeteroSAGE(h, map[string]int{"author": 2, "paper": 3}, 3, "mean", "sum", Options{DType: dt, Device: dev})
			require.NoError(t, err)
			for _, s := range conv.StateDict() {
				v := c.get("param/" + s.Name)
				require.NotNil(t, v, "PyG has no parameter %s", s.Name)
				require.NoError(t, s.Value.Set(v), s.Name)
			}
			x := map[string]*core.Tensor{}
			for _, ty := range []string{"author", "paper"} {
				x[ty] = c.get("x/" + ty).Detach().SetRequiresGrad(true)
			}
			y, err := conv.Forward(x, h)
			require.NoError(t, err)
			var loss *core.Tensor
			for ty, v := range y {
				closeTo(t, "out "+ty, v, c.get("out/"+ty), tol[1], tol[2])
				term := core.Call1("sum", nil, core.Call1("mul", nil, v, c.get("up/"+ty)))
				if loss == nil {
					loss = term
				} else {
					loss = core.Call1("add", nil, loss, term)
				}
			}
			require.NoError(t, loss.Backward())
			for ty, v := range x {
				closeTo(t, "grad x "+ty, v.Grad(), c.get("grad/x/"+ty), tol[1], tol[2])
			}
			for _, p := range conv.NamedParameters() {
				closeTo(t, "grad "+p.Name, p.Param.Tensor().Grad(), c.get("grad/"+p.Name), tol[1], tol[2])
			}
			_, err = NewHeteroSAGE(h, map[string]int{"author": 2}, 3, "mean", "sum", Options{})
			assert.ErrorContains(t, err, "no feature size for")
			assert.ErrorContains(t, h.AddEdges(EdgeType{"author", "writes", "paper"}, nil, nil), "added twice")
			assert.ErrorContains(t, h.AddEdges(EdgeType{"venue", "hosts", "paper"}, nil, nil), "must be declared first")
		})
	}
}
