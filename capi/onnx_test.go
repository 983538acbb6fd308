package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/core"
)

// The SDKs' ONNX model (onnx/testdata/make_sdk_model.py writes it and the
// outputs onnx's reference evaluator gives), through the C calls.

var sdkModel = filepath.Join("..", "onnx", "testdata", "sdk_model.onnx")

type sdkCase struct {
	Inputs struct {
		X struct {
			Shape []int64
			Data  []float32
		} `json:"x"`
		Scale []float32 `json:"scale"`
	} `json:"inputs"`
	Outputs struct {
		Y   struct{ Data []float32 } `json:"y"`
		Top []int64                  `json:"top"`
	} `json:"outputs"`
	OverrideB    []float32 `json:"override_b"`
	OutputsWithB struct {
		Y   []float32 `json:"y"`
		Top []int64   `json:"top"`
	} `json:"outputs_with_b"`
}

func readSDKCase(t *testing.T) sdkCase {
	raw, err := os.ReadFile(filepath.Join("..", "onnx", "testdata", "sdk_model.json"))
	require.NoError(t, err)
	var c sdkCase
	require.NoError(t, json.Unmarshal(raw, &c))
	return c
}

func loadSDKModel(t *testing.T) int64 {
	t.Helper()
	st, m := callOnnxLoad(sdkModel, "")
	require.Equal(t, int32(statusOK), st, lastError())
	t.Cleanup(func() { callOnnxFree(m) })
	return m
}

