package abi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The diffusion and ONNX targets give what the functions they run give,
// progress reaches the caller's context, and run_values' one call matches
// the C ABI's four.

func TestCallDiffusionMatchesTheFunctions(t *testing.T) {
	var p int64
	require.NoError(t, call(t, "diffusion.load", 0, nil, zipFolder(t, ddpmPipe), &p))
	defer func() { require.NoError(t, call(t, "diffusion.free", p, nil, nil, nil)) }()
	var info map[string]any
	require.NoError(t, call(t, "diffusion.info", p, nil, nil, &info))
	assert.Equal(t, "DDPMPipeline", info["pipeline"])

	var steps [][2]int
	ctx := CallContext{Progress: func(step, n int) error { steps = append(steps, [2]int{step, n}); return nil }}
	res, err := Call("diffusion.generate", p, `{"batch": 2, "steps": 4, "seed": "7"}`, nil, ctx)
	require.NoError(t, err)
	assert.Equal(t, [][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}, steps, "progress after each step")
	var h int64
	require.NoError(t, json.Unmarshal([]byte(res), &h))
	got, _ := hostValues(t, h)
	direct, err := diffusionGenerate(p, 2, 4, 7, "", nil)
	require.NoError(t, err)
	want, _ := hostValues(t, direct)
	assert.Equal(t, want, got)
	freeHandles(h, direct)

	_, err = Call("diffusion.generate", p, `{"seed": "-1"}`, nil, CallContext{})
	assert.ErrorContains(t, err, "diffusion.generate: seed must be an integer in [0, 2^64) or its decimal string")
	_, err = Call("diffusion.generate", p, `{"steps": 0}`, nil, CallContext{})
	assert.ErrorContains(t, err, "diffusion.generate: steps is 0, outside [1, 2147483647]")
	_, err = Call("diffusion.generate_classes", p, `{"labels": [1]}`, nil, CallContext{})
	assert.ErrorContains(t, err, "takes no class labels") // the function's own refusal
}

func TestCallOnnxRunValuesMatchesTheReference(t *testing.T) {
	var m int64
	require.NoError(t, call(t, "onnx.load", 0, map[string]any{"path": sdkValuesModel}, nil, &m))
	defer func() { require.NoError(t, call(t, "onnx.free", m, nil, nil, nil)) }()
	for i, c := range readValuesCases(t) {
		before := LiveTensors()
		flat, layout := flatten(t, c.Inputs)
		var res struct {
			Layout  map[string]json.RawMessage
			Tensors []int64
		}
		require.NoError(t, call(t, "onnx.run_values", m,
			map[string]any{"tensors": flat, "layout": json.RawMessage(layout)}, nil, &res), "case %d", i)
		assert.Len(t, res.Layout, len(c.Outputs))
		for name, want := range c.Outputs {
			checkValue(t, name, res.Layout[name], want, res.Tensors)
		}
		freeHandles(append(flat, res.Tensors...)...)
		assert.Equal(t, before, LiveTensors(), "case %d: every tensor freed", i)
	}
	var info struct{ Inputs []struct{ Name string } }
	require.NoError(t, call(t, "onnx.info", m, nil, nil, &info))
	assert.NotEmpty(t, info.Inputs)
	err := call(t, "onnx.run_values", m, map[string]any{"tensors": []int64{}, "layout": "x"}, nil, nil)
	assert.ErrorContains(t, err, "onnx.run_values")
}
