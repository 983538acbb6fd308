package core_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

func TestPromoteTypes(t *testing.T) {
	cases := []struct{ a, b, want core.DType }{
		{core.F32, core.F64, core.F64},
		{core.F16, core.BF16, core.F32},
		{core.I32, core.F16, core.F16},
		{core.U8, core.I8, core.I16},
		{core.U32, core.I32, core.I64},
		{core.Bool, core.I8, core.I8},
		{core.I64, core.I32, core.I64},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, core.PromoteTypes(c.a, c.b), "%s+%s", c.a, c.b)
		assert.Equal(t, c.want, core.PromoteTypes(c.b, c.a), "%s+%s", c.b, c.a)
	}
}

func TestBroadcastShapes(t *testing.T) {
	s, err := core.BroadcastShapes(core.Shape{2, 1, 3}, core.Shape{4, 1}, core.Shape{})
	require.NoError(t, err)
	assert.Equal(t, core.Shape{2, 4, 3}, s)
	_, err = core.BroadcastShapes(core.Shape{2, 3}, core.Shape{4})
	assert.ErrorContains(t, err, "[2 3] and [4] cannot be broadcast")
}

func TestParseDType(t *testing.T) {
	d, err := core.ParseDType("torch.float32")
	require.NoError(t, err)
	assert.Equal(t, core.F32, d)
	d, err = core.ParseDType("complex64")
	require.NoError(t, err)
	assert.Equal(t, core.C64, d)
	_, err = core.ParseDType("complex32")
	assert.ErrorContains(t, err, `unknown dtype "complex32"`)
}

func TestCallRejectsBadInput(t *testing.T) {
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
	y := core.FromSlice([]float32{1, 2}, core.Shape{2})
	cases := map[string]struct {
		op    string
		in    []*core.Tensor
		attrs core.Attrs
		want  string
	}{
		"unknown op":       {"addd", []*core.Tensor{x, x}, nil, `unknown op "addd"`},
		"arity":            {"add", []*core.Tensor{x}, nil, "add: takes 2 input(s) (a, b), got 1"},
		"nil input":        {"add", []*core.Tensor{x, nil}, nil, "input 1 (b) is nil"},
		"broadcast":        {"add", []*core.Tensor{x, y}, nil, "add: shapes [2 3] and [2] cannot be broadcast"},
		"axis":             {"sum", []*core.Tensor{x}, core.Attrs{"axes": []int{2}}, "sum: axis 2 out of range for rank 2"},
		"unknown attr":     {"sum", []*core.Tensor{x}, core.Attrs{"axis": 1}, `unknown attribute(s) [axis]`},
		"attr type":        {"sum", []*core.Tensor{x}, core.Attrs{"keepdim": "yes"}, `attribute "keepdim": got string yes, want bool`},
		"missing required": {"reshape", []*core.Tensor{x}, nil, `missing required attribute "shape"`},
		"reshape count":    {"reshape", []*core.Tensor{x}, core.Attrs{"shape": []int{4}}, "cannot reshape [2 3] (6 elements) into [4]"},
		"dtype":            {"mean", []*core.Tensor{core.FromSlice([]int32{1}, core.Shape{1})}, nil, "input 0 (x) has dtype i32"},
		"bad dtype attr":   {"cast", []*core.Tensor{x}, core.Attrs{"dtype": "f128"}, `unknown dtype "f128"`},
		"negative shape":   {"zeros", nil, core.Attrs{"shape": []int{2, -1}}, "negative dimension"},
		"NaN seed":         {"randn", nil, core.Attrs{"shape": []int{2}, "seed": math.NaN()}, `attribute "seed": got float64 NaN, want int`},
		"fractional seed":  {"rand", nil, core.Attrs{"shape": []int{2}, "seed": 1.5}, `attribute "seed"`},
	}
	for name, c := range cases {
		_, err := core.Call(c.op, c.in, c.attrs)
		assert.ErrorContains(t, err, c.want, name)
	}
}

func TestErrorsAreSticky(t *testing.T) {
	x := core.FromSlice([]float32{1, 2, 3}, core.Shape{3})
	bad := x.Reshape(core.Shape{2})
	require.Error(t, bad.Err())
	chained := core.Call1("sum", nil, bad.Add(x))
	assert.Equal(t, bad.Err(), chained.Err(), "an op on an errored tensor returns the first error")
	_, err := chained.Float32s()
	assert.Error(t, err)
	x.Release()
	_, err = core.Call("add", []*core.Tensor{x, x}, nil)
	assert.ErrorIs(t, err, core.ErrReleased)
}

func TestFromSliceChecksSize(t *testing.T) {
	bad := core.FromSlice([]float32{1, 2, 3}, core.Shape{2, 2})
	assert.ErrorContains(t, bad.Err(), "data has 12 bytes, shape [2 2] of f32 needs 16")
	ints := core.FromSlice([]int{1, -2}, core.Shape{2})
	v, err := ints.Int64s()
	require.NoError(t, err)
	assert.Equal(t, core.I64, ints.DType())
	assert.Equal(t, []int64{1, -2}, v)
}