func i64s(b []byte) []int64 {
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

func TestOnnxLoadNamesAndInfo(t *testing.T) {
	pinThread(t)
	m := loadSDKModel(t)
	st, ins := callOnnxNames(m, false)
	require.Equal(t, int32(statusOK), st, lastError())
	assert.Equal(t, []string{"x", "scale"}, ins, "b has an initializer: not an input a caller must supply")
	st, outs := callOnnxNames(m, true)
	require.Equal(t, int32(statusOK), st, lastError())
	assert.Equal(t, []string{"y", "top"}, outs)
	assert.Equal(t, statusInvalid, callOnnxName(m, true, 2))
	assert.Contains(t, lastError(), "output index 2 out of range (0..1)")
	assert.Equal(t, statusInvalid, callOnnxName(m, false, -1))
	assert.Contains(t, lastError(), "input index -1 out of range")

	st, info := callOnnxInfo(m)
	require.Equal(t, int32(statusOK), st, lastError())
	assert.JSONEq(t, `{"opset": 17, "device": "cpu", "inputs": [
		{"name": "x", "kind": "tensor", "dtype": "f32", "shape": ["batch", 4]},
		{"name": "scale", "kind": "tensor", "dtype": "f32", "shape": [1]}],
		"outputs": [{"name": "y", "kind": "tensor", "dtype": "f32", "shape": ["batch", 3]},
		{"name": "top", "kind": "tensor", "dtype": "i64", "shape": ["batch"]}]}`, info)
}

func TestOnnxRunNamedInputs(t *testing.T) {
	pinThread(t)
	c := readSDKCase(t)
	m := loadSDKModel(t)
	x := mustTensor(t, c.Inputs.X.Data, c.Inputs.X.Shape...)
	scale := mustTensor(t, c.Inputs.Scale, 1)
	defer callFree(x)
	defer callFree(scale)

	// Names in any order; the outputs come in the model's.
	st, outs, n := callOnnxRun(m, []string{"scale", "x"}, []int64{scale, x}, 2)
	require.Equal(t, int32(statusOK), st, lastError())
	require.Equal(t, int32(2), n)
	st, y := callToHost(outs[0], 4*6)
	require.Equal(t, int32(statusOK), st, lastError())
	assert.InDeltaSlice(t, c.Outputs.Y.Data, f32s(y), 1e-6)
	st, top := callToHost(outs[1], 8*2)
	require.Equal(t, int32(statusOK), st, lastError())
	assert.Equal(t, c.Outputs.Top, i64s(top))

	// An initializer the graph lists as an input is overridden by name.
	b := mustTensor(t, c.OverrideB, 3)
	defer callFree(b)
	st, outs2, _ := callOnnxRun(m, []string{"x", "scale", "b"}, []int64{x, scale, b}, 2)
	require.Equal(t, int32(statusOK), st, lastError())
	_, y = callToHost(outs2[0], 4*6)
	assert.InDeltaSlice(t, c.OutputsWithB.Y, f32s(y), 1e-5)
	_, top = callToHost(outs2[1], 8*2)
	assert.Equal(t, c.OutputsWithB.Top, i64s(top))

	// The outputs outlive the model.
	require.Equal(t, int32(statusOK), callOnnxFree(m), lastError())
	st, y = callToHost(outs[0], 4*6)
	require.Equal(t, int32(statusOK), st, lastError())
	assert.InDeltaSlice(t, c.Outputs.Y.Data, f32s(y), 1e-6)
	for _, h := range append(outs, outs2...) {
		assert.Equal(t, int32(statusOK), callFree(h))
	}
	st, _, _ = callOnnxRun(m, []string{"x", "scale"}, []int64{x, scale}, 2)
	assert.Equal(t, statusHandle, st)
	assert.Contains(t, lastError(), "was already freed")
}

func TestOnnxRunErrors(t *testing.T) {
	pinThread(t)
	c := readSDKCase(t)
	m := loadSDKModel(t)
	x := mustTensor(t, c.Inputs.X.Data, c.Inputs.X.Shape...)
	scale := mustTensor(t, c.Inputs.Scale, 1)
	defer callFree(x)
	defer callFree(scale)
	live := abi.LiveTensors()
	for _, tc := range []struct {
		names  []string
		inputs []int64
		outCap int
		status int32
		msg    string
	}{
		{[]string{"x"}, []int64{x}, 2, statusInvalid, `input "scale" is missing`},
		{[]string{"x", "scale", "z"}, []int64{x, scale, x}, 2, statusInvalid, `the model has no input "z" (inputs: x, scale)`},
		{[]string{"x", "x"}, []int64{x, scale}, 2, statusInvalid, `input "x" is given twice`},
		{[]string{"x", "\x00"}, []int64{x, scale}, 2, statusInvalid, "names[1] is NULL"},
		{[]string{"x", "scale"}, []int64{x, 0}, 2, statusInvalid, `input 1 ("scale") is handle 0`},
		{[]string{"x", "scale"}, []int64{x, 987654321}, 2, statusHandle, "unknown tensor handle 987654321"},
		{[]string{"x", "scale"}, []int64{scale, x}, 2, statusInvalid, `input "x": shape [1] has rank 1, the model declares rank 2`},
		{[]string{"x", "scale"}, []int64{x, scale}, 1, statusBuffer, "returns 2 outputs, out_cap is 1"},
	} {
		st, _, _ := callOnnxRun(m, tc.names, tc.inputs, tc.outCap)
		assert.Equal(t, tc.status, st, "%v: %s", tc.names, lastError())
		assert.Contains(t, lastError(), tc.msg)
	}
	assert.Equal(t, live, abi.LiveTensors(), "a failed run makes no handle")
	st, _, n := callOnnxRun(m, []string{"x", "scale"}, []int64{x, scale}, 0)
	assert.Equal(t, statusBuffer, st)
	assert.Equal(t, int32(2), n, "*n_outputs says how many")
	assert.Equal(t, statusInvalid, int32(wt_onnx_run(1, nil, nil, 0, nil, 0, nil)))
	assert.Contains(t, lastError(), "n_outputs is NULL")
}

func TestOnnxLoadErrors(t *testing.T) {
	pinThread(t)
	st, _ := callOnnxLoad(filepath.Join(t.TempDir(), "absent.onnx"), "")
	assert.Equal(t, int32(abi.StatusIO), st)
	assert.Contains(t, lastError(), "absent.onnx: no such file or directory")
	st, _ = callOnnxLoad("", "")
	assert.Equal(t, statusInvalid, st)
	assert.Contains(t, lastError(), "path is NULL or empty")
	st, _ = callOnnxLoad(sdkModel, "nosuchdevice")
	assert.NotEqual(t, int32(statusOK), st)
	assert.Contains(t, lastError(), "nosuchdevice")

	st, _ = callOnnxLoadBytes([]byte{0xff, 0xff, 0xff})
	assert.Equal(t, statusInvalid, st)
	assert.Contains(t, lastError(), "onnx: parsing ModelProto")
	st, _ = callOnnxLoadBytes(nil)
	assert.Equal(t, statusInvalid, st)
	assert.Contains(t, lastError(), "the model has no graph")

	// An operator the importer does not know is named with its node.
	raw, err := os.ReadFile(sdkModel)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(raw, []byte("Relu")))
	st, _ = callOnnxLoadBytes(bytes.Replace(raw, []byte("Relu"), []byte("Relq"), 1))
	assert.Equal(t, statusInvalid, st)
	assert.Contains(t, lastError(), "Relq")

	assert.Equal(t, statusInvalid, int32(wt_onnx_load(nil, nil, nil)))
	assert.Contains(t, lastError(), "out is NULL")
	assert.Equal(t, statusInvalid, int32(wt_onnx_load_bytes(nil, 4, nil, nil)))
	assert.Equal(t, statusHandle, callOnnxFree(123456789))
	assert.Contains(t, lastError(), "unknown onnx model handle 123456789")
	st, _ = callOnnxInfo(123456789)
	assert.Equal(t, statusHandle, st)
}

func TestOnnxLoadBytesRunsLikeLoad(t *testing.T) {
	pinThread(t)
	raw, err := os.ReadFile(sdkModel)
	require.NoError(t, err)
	st, m := callOnnxLoadBytes(raw)
	require.Equal(t, int32(statusOK), st, lastError())
	defer callOnnxFree(m)
	c := readSDKCase(t)
	x := mustTensor(t, c.Inputs.X.Data, c.Inputs.X.Shape...)
	scale := mustTensor(t, c.Inputs.Scale, 1)
	defer callFree(x)
	defer callFree(scale)
	st, outs, _ := callOnnxRun(m, []string{"x", "scale"}, []int64{x, scale}, 4)
	require.Equal(t, int32(statusOK), st, lastError())
	_, y := callToHost(outs[0], 4*6)
	assert.InDeltaSlice(t, c.Outputs.Y.Data, f32s(y), 1e-6)
	dt, err := abi.TensorDType(outs[1])
	require.NoError(t, err)
	assert.Equal(t, core.I64, dt)
	for _, h := range outs {
		callFree(h)
	}
}
