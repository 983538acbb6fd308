package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// attrs is an AttrList over Go values, as a test (or a Go caller) has them.
type attrs []Attr

func (a attrs) Len() int               { return len(a) }
func (a attrs) At(i int) (Attr, error) { return a[i], nil }

func f32Tensor(t *testing.T, shape []int64, vals ...float32) int64 {
	t.Helper()
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	l, err := ParseLayout(int64(core.F32), shape, "cpu")
	require.NoError(t, err)
	h, err := TensorFromData(l, raw)
	require.NoError(t, err)
	return h
}

func f32Values(t *testing.T, h int64) []float32 {
	t.Helper()
	raw, err := TensorToHost(h)
	require.NoError(t, err)
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// errorIs asserts err's status and that its message contains msg.
func errorIs(t *testing.T, err error, s Status, msg string) {
	t.Helper()
	require.Error(t, err)
	assert.Equal(t, s, StatusOf(err), err.Error())
	assert.Contains(t, err.Error(), msg)
}

func TestHandlesAreNeverReused(t *testing.T) {
	before := LiveTensors()
	h := f32Tensor(t, []int64{2}, 1, 2)
	assert.Equal(t, before+1, LiveTensors())
	require.NoError(t, TensorRetain(h))
	require.NoError(t, TensorFree(h))
	require.NoError(t, TensorFree(h))
	assert.Equal(t, before, LiveTensors())
	errorIs(t, TensorFree(h), StatusHandle, fmt.Sprintf("tensor handle %d was already freed (double free)", h))
	_, err := TensorShape(h)
	errorIs(t, err, StatusHandle, "was already freed")
	_, err = TensorOf(1 << 60)
	errorIs(t, err, StatusHandle, "unknown tensor handle")
	assert.NotEqual(t, h, f32Tensor(t, []int64{1}, 0), "a freed handle came back")
}

func TestOpWithAttributes(t *testing.T) {
	x := f32Tensor(t, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	defer TensorFree(x)
	outs, err := Op("sum", []int64{x}, attrs{{Name: "axes", Kind: AttrInts, Ints: []int64{1}}, {Name: "keepdim", Kind: AttrBool, I: 1}}, false)
	require.NoError(t, err)
	require.Equal(t, 1, outs.Len())
	hs := make([]int64, 1)
	outs.Handles(hs)
	defer TensorFree(hs[0])
	assert.Equal(t, []float32{6, 15}, f32Values(t, hs[0]))
	shape, err := TensorShape(hs[0])
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1}, shape)
}

