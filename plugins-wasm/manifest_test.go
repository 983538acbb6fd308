package plugins

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func TestParseManifestFields(t *testing.T) {
	spec, err := parseManifest([]byte(`{"abi": 1, "name": "m", "version": "0",
	  "ops": [{"name": "m.op", "doc": "An op.",
	    "inputs": [{"name": "x", "dtypes": ["f32", "bf16"]}, {"name": "idx", "dtypes": ["i64"], "no_grad": true},
	               {"name": "bias", "optional": true}],
	    "attrs": [{"name": "axes", "kind": "ints", "default": [2.0, -1]}, {"name": "to", "kind": "dtype", "required": true},
	              {"name": "w", "kind": "floats", "default": [1, 0.5]}, {"name": "s", "kind": "string", "default": null}],
	    "outputs": [{"name": "y", "shape": "broadcast", "dtype": "input:0"},
	                {"name": "count", "shape": "input:1", "dtype": "i32"},
	                {"name": "z", "shape": "infer", "dtype": "bool"}]}]}`))
	require.NoError(t, err)
	require.Len(t, spec.ops, 1)
	op := spec.ops[0]
	assert.Equal(t, []core.InputSpec{{Name: "x", DTypes: []core.DType{core.F32, core.BF16}},
		{Name: "idx", DTypes: []core.DType{core.I64}, NoGrad: true}, {Name: "bias", Optional: true}}, op.inputs)
	assert.Equal(t, []core.AttrSpec{{Name: "axes", Kind: core.AttrInts, Default: []int{2, -1}},
		{Name: "to", Kind: core.AttrDType, Required: true}, {Name: "w", Kind: core.AttrFloats, Default: []float64{1, 0.5}},
		{Name: "s", Kind: core.AttrString}}, op.attrs)
	assert.Equal(t, []outputRule{{name: "y", shape: shapeBroadcast, dtypeInput: 0},
		{name: "count", shape: shapeOfInput, shapeInput: 1, dtypeInput: -1, dtype: core.I32},
		{name: "z", shape: shapeInfer, dtypeInput: -1, dtype: core.Bool}}, op.outputs)
	assert.True(t, op.needsInfer)
}

func TestParseManifestRefusals(t *testing.T) {
	op := func(body string) string {
		return `{"abi": 1, "name": "m", "version": "0", "ops": [{"name": "m.op", "doc": "d", ` + body + `}]}`
	}
	cases := map[string]string{
		op(`"inputs": [{"name": "x", "dtypes": []}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "f32"}]`):                               `"dtypes" is empty`,
		op(`"inputs": [{"name": "x", "dtypes": ["f32", "f32"]}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "f32"}]`):                   "listed twice",
		op(`"inputs": [{"name": "x"}, {"name": "x"}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "f32"}]`):                              `input "x" has the name of input x`,
		op(`"inputs": [], "outputs": [{"name": "y", "shape": "broadcast", "dtype": "f32"}]`):                                                        `"broadcast" needs at least one input`,
		op(`"inputs": [{"name": "x"}], "outputs": []`):                                                                                              `"outputs" is empty`,
		op(`"inputs": [{"name": "1x"}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "f32"}]`):                                            `"1x" is not an identifier`,
		op(`"attrs": [{"name": "a", "kind": "int", "default": 1, "required": true}], "outputs": [{"name": "y", "shape": "infer", "dtype": "f32"}]`): "required attribute cannot have a default",
		op(`"attrs": [{"name": "a", "kind": "int", "enum": ["x"]}], "outputs": [{"name": "y", "shape": "infer", "dtype": "f32"}]`):                  `"enum" is only for string`,
		op(`"attrs": [{"name": "a", "kind": "floats", "default": [1, "2"]}], "outputs": [{"name": "y", "shape": "infer", "dtype": "f32"}]`):         "element 1",
		op(`"attrs": [{"name": "a", "kind": "float", "default": 1e999}], "outputs": [{"name": "y", "shape": "infer", "dtype": "f32"}]`):             "not a finite float",
		op(`"inputs": [{"name": "x", "no_grad": true}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "f32"}], "backward": {"x": "grad"}`): "marked no_grad",
		op(`"inputs": [{"name": "x"}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "f32"}], "backward": {"x": " "}`):                     "is empty",
		op(`"inputs": [{"name": "grad_y"}], "outputs": [{"name": "y", "shape": "input:0", "dtype": "f32"}]`):                                        `"grad_y" is reserved`,
		`{"abi": 1, "name": "m", "version": "0", "ops": [null]}`:                                                                                    "op 0 is null",
		`[1, 2]`: "not the JSON ABI.md describes",
	}
	for src, want := range cases {
		_, err := parseManifest([]byte(src))
		assert.ErrorContains(t, err, want, src)
	}
}
