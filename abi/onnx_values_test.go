package abi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onnx.run_values on onnx/testdata/sdk_values_model.onnx (a sequence, an
// optional tensor and an optional sequence each way; make_sdk_values_model.py
// writes it and the reference outputs in sdk_values_model.json).

var sdkValuesModel = filepath.Join("..", "onnx", "testdata", "sdk_values_model.onnx")

// onnxRefTensor is a tensor as sdk_values_model.json holds it.
type onnxRefTensor struct {
	Shape []int64
	Data  []any // numbers, or booleans for has
}

// valuesCase is one case of sdk_values_model.json: each value a tensor
// object, a list of them (a sequence) or null (an empty optional).
type valuesCase struct {
	Inputs  map[string]json.RawMessage
	Outputs map[string]json.RawMessage
}

func readValuesCases(t *testing.T) []valuesCase {
	raw, err := os.ReadFile(filepath.Join("..", "onnx", "testdata", "sdk_values_model.json"))
	require.NoError(t, err)
	var cases []valuesCase
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.Len(t, cases, 2)
	return cases
}

func loadValuesModel(t *testing.T) int64 {
	t.Helper()
	m, err := onnxLoad(sdkValuesModel, "")
	require.NoError(t, err)
	t.Cleanup(func() { _ = onnxFree(m) })
	return m
}

// flatten turns a case's inputs into the flat tensors and the layout
// onnx.run_values takes, as an SDK would.
func flatten(t *testing.T, ins map[string]json.RawMessage) ([]int64, string) {
	t.Helper()
	var flat []int64
	layout := map[string]any{}
	add := func(raw json.RawMessage) int {
		var r onnxRefTensor
		require.NoError(t, json.Unmarshal(raw, &r))
		vals := make([]float32, len(r.Data))
		for i, v := range r.Data {
			vals[i] = float32(v.(float64))
		}
		flat = append(flat, f32Tensor(t, r.Shape, vals...))
		return len(flat) - 1
	}
	for name, raw := range ins {
		var list []json.RawMessage
		switch {
		case string(raw) == "null":
			layout[name] = nil
		case json.Unmarshal(raw, &list) == nil:
			idx := []int{}
			for _, r := range list {
				idx = append(idx, add(r))
			}
			layout[name] = idx
		default:
			layout[name] = add(raw)
		}
	}
	text, err := json.Marshal(layout)
	require.NoError(t, err)
	return flat, string(text)
}

func TestOnnxInfoJSONNamesEachKind(t *testing.T) {
	info, err := onnxInfoJSON(loadValuesModel(t))
	require.NoError(t, err)
	var got struct {
		Inputs, Outputs []struct{ Name, Kind, DType string }
	}
	require.NoError(t, json.Unmarshal([]byte(info), &got))
	kinds := map[string]string{}
	for _, v := range append(got.Inputs, got.Outputs...) {
		kinds[v.Name] = v.Kind
		assert.NotEmpty(t, v.DType, v.Name)
	}
	assert.Equal(t, map[string]string{"x": "tensor", "parts": "sequence", "maybe": "optional_tensor",
		"maybe_parts": "optional_sequence", "pieces": "sequence", "joined": "tensor", "has": "tensor",
		"maybe_out": "optional_tensor", "parts_out": "optional_sequence"}, kinds)
}

func TestOnnxRunValuesMatchesTheReference(t *testing.T) {
	m := loadValuesModel(t)
	for i, c := range readValuesCases(t) {
		before := LiveTensors()
		flat, layout := flatten(t, c.Inputs)
		v, err := onnxRunValues(m, flat, layout, false)
		require.NoError(t, err, "case %d: %s", i, layout)
		outLayout, err := onnxValuesLayoutJSON(v)
		require.NoError(t, err)
		outs, err := onnxValuesTensors(v)
		require.NoError(t, err)
		hs := make([]int64, outs.Len())
		outs.Handles(hs)
		require.NoError(t, onnxValuesFree(v))
		errorIs(t, onnxValuesFree(v), StatusHandle, "onnx values handle")

		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(outLayout), &got))
		assert.Len(t, got, len(c.Outputs), outLayout)
		for name, want := range c.Outputs {
			checkValue(t, name, got[name], want, hs)
		}
		if i == 0 {
			assert.Equal(t, `{"pieces":[0,1,2],"joined":3,"has":4,"maybe_out":5,"parts_out":[6,7]}`, outLayout,
				"every output in the model's order, tensors numbered as they come")
		} else {
			assert.Equal(t, `{"pieces":[0,1,2],"joined":3,"has":4,"maybe_out":null,"parts_out":null}`, outLayout)
		}
		for _, h := range append(flat, hs...) {
			require.NoError(t, TensorFree(h))
		}
		assert.Equal(t, before, LiveTensors(), "case %d: every tensor freed", i)
	}
}

