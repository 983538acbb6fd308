package wtplugin

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One plugin for the whole test binary, as in a real plugin's init.
func init() {
	Plugin("sdktest", "1.2.3")
	Register(Op{
		Name:    "sdktest.axpy",
		Doc:     "a*x + y, broadcast.",
		Inputs:  []Input{{Name: "x", DTypes: []string{"f32"}}, {Name: "y", DTypes: []string{"f32"}}},
		Attrs:   []Attr{{Name: "a", Kind: "float", Default: 2.0}},
		Outputs: []Output{{Name: "z", Shape: "broadcast", DType: "input:0"}},
	}, func(c *Call) error {
		a := float32(c.Attrs.Float("a"))
		x, y, z := c.Inputs[0].Float32s(), c.Inputs[1].Float32s(), c.Outputs[0].Float32s()
		for i := range z { // test-sized broadcasting: y is a scalar or as long as x
			z[i] = a*x[i%len(x)] + y[i%len(y)]
		}
		return nil
	})
	Register(Op{
		Name:    "sdktest.rows",
		Doc:     "The number of rows, as i64; fails on request.",
		Inputs:  []Input{{Name: "x"}},
		Attrs:   []Attr{{Name: "fail", Kind: "string", Default: ""}},
		Outputs: []Output{{Name: "n", Shape: "infer", DType: "i64"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			if a.String("fail") == "infer" {
				return nil, errors.New("asked to fail")
			}
			return []Meta{{}}, nil // shape [] and the manifest's dtype filled in
		},
	}, func(c *Call) error {
		switch c.Attrs.String("fail") {
		case "error":
			return errors.New("asked to fail")
		case "panic":
			_ = c.Inputs[0].Float64s() // the input is f32: a wrong view panics
		}
		c.Outputs[0].Int64s()[0] = int64(c.Inputs[0].Shape[0])
		return nil
	})
}

func TestManifest(t *testing.T) {
	var m struct {
		ABI     int    `json:"abi"`
		Name    string `json:"name"`
		Version string `json:"version"`
		Ops     []map[string]any
	}
	require.NoError(t, json.Unmarshal(Manifest(), &m))
	assert.Equal(t, 1, m.ABI)
	assert.Equal(t, "sdktest", m.Name)
	assert.Equal(t, "1.2.3", m.Version)
	require.Len(t, m.Ops, 2)
	assert.Equal(t, "sdktest.axpy", m.Ops[0]["name"])
	assert.Equal(t, []any{map[string]any{"name": "z", "shape": "broadcast", "dtype": "input:0"}}, m.Ops[0]["outputs"])
	assert.NotContains(t, m.Ops[1], "Infer", "the Go function stays out of the JSON")
}

func TestRegisterRefusesMistakes(t *testing.T) {
	k := func(*Call) error { return nil }
	ok := Op{Name: "sdktest.ok", Doc: "d", Outputs: []Output{{Name: "y", Shape: "input:0", DType: "f32"}},
		Inputs: []Input{{Name: "x"}}}
	cases := map[string]func(*Op){
		`names are "sdktest." followed by the op`:     func(o *Op) { o.Name = "other.ok" },
		"missing doc line":                            func(o *Op) { o.Doc = "" },
		"registered twice":                            func(o *Op) { o.Name = "sdktest.axpy" },
		`unknown dtype "f31"`:                         func(o *Op) { o.Inputs[0].DTypes = []string{"f31"} },
		`rule "input:1": want "input:N" with N < 1`:   func(o *Op) { o.Outputs[0].Shape = "input:1" },
		`shape rule "infer" needs Op.Infer`:           func(o *Op) { o.Outputs[0].Shape = "infer" },
		`dtype "float" is neither a dtype nor "input`: func(o *Op) { o.Outputs[0].DType = "float" },
		"no outputs":                                  func(o *Op) { o.Outputs = nil },
	}
	for want, mutate := range cases {
		op := ok
		op.Inputs = []Input{{Name: "x"}}
		op.Outputs = append([]Output{}, ok.Outputs...)
		mutate(&op)
		assert.PanicsWithValue(t, "wtplugin.Register: "+errMessage(check(op, k)), func() { Register(op, k) }, want)
		assert.ErrorContains(t, check(op, k), want)
	}
	assert.ErrorContains(t, check(ok, nil), "nil kernel")
}

func errMessage(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestRunAllocatesLikeTheHost(t *testing.T) {
	out, err := Run("sdktest.axpy", nil, Make([]int{2, 2}, []float32{1, 2, 3, 4}), Make([]int{}, []float32{10}))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, out[0].Shape)
	assert.Equal(t, []float32{12, 14, 16, 18}, out[0].Float32s(), "a defaults to 2")

	out, err = Run("sdktest.axpy", Attrs{"a": -1}, Make([]int{3, 1}, []float32{1, 2, 3}), Make([]int{1, 1}, []float32{1}))
	require.NoError(t, err)
	assert.Equal(t, []int{3, 1}, out[0].Shape)
	assert.Equal(t, []float32{0, -1, -2}, out[0].Float32s())

	_, err = Run("sdktest.axpy", nil, Make([]int{2}, []float32{1, 2}), Make([]int{3}, []float32{1, 2, 3}))
	assert.ErrorContains(t, err, "sdktest.axpy: shapes do not broadcast: [[2] [3]]")
	_, err = Run("sdktest.axpy", nil, Make([]int{2}, []float64{1, 2}), Make([]int{2}, []float32{1, 2}))
	assert.ErrorContains(t, err, "input x takes [f32], got f64")
	_, err = Run("sdktest.nope", nil)
	assert.ErrorContains(t, err, `sdktest.nope: no such op in plugin "sdktest"`)

	out, err = Run("sdktest.rows", nil, Make([]int{3, 2}, []float32{1, 2, 3, 4, 5, 6}))
	require.NoError(t, err)
	assert.Equal(t, I64, out[0].DType)
	assert.Equal(t, []int{}, out[0].Shape)
	assert.Equal(t, []int64{3}, out[0].Int64s())
}

func TestKernelFailuresBecomeErrors(t *testing.T) {
	x := Make([]int{1}, []float32{1})
	_, err := Run("sdktest.rows", Attrs{"fail": "error"}, x)
	assert.EqualError(t, err, "sdktest.rows: asked to fail")
	_, err = Run("sdktest.rows", Attrs{"fail": "panic"}, x)
	assert.EqualError(t, err, "sdktest.rows: tensor [1] is f32, viewed as f64")
	_, err = Run("sdktest.rows", Attrs{"fail": "infer"}, x)
	assert.EqualError(t, err, "sdktest.rows: asked to fail")
	_, err = Run("sdktest.axpy", Attrs{"a": "big"}, x, x)
	assert.EqualError(t, err, "sdktest.axpy: attribute a is string big, not a float")
	assert.EqualError(t, runKernel(7, &Call{}), `sdktest: no op number 7 (the plugin has 2)`)
}

// fakeMemory is linear memory for decoding tests: addresses are offsets.
type fakeMemory []byte

func (m fakeMemory) read(addr, n uint32) []byte { return m[addr : addr+n] }

// record writes a call record at 64 with attrs at 8 and tensor data at 512.
func record(attrs string, tensors ...Tensor) fakeMemory {
	mem := make(fakeMemory, 4096)
	le := binary.LittleEndian
	copy(mem[8:], attrs)
	le.PutUint32(mem[64:], 1)
	le.PutUint32(mem[68:], uint32(len(tensors)-1))
	le.PutUint32(mem[72:], 8)
	le.PutUint32(mem[76:], uint32(len(attrs)))
	data := uint32(512)
	for i, t := range tensors {
		r := mem[80+48*i:]
		if t.Data != nil {
			le.PutUint32(r, data)
			copy(mem[data:], t.Data)
			data += uint32(len(t.Data)+7) &^ 7
		}
		le.PutUint32(r[4:], uint32(len(t.Data)))
		le.PutUint32(r[8:], uint32(t.DType))
		le.PutUint32(r[12:], uint32(len(t.Shape)))
		for d, n := range t.Shape {
			le.PutUint32(r[16+4*d:], uint32(n))
		}
	}
	return mem
}

func TestDecodeCallRecord(t *testing.T) {
	mem := record(`{"a": 0.5}`, Make([]int{2, 3}, []float32{1, 2, 3, 4, 5, 6}), Zeros(F32, []int{2, 3}))
	c, err := decodeCall(mem.read, 64)
	require.NoError(t, err)
	require.Len(t, c.Inputs, 1)
	require.Len(t, c.Outputs, 1)
	assert.Equal(t, 0.5, c.Attrs.Float("a"))
	assert.Equal(t, []int{2, 3}, c.Inputs[0].Shape)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, c.Inputs[0].Float32s())

	// The kernel writes straight into the memory: no copy back is needed.
	c.Outputs[0].Float32s()[5] = 42
	assert.Equal(t, math.Float32bits(42), binary.LittleEndian.Uint32(mem[512+24+20:]))

	// An absent optional input decodes as not present.
	c, err = decodeCall(record("", Tensor{}, Zeros(F32, []int{1})).read, 64)
	require.NoError(t, err)
	assert.False(t, c.Inputs[0].Present())
	assert.True(t, c.Outputs[0].Present())
	assert.Empty(t, c.Attrs)

	bad := record("", Make([]int{2}, []float32{1, 2}), Zeros(F32, []int{2}))
	binary.LittleEndian.PutUint32(bad[80+4:], 12)
	_, err = decodeCall(bad.read, 64)
	assert.EqualError(t, err, "call record: input 0 (f32 [2]) has 12 bytes, want 8")
	binary.LittleEndian.PutUint32(bad[80+48+12:], 9)
	binary.LittleEndian.PutUint32(bad[80+4:], 8)
	_, err = decodeCall(bad.read, 64)
	assert.EqualError(t, err, "call record: output 0 has 9 dims (at most 8)")
	binary.LittleEndian.PutUint32(bad[80+48+12:], 1)
	binary.LittleEndian.PutUint32(bad[80+48+8:], 12)
	_, err = decodeCall(bad.read, 64)
	assert.EqualError(t, err, "call record: output 0 has unknown dtype code 12")
	_, err = decodeCall(record("{", Zeros(F32, []int{1}), Zeros(F32, []int{1})).read, 64)
	assert.ErrorContains(t, err, `call record: attributes "{"`)
}