func TestBadCallsSayWhatWasWrong(t *testing.T) {
	x := f32Tensor(t, []int64{2}, 1, 2)
	defer TensorFree(x)
	tooLong := make([]int64, MaxAttrList+1)
	cases := []struct {
		name   string
		err    func() error
		status Status
		msg    string
	}{
		{"unknown op", opErr("nope", []int64{x}, nil), StatusInvalid, `unknown op "nope"`},
		{"freed input", opErr("neg", []int64{1 << 60}, nil), StatusHandle, "neg: input 0: unknown tensor handle"},
		{"too many inputs", opErr("add", make([]int64, MaxInputs+1), nil), StatusInvalid, "add: n_inputs 4097 out of range (0..4096)"},
		{"no name", opErr("sum", []int64{x}, attrs{{Kind: AttrInt}}), StatusInvalid, "sum: attribute 0 has no name"},
		{"twice", opErr("sum", []int64{x}, attrs{{Name: "keepdim", Kind: AttrBool}, {Name: "keepdim", Kind: AttrBool}}), StatusInvalid, `attribute "keepdim" given twice`},
		{"unknown kind", opErr("sum", []int64{x}, attrs{{Name: "axes", Kind: 42}}), StatusInvalid, "unknown kind 42"},
		{"dtype code", opErr("cast", []int64{x}, attrs{{Name: "dtype", Kind: AttrDType, I: 99}}), StatusInvalid, "unknown dtype code 99"},
		{"long list", opErr("sum", []int64{x}, attrs{{Name: "axes", Kind: AttrInts, Ints: tooLong}}), StatusInvalid, "list length 1048577 out of range"},
		{"too many attrs", opErr("sum", []int64{x}, make(attrs, MaxAttrs+1)), StatusInvalid, "n_attrs 257 out of range (0..256)"},
		{"dtype", layoutErr(99, []int64{2}, ""), StatusInvalid, "unknown dtype code 99"},
		{"extent", layoutErr(1, []int64{-2}, ""), StatusInvalid, "dimension 0 of the shape is -2"},
		{"rank", layoutErr(1, make([]int64, 65), ""), StatusInvalid, "ndim 65 out of range (0..64)"},
		{"device", layoutErr(1, nil, "tpu"), StatusUnsupported, `device "tpu"`},
		{"data size", func() error {
			l, _ := ParseLayout(1, []int64{2}, "")
			_, err := TensorFromData(l, make([]byte, 3))
			return err
		}, StatusInvalid, "data has 3 bytes, shape [2] of f32 needs 8"},
		{"to no device", func() error { _, err := TensorToDevice(x, "", false); return err }, StatusInvalid, "device is NULL or empty"},
		{"device index", func() error { _, err := DeviceName(-1); return err }, StatusInvalid, "device index -1 out of range"},
		{"option", func() error { return DeviceSetOption("cpu", "allow_tf32", 1) }, StatusUnsupported, "allow_tf32 is a CUDA option"},
		{"checkpoint", func() error { _, err := SafetensorsHeader([]byte{1, 2}, 2, "w.safetensors"); return err }, StatusInvalid, "w.safetensors: "},
		{"checkpoint size", func() error { _, err := SafetensorsHeader(make([]byte, 9), 8, ""); return err }, StatusInvalid, "9 bytes given of a file of 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { errorIs(t, c.err(), c.status, c.msg) })
	}
}

func opErr(name string, ins []int64, a AttrList) func() error {
	return func() error {
		outs, err := Op(name, ins, a, false)
		if err == nil {
			hs := make([]int64, outs.Len())
			outs.Handles(hs)
			for _, h := range hs {
				_ = TensorFree(h)
			}
		}
		return err
	}
}

func layoutErr(dtype int64, dims []int64, device string) func() error {
	return func() error { _, err := ParseLayout(dtype, dims, device); return err }
}

func TestStatusOf(t *testing.T) {
	assert.Equal(t, StatusOK, StatusOf(nil))
	assert.Equal(t, StatusInvalid, StatusOf(errors.New("bad shape")))
	assert.Equal(t, StatusOutOfMemory, StatusOf(errors.New("nonzero: cannot allocate 800 bytes")))
	assert.Equal(t, StatusUnsupported, StatusOf(fmt.Errorf("open: %w", core.ErrDeviceUnavailable)))
	assert.Equal(t, StatusHandle, StatusOf(Prefix(Errorf(StatusHandle, "gone"), "input %d", 2)))
	assert.Equal(t, "input 2: gone", Prefix(Errorf(StatusHandle, "gone"), "input %d", 2).Error())
	err := Recovered("boom")
	assert.Equal(t, StatusInternal, StatusOf(err))
	assert.Contains(t, err.Error(), "internal error (please report): boom")
	assert.Equal(t, "buffer too small", StatusString(StatusBufferTooSmall))
	assert.Equal(t, "i/o error", StatusString(StatusIO))
	assert.Equal(t, "unknown status", StatusString(8))
}

// A scope is its caller's: ops under it get detached inputs, an exit
// without an enter is an error, and other callers' depths are not asked.
func TestNoGradScope(t *testing.T) {
	var mine, other int32
	errorIs(t, NoGradExit(&mine), StatusInvalid, "without a matching enter on this thread")
	w := f32Tensor(t, []int64{2}, 1, 2)
	defer TensorFree(w)
	require.NoError(t, TensorSetRequiresGrad(w, true))
	requiresGrad := func(depth *int32) bool {
		outs, err := Op("mul", []int64{w, w}, nil, InNoGrad(func() *int32 { return depth }))
		require.NoError(t, err)
		hs := make([]int64, 1)
		outs.Handles(hs)
		defer TensorFree(hs[0])
		on, err := TensorRequiresGrad(hs[0])
		require.NoError(t, err)
		return on
	}
	NoGradEnter(&mine)
	assert.False(t, requiresGrad(&mine), "recorded inside the scope")
	assert.True(t, requiresGrad(&other), "another caller's op was not recorded")
	require.NoError(t, NoGradExit(&mine))
	assert.True(t, requiresGrad(&mine), "not recorded after the scope")
}

// Views and detached copies of memory imported read-only stay read-only.
func TestReadOnlyFollowsTheStorage(t *testing.T) {
	x, err := TensorOf(f32Tensor(t, []int64{2, 2}, 1, 2, 3, 4))
	require.NoError(t, err)
	h := NewHandle(x, true)
	defer TensorFree(h)
	outs, err := Op("reshape", []int64{h}, attrs{{Name: "shape", Kind: AttrInts, Ints: []int64{4}}}, false)
	require.NoError(t, err)
	hs := make([]int64, 1)
	outs.Handles(hs)
	d, err := TensorDetach(h)
	require.NoError(t, err)
	c, err := TensorContiguous(h, false)
	require.NoError(t, err)
	for _, o := range []int64{hs[0], d, c} {
		_, readOnly, err := Lookup(o)
		require.NoError(t, err)
		assert.True(t, readOnly)
		require.NoError(t, TensorFree(o))
	}
}

func TestGraphCapture(t *testing.T) {
	x := f32Tensor(t, []int64{3}, 1, 2, 3)
	defer TensorFree(x)
	require.NoError(t, TraceBegin([]int64{x}))
	errorIs(t, TraceBegin([]int64{x}), StatusInvalid, "already in progress")
	outs, err := Op("mul", []int64{x, x}, nil, false)
	require.NoError(t, err)
	y := make([]int64, 1)
	outs.Handles(y)
	defer TensorFree(y[0])
	g, err := TraceEnd(y)
	require.NoError(t, err)
	_, err = TraceEnd(y)
	errorIs(t, err, StatusInvalid, "no capture in progress")

	x2 := f32Tensor(t, []int64{3}, 2, 3, 4)
	defer TensorFree(x2)
	res, err := GraphRun(g, []int64{x2}, false)
	require.NoError(t, err)
	hs := make([]int64, res.Len())
	res.Handles(hs)
	assert.Equal(t, []float32{4, 9, 16}, f32Values(t, hs[0]))
	require.NoError(t, TensorFree(hs[0]))
	text, err := GraphText(g)
	require.NoError(t, err)
	assert.Contains(t, text, "mul")
	require.NoError(t, GraphFree(g))
	_, err = GraphRun(g, []int64{x2}, false)
	errorIs(t, err, StatusHandle, "unknown or freed graph handle")
}