// checkValue compares output name, laid out as layout over handles hs,
// with the reference value want.
func checkValue(t *testing.T, name string, layout, want json.RawMessage, hs []int64) {
	t.Helper()
	if string(want) == "null" {
		assert.Equal(t, "null", string(layout), name)
		return
	}
	var wantList []onnxRefTensor
	if json.Unmarshal(want, &wantList) == nil {
		var idx []int
		require.NoError(t, json.Unmarshal(layout, &idx), "%s: %s", name, layout)
		require.Len(t, idx, len(wantList), name)
		for k, w := range wantList {
			checkTensor(t, name, hs[idx[k]], w)
		}
		return
	}
	var w onnxRefTensor
	require.NoError(t, json.Unmarshal(want, &w))
	var k int
	require.NoError(t, json.Unmarshal(layout, &k), "%s: %s", name, layout)
	checkTensor(t, name, hs[k], w)
}

func checkTensor(t *testing.T, name string, h int64, want onnxRefTensor) {
	t.Helper()
	shape, err := TensorShape(h)
	require.NoError(t, err)
	got := make([]int64, len(shape))
	for i, d := range shape {
		got[i] = int64(d)
	}
	assert.Equal(t, want.Shape, got, name)
	if b, ok := want.Data[0].(bool); ok {
		raw, err := TensorToHost(h)
		require.NoError(t, err)
		assert.Equal(t, b, raw[0] != 0, name)
		return
	}
	wantVals := make([]float32, len(want.Data))
	for i, v := range want.Data {
		wantVals[i] = float32(v.(float64))
	}
	assert.Equal(t, wantVals, f32Values(t, h), name)
}

func TestOnnxRunValuesTensorsGiveNewHandlesEachTime(t *testing.T) {
	m := loadValuesModel(t)
	flat, layout := flatten(t, readValuesCases(t)[1].Inputs)
	v, err := onnxRunValues(m, flat, layout, false)
	require.NoError(t, err)
	defer func() { _ = onnxValuesFree(v) }()
	a, err := onnxValuesTensors(v)
	require.NoError(t, err)
	b, err := onnxValuesTensors(v)
	require.NoError(t, err)
	ha, hb := make([]int64, a.Len()), make([]int64, b.Len())
	a.Handles(ha)
	b.Handles(hb)
	assert.Len(t, ha, 5, "three pieces, joined and has")
	assert.NotEqual(t, ha, hb)
	require.NoError(t, onnxValuesFree(v))
	assert.Equal(t, f32Values(t, ha[0]), f32Values(t, hb[0]), "the handles outlive the values")
	for _, h := range append(append(flat, ha...), hb...) {
		require.NoError(t, TensorFree(h))
	}
}

