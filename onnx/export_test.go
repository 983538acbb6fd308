package onnx

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/core/safetensors"
)

// exportDir, when set, receives each exported graph with its inputs and
// webtensor's outputs, for onnxruntime to check (make_models.py
// check-export DIR).
var exportDir = flag.String("export-dir", "", "write the exported models, inputs and outputs here for make_models.py check-export")

// roundTrip exports g, imports the model and runs it on ins by name; it
// returns the imported model's outputs in g's order.
func roundTrip(t *testing.T, name string, g *ir.Graph, inNames, outNames []string, ins []*core.Tensor) []*core.Tensor {
	t.Helper()
	raw, err := Export(g, ExportNames(inNames, outNames))
	require.NoError(t, err)
	m, err := LoadBytes(raw, WithDevice(core.CPU))
	require.NoError(t, err, "importing the export")
	require.Equal(t, int64(ExportOpset), m.Opset)
	feeds := map[string]*core.Tensor{}
	for i, n := range inNames {
		feeds[n] = ins[i]
	}
	res, err := m.Run(feeds)
	require.NoError(t, err)
	outs := make([]*core.Tensor, len(outNames))
	for i, n := range outNames {
		outs[i] = res[n]
	}
	if *exportDir != "" {
		saveExport(t, name, raw, inNames, ins, outNames, outs)
	}
	return outs
}

func saveExport(t *testing.T, name string, raw []byte, inNames []string, ins []*core.Tensor, outNames []string, outs []*core.Tensor) {
	require.NoError(t, os.MkdirAll(*exportDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(*exportDir, name+".onnx"), raw, 0o644))
	st := map[string]safetensors.Tensor{}
	for i, n := range inNames {
		v, err := safetensors.FromTensor(ins[i])
		require.NoError(t, err)
		st["input:"+n] = v
	}
	for i, n := range outNames {
		v, err := safetensors.FromTensor(outs[i])
		require.NoError(t, err)
		st["output:"+n] = v
	}
	f, err := os.Create(filepath.Join(*exportDir, name+".safetensors"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, safetensors.Encode(f, st, nil))
}

func assertSame(t *testing.T, want, got []*core.Tensor, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Shape(), got[i].Shape(), "output %d's shape", i)
		require.Equal(t, want[i].DType(), got[i].DType(), "output %d's dtype", i)
		w, err := want[i].Float64s()
		require.NoError(t, err)
		g, err := got[i].Float64s()
		require.NoError(t, err)
		for j := range w {
			if math.Abs(w[j]-g[j]) > tol*(1+math.Abs(w[j])) {
				t.Fatalf("output %d element %d: exported %v, traced %v", i, j, g[j], w[j])
			}
		}
	}
}

// The real models, compiled (traced, simplified, fused), exported and
// imported again, compute what the compiled graph computes.
func TestExportRealModelsRoundTrip(t *testing.T) {
	for _, c := range modelCases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(c.onnx); err != nil {
				t.Skipf("%s is missing (`make onnx-models` exports it): %v", c.onnx, err)
			}
			m, err := Load(c.onnx, WithDevice(core.CPU))
			require.NoError(t, err)
			ins, _ := referenceOf(t, c.name)
			examples := make([]*core.Tensor, len(m.Inputs))
			inNames := make([]string, len(m.Inputs))
			for i, in := range m.Inputs {
				examples[i], inNames[i] = ins[in.Name].ToTensor(core.CPU), in.Name
			}
			outNames := make([]string, len(m.Outputs))
			for i, o := range m.Outputs {
				outNames[i] = o.Name
			}
			g, err := m.Compile(examples...)
			require.NoError(t, err)
			want, err := g.Run(examples...)
			require.NoError(t, err)
			assertSame(t, want, roundTrip(t, c.name, g, inNames, outNames, examples), 1e-6)
		})
	}
}

// A hand-written function over the ops the exporter covers, traced with
// ir.Trace: the export runs to the same values.
func TestExportTracedFunction(t *testing.T) {
	c := func(op string, a core.Attrs, ins ...*core.Tensor) *core.Tensor { return core.Call1(op, a, ins...) }
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x, w, idx := in[0], in[1], in[2]
		h := c("gelu", core.Attrs{"approximate": "tanh"}, c("matmul", nil, x, w))
		h = c("layer_norm", core.Attrs{"normalized_shape": []int{6}}, h)
		s := c("softmax", nil, c("transpose", nil, h))
		pos := c("gt", nil, x, c("zeros_like", nil, x))
		sel := c("where", nil, pos, x, c("neg", nil, x))
		parts, err := core.Call("split", []*core.Tensor{sel}, core.Attrs{"sizes": []int{1, 3}, "axis": 1})
		if err != nil {
			return nil, err
		}
		cat := c("concat", core.Attrs{"axis": 1}, parts[1], parts[0])
		clamped := c("clamp", core.Attrs{"min": -0.5, "max": 0.75}, cat)
		red := c("mean", core.Attrs{"axes": []int{1}, "keepdim": true}, c("square", nil, clamped))
		gathered := c("index_select", core.Attrs{"axis": 0}, c("rsqrt", nil, c("add", nil, red, c("full_like", core.Attrs{"value": 1.0}, red))), idx)
		count := c("sum", nil, c("ne", nil, pos, c("lt", nil, x, c("zeros_like", nil, x))))
		sliced := c("slice", core.Attrs{"axis": 1, "start": 1, "step": 2}, c("reshape", core.Attrs{"shape": []int{3, -1}}, s))
		mx := c("maximum", nil, c("permute", core.Attrs{"dims": []int{1, 0}}, sliced), c("cast", core.Attrs{"dtype": core.F32}, count))
		return []*core.Tensor{s, gathered, count, mx, x}, nil
	}
	x := core.FromSlice([]float32{0.5, -1, 2, 0.25, -0.75, 1.5, 3, -2, 0.1, 0.2, -0.3, 0.4}, core.Shape{3, 4}, core.CPU)
	w := core.FromSlice([]float32{0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, 0.8, -0.9, 1, -1.1, 1.2, 0.3, 0.2, 0.1, 0, -0.1, -0.2, 0.5, 0.5, -0.5, -0.5, 0.25, 0.75}, core.Shape{4, 6}, core.CPU)
	idx := core.FromSlice([]int64{2, 0, 2}, core.Shape{3}, core.CPU)
	g, err := ir.Trace(fn, x, w, idx)
	require.NoError(t, err)
	_, _, _, err = g.Optimize()
	require.NoError(t, err)
	want, err := fn([]*core.Tensor{x, w, idx})
	require.NoError(t, err)
	got := roundTrip(t, "traced", g, []string{"x", "w", "idx"}, []string{"softmax", "gathered", "count", "max", "x_again"}, []*core.Tensor{x, w, idx})
	assertSame(t, want, got, 1e-6)
}

func TestExportRefusesWhatItCannotWrite(t *testing.T) {
	x := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}, core.CPU)
	g, err := ir.Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{core.Call1("cumsum", core.Attrs{"axis": 0}, in[0])}, nil
	}, x)
	require.NoError(t, err)
	_, err = Export(g)
	assert.ErrorContains(t, err, `onnx export: node 0 (cumsum): op "cumsum" has no ONNX form in the exporter`)
	_, err = Export(g, ExportNames([]string{"a", "b"}, nil))
	assert.ErrorContains(t, err, "2 input and 0 output names for a graph of 1 inputs and 1 outputs")
	_, err = Export(nil)
	assert.ErrorContains(t, err, "the graph is nil")
}