// fakeBackend is a second device with host memory and no kernels: every op
// on it must fall back to the CPU kernel with a one-time warning.
type fakeBackend struct{ core.Backend }

func (fakeBackend) Device() core.Device       { return core.Device{Kind: "fake"} }
func (fakeBackend) Kernel(string) core.Kernel { return nil }

func TestFallbackAndDeviceMismatch(t *testing.T) {
	cpu, err := core.BackendFor(core.CPU)
	require.NoError(t, err)
	core.RegisterBackend("fake", -1, func() (core.Backend, error) { return fakeBackend{cpu}, nil })
	var warn bytes.Buffer
	old := core.WarnWriter
	core.WarnWriter = &warn
	defer func() { core.WarnWriter = old }()

	fake := core.Device{Kind: "fake"}
	a := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}, fake)
	require.NoError(t, a.Err())
	s := core.Call1("mul", nil, a, a)
	s = core.Call1("mul", nil, s, a)
	require.NoError(t, s.Err())
	assert.Equal(t, fake, s.Device())
	v, err := s.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 8, 27}, v)
	assert.Equal(t, 1, bytes.Count(warn.Bytes(), []byte("mul has no fake:0 kernel")), "warn once: %s", warn.String())

	b := core.FromSlice([]float32{1, 2, 3}, core.Shape{3})
	_, err = core.Call("add", []*core.Tensor{a, b}, nil)
	assert.ErrorContains(t, err, "inputs on different devices: input 0 on fake:0, input 1 on cpu")

	// Gradients flow back across a device copy.
	w := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}).SetRequiresGrad(true)
	l := core.Call1("sum", nil, core.Call1("mul", nil, w.To(fake), a))
	require.NoError(t, l.Backward())
	g, err := w.Grad().Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, g)
	assert.Equal(t, core.CPU, w.Grad().Device())
}

func TestViewsShareStorage(t *testing.T) {
	x := core.FromSlice([]float32{0, 1, 2, 3, 4, 5}, core.Shape{2, 3})
	tr := core.Call1("transpose", nil, x)
	require.NoError(t, tr.Err())
	assert.Same(t, x.Storage(), tr.Storage())
	assert.False(t, tr.IsContiguous())
	v, err := tr.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 3, 1, 4, 2, 5}, v)
	// Reshaping a transposed tensor cannot be a view: it copies.
	flat := tr.Reshape(core.Shape{6})
	require.NoError(t, flat.Err())
	assert.NotSame(t, x.Storage(), flat.Storage())
	// Merging contiguous dims is a view.
	m := x.Reshape(core.Shape{3, 2})
	assert.Same(t, x.Storage(), m.Storage())
}

func TestAutogradAccumulatesAndNoGrad(t *testing.T) {
	w := core.FromSlice([]float64{2, 3}, core.Shape{2}).SetRequiresGrad(true)
	for i := 0; i < 2; i++ {
		l := core.Call1("sum", nil, core.Call1("mul", nil, w, w))
		require.NoError(t, l.Backward())
	}
	g, _ := w.Grad().Float64s()
	assert.Equal(t, []float64{8, 12}, g, "two backward passes accumulate 2*w twice")
	w.ZeroGrad()
	var out *core.Tensor
	core.NoGrad(func() { out = core.Call1("mul", nil, w, w) })
	assert.False(t, out.RequiresGrad())
	assert.ErrorContains(t, out.Backward(), "does not require grad")
	// A shared input used twice gets both contributions (diamond graph).
	a := core.Call1("mul", nil, w, w)
	l := core.Call1("sum", nil, core.Call1("add", nil, a, a))
	require.NoError(t, l.Backward())
	g, _ = w.Grad().Float64s()
	assert.Equal(t, []float64{8, 12}, g)
	assert.ErrorContains(t, core.FromSlice([]int32{1}, core.Shape{1}).SetRequiresGrad(true).Err(), "only floating-point")
}

// Issue 26, item 14: no op builds a tensor of more than core.MaxRank dims (a
// chain of unsqueezes reached any rank).
func TestResultRankIsBounded(t *testing.T) {
	x := core.FromSlice([]float32{1}, core.Shape{})
	for i := 0; i < core.MaxRank; i++ {
		x = core.Call1("unsqueeze", core.Attrs{"axis": 0}, x)
		if !assert.NoError(t, x.Err(), "rank %d", i+1) {
			return
		}
	}
	y := core.Call1("unsqueeze", core.Attrs{"axis": 0}, x)
	assert.ErrorContains(t, y.Err(), "unsqueeze: the result would have 65 dimensions; at most 64 are supported")
	z := core.Call1("reshape", core.Attrs{"shape": make([]int, core.MaxRank+1)}, core.FromSlice([]float32{}, core.Shape{0}))
	assert.ErrorContains(t, z.Err(), "at most 64 are supported")
}
