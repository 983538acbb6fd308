package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/abi"
)

// wt_onnx_run_values and the wt_onnx_values calls as a C caller makes them,
// on onnx/testdata/sdk_values_model.onnx (make_sdk_values_model.py): the
// first case of sdk_values_model.json, every optional given. abi's tests
// hold both cases to the reference; these hold the C side: the pointers,
// the buffer protocols, one run however often the results are read.

func TestOnnxRunValuesThroughC(t *testing.T) {
	pinThread(t)
	st, m := callOnnxLoad(filepath.Join("..", "onnx", "testdata", "sdk_values_model.onnx"), "")
	require.Equal(t, int32(statusOK), st, lastError())
	defer callOnnxFree(m)
	x := mustTensor(t, []float32{1, 2, 3, 4, 5, 6}, 3, 2)
	p0 := mustTensor(t, []float32{7, 8}, 1, 2)
	p1 := mustTensor(t, []float32{9, 10, 11, 12}, 2, 2)
	maybe := mustTensor(t, []float32{0.5, -0.5}, 2)
	ins := []int64{x, p0, p1, maybe}
	defer func() {
		for _, h := range ins {
			callFree(h)
		}
	}()
	live := abi.LiveTensors()

	st, v := callOnnxRunValues(m, ins, `{"x": 0, "parts": [1, 2], "maybe": 3, "maybe_parts": [3, 3]}`)
	require.Equal(t, int32(statusOK), st, lastError())
	st, layout := callOnnxValuesLayout(v)
	require.Equal(t, int32(statusOK), st, lastError())
	assert.Equal(t, `{"pieces":[0,1,2],"joined":3,"has":4,"maybe_out":5,"parts_out":[6,7]}`, layout)

	// Too small an array: the count, no handle; asked again, the same run's tensors.
	st, _, n := callOnnxValuesTensors(v, 0)
	assert.Equal(t, statusBuffer, st)
	assert.Contains(t, lastError(), "wt_onnx_values_tensors: the run returns 8 outputs, out_cap is 0")
	assert.Equal(t, int32(8), n)
	assert.Equal(t, live, abi.LiveTensors(), "no handle made")
	st, outs, n := callOnnxValuesTensors(v, 8)
	require.Equal(t, int32(statusOK), st, lastError())
	require.Equal(t, int32(8), n)
	require.Equal(t, int32(statusOK), callOnnxValuesFree(v), lastError())
	assert.Equal(t, statusHandle, callOnnxValuesFree(v))
	assert.Contains(t, lastError(), "onnx values handle")

	want := [][]float32{{1, 2}, {3, 4}, {5, 6}, {7, 8, 9, 10, 11, 12}, nil, {0.5, -0.5}, {0.5, -0.5}, {0.5, -0.5}}
	for i, h := range outs {
		if want[i] != nil {
			st, raw := callToHost(h, 4*len(want[i]))
			require.Equal(t, int32(statusOK), st, lastError())
			assert.Equal(t, want[i], f32s(raw), "output tensor %d", i)
		}
		assert.Equal(t, int32(statusOK), callFree(h))
	}
	assert.Equal(t, live, abi.LiveTensors())

	for layout, msg := range map[string]string{
		"\x00":     "wt_onnx_run_values: layout_json is NULL",
		"not json": "layout_json must be a JSON object of input names",
		`{"x": 0, "parts": [1, 2], "maybe": 3, "maybe_parts": [4]}`: `input "maybe_parts" (a sequence), element 0: tensor index 4 out of range: n_tensors is 4`,
	} {
		st, _ := callOnnxRunValues(m, ins, layout)
		assert.Equal(t, statusInvalid, st, layout)
		assert.Contains(t, lastError(), msg)
	}
	assert.Equal(t, live, abi.LiveTensors(), "a failed run makes no handle")
	assert.Equal(t, statusInvalid, int32(wt_onnx_run_values(1, nil, 0, nil, nil)))
	assert.Contains(t, lastError(), "wt_onnx_run_values: out is NULL")
	assert.Equal(t, statusInvalid, int32(wt_onnx_values_tensors(1, nil, 0, nil)))
	assert.Contains(t, lastError(), "n_outputs is NULL")
	st, _ = callOnnxRunValues(m, make([]int64, abi.MaxInputs+1), "{}")
	assert.Equal(t, statusInvalid, st)
	assert.Contains(t, lastError(), "n_tensors 4097 out of range")
}
