package onnx

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
)

// Real models, exported by torch.onnx in testdata/make_models.py, against
// what onnxruntime 1.31 computed on them (the .safetensors beside each:
// "input:NAME" and "output:NAME"). MiniLM's ONNX file is too big to
// commit: `make onnx-models` exports it into build/onnx, and only its
// inputs and onnxruntime's outputs are here.

// minilmPath is where `make onnx-models` puts the MiniLM export.
var minilmPath = filepath.Join("..", "build", "onnx", "all-MiniLM-L6-v2.onnx")

// modelCase is one model and the agreement with onnxruntime it must reach:
// |ours - ort| <= atol + rtol*|ort| elementwise, in f32.
type modelCase struct {
	name       string
	onnx       string
	atol, rtol float64
}

var modelCases = []modelCase{
	{"resnet", filepath.Join("testdata", "models", "resnet.onnx"), 2e-5, 2e-5},
	{"vit", filepath.Join("testdata", "models", "vit.onnx"), 2e-5, 2e-5},
	{"gpt2", filepath.Join("testdata", "models", "gpt2.onnx"), 2e-5, 2e-5},
	{"minilm", minilmPath, 1e-4, 1e-4},
}

// referenceOf reads a model's inputs and onnxruntime's outputs.
func referenceOf(t *testing.T, name string) (inputs, outputs map[string]safetensors.Tensor) {
	f, err := safetensors.ReadFile(filepath.Join("testdata", "models", name+".safetensors"))
	require.NoError(t, err)
	inputs, outputs = map[string]safetensors.Tensor{}, map[string]safetensors.Tensor{}
	for _, n := range f.Names {
		switch {
		case strings.HasPrefix(n, "input:"):
			inputs[strings.TrimPrefix(n, "input:")] = f.Tensors[n]
		case strings.HasPrefix(n, "output:"):
			outputs[strings.TrimPrefix(n, "output:")] = f.Tensors[n]
		}
	}
	require.NotEmpty(t, inputs)
	require.NotEmpty(t, outputs)
	return inputs, outputs
}

// worst is the largest |got - want| and the largest of it relative to
// atol + rtol*|want| (above 1: out of tolerance), with its index.
func worst(got, want []float32, atol, rtol float64) (maxAbs, maxRatio float64, at int) {
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) {
			return math.NaN(), math.Inf(1), i
		}
		maxAbs = max(maxAbs, d)
		if r := d / (atol + rtol*math.Abs(float64(want[i]))); r > maxRatio {
			maxRatio, at = r, i
		}
	}
	return maxAbs, maxRatio, at
}

func checkModel(t *testing.T, c modelCase, dev core.Device) {
	if _, err := os.Stat(c.onnx); err != nil {
		t.Skipf("%s is missing (`make onnx-models` exports it): %v", c.onnx, err)
	}
	m, err := Load(c.onnx, WithDevice(dev))
	require.NoError(t, err)
	ins, want := referenceOf(t, c.name)
	feeds := map[string]*core.Tensor{}
	for n, v := range ins {
		feeds[n] = v.ToTensor(dev)
	}
	got, err := m.Run(feeds)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for name, w := range want {
		g := got[name]
		require.NotNil(t, g, "output %s", name)
		require.Equal(t, w.Shape, g.Shape(), "output %s's shape", name)
		gv, err := g.Float32s()
		require.NoError(t, err)
		wv, err := w.ToTensor(core.CPU).Float32s()
		require.NoError(t, err)
		maxAbs, ratio, at := worst(gv, wv, c.atol, c.rtol)
		t.Logf("%s on %s: output %s %v: max |ours - onnxruntime| = %.3g", c.name, dev, name, w.Shape, maxAbs)
		assert.LessOrEqual(t, ratio, 1.0, "%s: output %s element %d: %g, onnxruntime %g (atol %g, rtol %g)",
			c.name, name, at, gv[at], wv[at], c.atol, c.rtol)
	}
}

func TestRealModelsMatchOnnxruntime(t *testing.T) {
	for _, c := range modelCases {
		t.Run(c.name+"/cpu", func(t *testing.T) { checkModel(t, c, core.CPU) })
	}
	for _, c := range modelCases {
		t.Run(c.name+"/webgpu", func(t *testing.T) {
			webgputest.Need(t)
			checkModel(t, c, webgputest.Device)
		})
	}
}

// The compiled form (ir.Trace, the passes, fusion) gives what eager does.
func TestRealModelsCompile(t *testing.T) {
	for _, c := range modelCases[:3] {
		t.Run(c.name, func(t *testing.T) {
			m, err := Load(c.onnx, WithDevice(core.CPU))
			require.NoError(t, err)
			ins, want := referenceOf(t, c.name)
			examples := make([]*core.Tensor, len(m.Inputs))
			for i, in := range m.Inputs {
				examples[i] = ins[in.Name].ToTensor(core.CPU)
			}
			g, err := m.Compile(examples...)
			require.NoError(t, err)
			outs, err := g.Run(examples...)
			require.NoError(t, err)
			for i, o := range m.Outputs {
				gv, err := outs[i].Float32s()
				require.NoError(t, err)
				wv, err := want[o.Name].ToTensor(core.CPU).Float32s()
				require.NoError(t, err)
				_, ratio, at := worst(gv, wv, c.atol, c.rtol)
				assert.LessOrEqual(t, ratio, 1.0, fmt.Sprintf("%s: compiled output %s element %d", c.name, o.Name, at))
			}
		})
	}
}