func TestInferRequests(t *testing.T) {
	ans, err := runInfer(1, []byte(`{"op": "sdktest.rows", "inputs": [{"shape": [4, 2], "dtype": "u8"}], "attrs": {"fail": ""}}`))
	require.NoError(t, err)
	assert.JSONEq(t, `[{"shape": [], "dtype": "i64"}]`, string(ans))
	_, err = runInfer(1, []byte(`{"op": "sdktest.rows", "inputs": [], "attrs": {"fail": "infer"}}`))
	assert.EqualError(t, err, "sdktest.rows: asked to fail")
	_, err = runInfer(0, []byte(`{}`))
	assert.EqualError(t, err, `sdktest.axpy: has no "infer" output`)
	_, err = runInfer(1, []byte(`not json`))
	assert.ErrorContains(t, err, `sdktest.rows: infer request "not json"`)
}

func TestAttrs(t *testing.T) {
	var a Attrs
	require.NoError(t, json.Unmarshal([]byte(`{"f": 1.5, "i": 3, "b": true, "s": "x", "fs": [1, 2.5],
		"is": [1, -2], "inf": "-inf", "frac": 2.5}`), &a))
	assert.Equal(t, 1.5, a.Float("f"))
	assert.Equal(t, 3.0, a.Float("i"), "an integral JSON number is a float too")
	assert.Equal(t, 3, a.Int("i"))
	assert.True(t, a.Bool("b"))
	assert.Equal(t, "x", a.String("s"))
	assert.Equal(t, []float64{1, 2.5}, a.Floats("fs"))
	assert.Equal(t, []int{1, -2}, a.Ints("is"))
	assert.True(t, math.IsInf(a.Float("inf"), -1))
	assert.PanicsWithValue(t, "attribute frac is float64 2.5, not an int", func() { a.Int("frac") })
	assert.PanicsWithValue(t, "attribute b is bool true, not a float", func() { a.Float("b") })
	assert.Panics(t, func() { a.Float("missing") })
}

func TestDTypes(t *testing.T) {
	for d := F32; d <= Bool; d++ {
		back, err := ParseDType(d.String())
		require.NoError(t, err)
		assert.Equal(t, d, back)
		assert.NotZero(t, d.Size())
	}
	_, err := ParseDType("float32")
	assert.ErrorContains(t, err, `unknown dtype "float32"`)
	assert.Equal(t, "dtype(99)", DType(99).String())
	assert.PanicsWithValue(t, "wtplugin.Make: shape [2 2] holds 4 elements, got 3 values",
		func() { Make([]int{2, 2}, []float32{1, 2, 3}) })
	// A named element type is its underlying type's dtype.
	type celsius float32
	x := Make([]int{2}, []celsius{1.5, -2})
	assert.Equal(t, F32, x.DType)
	assert.Equal(t, []celsius{1.5, -2}, View[celsius](x))
	assert.Equal(t, []float32{1.5, -2}, x.Float32s())
}