func TestOnnxRunValuesRefusesBadLayouts(t *testing.T) {
	m := loadValuesModel(t)
	x := f32Tensor(t, []int64{3, 2}, 1, 2, 3, 4, 5, 6)
	p := f32Tensor(t, []int64{1, 2}, 7, 8)
	o := f32Tensor(t, []int64{2}, 1, 2)
	defer func() {
		for _, h := range []int64{x, p, o} {
			_ = TensorFree(h)
		}
	}()
	ok := []int64{x, p, o}
	for _, c := range []struct {
		tensors []int64
		layout  string
		status  Status
		msg     string
	}{
		{ok, `[0, 1]`, StatusInvalid, `layout_json must be a JSON object of input names`},
		{ok, `{"x": 0, "parts": [1]`, StatusInvalid, `layout_json is not valid JSON`},
		{ok, `{"x": 0} {}`, StatusInvalid, `has more after its object`},
		{ok, `{"x": 0, "x": 0, "parts": [1], "maybe": 2, "maybe_parts": null}`, StatusInvalid, `gives input "x" twice`},
		{ok, `{"x": 3, "parts": [1], "maybe": 2, "maybe_parts": null}`, StatusInvalid, `input "x": tensor index 3 out of range: n_tensors is 3`},
		{ok, `{"x": -1, "parts": [1], "maybe": 2, "maybe_parts": null}`, StatusInvalid, `tensor index -1 out of range`},
		{ok, `{"x": 0, "parts": [1, 1.5], "maybe": 2, "maybe_parts": null}`, StatusInvalid, `input "parts" (a sequence), element 1: the number 1.5 is not a tensor index`},
		{ok, `{"x": "0", "parts": [1], "maybe": 2, "maybe_parts": null}`, StatusInvalid, `input "x": "0" is not a tensor index, a list of them (a sequence) or null`},
		{ok, `{"x": 0, "parts": [1], "maybe": null, "maybe_parts": null}`, StatusInvalid, `uses no tensor 2`},
		{[]int64{x, 0}, `{"x": 0, "parts": [1]}`, StatusInvalid, `tensor 1 is handle 0`},
		{[]int64{x, 987654321}, `{"x": 0, "parts": [1]}`, StatusHandle, `input 1`},
		// The model's kinds: the importer names the input, the kind and the value.
		{ok, `{"x": 0, "parts": 1, "maybe": 2, "maybe_parts": null}`, StatusInvalid, `input "parts": the model declares a sequence of tensors, got a f32 tensor of shape [1 2]`},
		{ok, `{"x": [0], "parts": [1], "maybe": 2, "maybe_parts": null}`, StatusInvalid, `input "x": the model declares a tensor, got a sequence of 1 f32 tensors`},
		{ok, `{"x": null, "parts": [1], "maybe": 2, "maybe_parts": [0]}`, StatusInvalid, `input "x": the model declares a tensor, got an empty optional (None)`},
		{ok, `{"x": 0, "parts": null, "maybe": 2, "maybe_parts": [1]}`, StatusInvalid, `input "parts": the model declares a sequence of tensors, got an empty optional`},
		{ok, `{"x": 0, "parts": [1], "maybe": [2], "maybe_parts": null}`, StatusInvalid, `input "maybe": the model declares an optional tensor, got a sequence`},
		{ok, `{"x": 0, "parts": [1], "maybe": null, "maybe_parts": 2}`, StatusInvalid, `input "maybe_parts": the model declares an optional sequence of tensors, got a f32 tensor`},
		{ok, `{"x": 0, "parts": [1], "maybe": 2}`, StatusInvalid, `input "maybe_parts" is missing`},
		{ok, `{"x": 0, "parts": [1], "maybe": 2, "maybe_parts": null, "z": []}`, StatusInvalid, `the model has no input "z"`},
	} {
		_, err := onnxRunValues(m, c.tensors, c.layout, false)
		errorIs(t, err, c.status, c.msg)
	}
	_, err := onnxRunValues(m+1000, ok, `{}`, false)
	errorIs(t, err, StatusHandle, "onnx model handle")
	for _, call := range []func(int64) error{
		func(h int64) error { _, err := onnxValuesLayoutJSON(h); return err },
		func(h int64) error { _, err := onnxValuesTensors(h); return err },
		onnxValuesFree,
	} {
		errorIs(t, call(424242), StatusHandle, "unknown onnx values handle 424242")
	}
}

func TestOnnxRunValuesRunsTensorModelsToo(t *testing.T) {
	m, err := onnxLoad(filepath.Join("..", "onnx", "testdata", "sdk_model.onnx"), "")
	require.NoError(t, err)
	defer func() { _ = onnxFree(m) }()
	x := f32Tensor(t, []int64{2, 4}, 1, 2, 3, 4, -1, 0, 1, 0)
	scale := f32Tensor(t, []int64{1}, 2)
	b := f32Tensor(t, []int64{3}, 10, 0, -10)
	v, err := onnxRunValues(m, []int64{x, scale, b}, `{"scale": 1, "x": 0, "b": 2}`, false)
	require.NoError(t, err)
	layout, err := onnxValuesLayoutJSON(v)
	require.NoError(t, err)
	assert.Equal(t, `{"y":0,"top":1}`, layout)
	outs, err := onnxValuesTensors(v)
	require.NoError(t, err)
	hs := make([]int64, outs.Len())
	outs.Handles(hs)
	require.NoError(t, onnxValuesFree(v))
	assert.InDeltaSlice(t, []float32{22, 4, 0, 21.2, 1.2, 0}, f32Values(t, hs[0]), 1e-5, "the initializer b overridden")
	_, err = onnxRunValues(m, []int64{x, scale, b}, `{"scale": 1, "x": 0, "b": [2]}`, false)
	errorIs(t, err, StatusInvalid, `input "b" overrides an initializer, a tensor; got a sequence of 1 f32 tensors`)
	for _, h := range append([]int64{x, scale, b}, hs...) {
		require.NoError(t, TensorFree(h))
	}
}

// A STRING input or output (onnx/testdata/strings_model.onnx) cannot cross
// the C ABI: the call is refused naming it, rather than dropping the value.
func TestOnnxRunValuesRefusesStringTensors(t *testing.T) {
	m, err := onnxLoad(filepath.Join("..", "onnx", "testdata", "strings_model.onnx"), "")
	require.NoError(t, err)
	defer func() { _ = onnxFree(m) }()
	info, err := onnxInfoJSON(m)
	require.NoError(t, err)
	assert.Contains(t, info, `"kind":"strings"`)
	_, err = onnxRunValues(m, nil, `{}`, true)
	require.Error(t, err)
	assert.Equal(t, StatusUnsupported, StatusOf(err))
	assert.Contains(t, err.Error(), `input "words" is an ONNX STRING tensor`)
}
