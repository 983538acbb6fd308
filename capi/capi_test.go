package main

import (
	"encoding/binary"
	"encoding/json"
	"github.com/webtensor/webtensor/abi"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The statuses as the int32 the call hooks return.
const (
	statusInvalid     = int32(abi.StatusInvalid)
	statusHandle      = int32(abi.StatusHandle)
	statusUnsupported = int32(abi.StatusUnsupported)
	statusOOM         = int32(abi.StatusOutOfMemory)
	statusBuffer      = int32(abi.StatusBufferTooSmall)
	statusInternal    = int32(abi.StatusInternal)
)

func f32bytes(vals ...float32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func mustTensor(t testing.TB, vals []float32, shape ...int64) int64 {
	t.Helper()
	st, h := callFromData(f32bytes(vals...), 4*len(vals), int32(core.F32), shape, int32(len(shape)), "")
	require.Equal(t, int32(statusOK), st, lastError())
	return h
}

func TestVersionMatchesCore(t *testing.T) {
	pinThread(t)
	assert.Equal(t, core.Version, callVersion(), "WT_VERSION_STRING in webtensor.h must equal core.Version")
}

func TestOpThroughTheABI(t *testing.T) {
	pinThread(t)
	a := mustTensor(t, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := mustTensor(t, []float32{1, 0, 0, 1, 1, 1}, 3, 2)
	st, outs, n := callOp("matmul", false, []int64{a, b}, nil, 1)
	require.Equal(t, int32(statusOK), st, lastError())
	require.Equal(t, int32(1), n)
	st, raw := callToHost(outs[0], 16)
	require.Equal(t, int32(statusOK), st)
	assert.Equal(t, []float32{4, 5, 10, 11}, f32s(raw))

	st, outs, _ = callOp("sum", false, []int64{a}, []goAttr{{Name: "axes", Kind: 5, Ints: []int64{1}}, {Name: "keepdim", Kind: 3, I: 1}}, 1)
	require.Equal(t, int32(statusOK), st, lastError())
	_, raw = callToHost(outs[0], 8)
	assert.Equal(t, []float32{6, 15}, f32s(raw))

	// Multi-output op with too little room: nothing is created.
	before := abi.LiveTensors()
	st, _, n = callOp("topk", false, []int64{a}, []goAttr{{Name: "k", Kind: 1, I: 2}}, 1)
	assert.Equal(t, int32(statusBuffer), st)
	assert.Equal(t, int32(2), n)
	assert.Equal(t, before, abi.LiveTensors())
	for _, h := range append(outs, a, b) {
		assert.Equal(t, int32(statusOK), callFree(h))
	}
}

func TestBadInputGivesStatusAndMessage(t *testing.T) {
	pinThread(t)
	a := mustTensor(t, []float32{1, 2}, 2)
	defer callFree(a)
	cases := []struct {
		name   string
		status int32
		msg    string
		call   func() int32
	}{
		{"unknown op", statusInvalid, `unknown op "nope"`, func() int32 { s, _, _ := callOp("nope", false, []int64{a}, nil, 1); return s }},
		{"NULL op name", statusInvalid, "name is NULL", func() int32 { s, _, _ := callOp("", true, nil, nil, 1); return s }},
		{"freed handle", statusHandle, "handle 999999", func() int32 { s, _, _ := callOp("neg", false, []int64{999999}, nil, 1); return s }},
		{"attr kind", statusInvalid, `attribute "axes"`, func() int32 {
			s, _, _ := callOp("sum", false, []int64{a}, []goAttr{{Name: "axes", Kind: 4, S: "x"}}, 1)
			return s
		}},
		{"unknown attr kind", statusInvalid, "unknown kind 42", func() int32 {
			s, _, _ := callOp("sum", false, []int64{a}, []goAttr{{Name: "axes", Kind: 42}}, 1)
			return s
		}},
		{"NULL string attr", statusInvalid, "string is NULL", func() int32 {
			s, _, _ := callOp("gelu", false, []int64{a}, []goAttr{{Name: "approximate", Kind: 4, NilStr: true}}, 1)
			return s
		}},
		{"duplicate attr", statusInvalid, "given twice", func() int32 {
			s, _, _ := callOp("sum", false, []int64{a}, []goAttr{{Name: "keepdim", Kind: 3}, {Name: "keepdim", Kind: 3}}, 1)
			return s
		}},
		{"bad dtype", statusInvalid, "unknown dtype code 99", func() int32 { s, _ := callFromData(nil, 0, 99, nil, 0, ""); return s }},
		{"negative dim", statusInvalid, "dimension 0 of the shape is -2", func() int32 { s, _ := callFromData(nil, 0, 1, []int64{-2}, 1, ""); return s }},
		{"ndim", statusInvalid, "ndim 1000 out of range", func() int32 { s, _ := callFromData(nil, 0, 1, nil, 1000, ""); return s }},
		{"nbytes", statusInvalid, "data has 3 bytes, shape [2] of f32 needs 8", func() int32 {
			s, _ := callFromData([]byte{1, 2, 3}, 3, 1, []int64{2}, 1, "")
			return s
		}},
		{"overflow", statusInvalid, "too many elements", func() int32 {
			s, _ := callFromData(nil, 0, 1, []int64{1 << 40, 1 << 40}, 2, "")
			return s
		}},
		{"device", statusUnsupported, `device "tpu"`, func() int32 { s, _ := callFromData(nil, 0, 1, []int64{0}, 1, "tpu"); return s }},
	}
	for _, c := range cases {
		assert.Equal(t, c.status, c.call(), c.name)
		assert.Contains(t, lastError(), c.msg, c.name)
	}
	h := mustTensor(t, []float32{1}, 1)
	require.Equal(t, int32(statusOK), callFree(h))
	assert.Equal(t, int32(statusHandle), callFree(h))
	assert.Contains(t, lastError(), "already freed (double free)")
}

func TestAutogradThroughTheABI(t *testing.T) {
	pinThread(t)
	x := mustTensor(t, []float32{1, 2, 3}, 3)
	require.Equal(t, int32(statusOK), callSetRequiresGrad(x, true))
	st, sq, _ := callOp("mul", false, []int64{x, x}, nil, 1)
	require.Equal(t, int32(statusOK), st)
	st, s, _ := callOp("sum", false, sq, nil, 1)
	require.Equal(t, int32(statusOK), st)
	require.Equal(t, int32(statusOK), callBackward(s[0], 0), lastError())
	st, g := callGrad(x)
	require.Equal(t, int32(statusOK), st)
	_, raw := callToHost(g, 12)
	assert.Equal(t, []float32{2, 4, 6}, f32s(raw))
	for _, h := range []int64{x, sq[0], s[0], g} {
		callFree(h)
	}
	i := int64(0)
	st, i = callFromData(make([]byte, 8), 8, int32(core.I64), []int64{1}, 1, "")
	require.Equal(t, int32(statusOK), st)
	assert.Equal(t, int32(statusInvalid), callSetRequiresGrad(i, true))
	assert.Contains(t, lastError(), "only floating-point")
	callFree(i)
}

func TestManifestJSON(t *testing.T) {
	pinThread(t)
	st, js := callManifest()
	require.Equal(t, int32(statusOK), st)
	var m core.Manifest
	require.NoError(t, json.Unmarshal([]byte(js), &m))
	assert.Greater(t, len(m.Ops), 100)
}

func TestHandlesFromManyGoroutines(t *testing.T) {
	pinThread(t)
	before := abi.LiveTensors()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				st, h := callFromData(f32bytes(1, 2), 8, 1, []int64{2}, 1, "")
				if st != int32(statusOK) {
					t.Error(lastError())
					return
				}
				_, outs, _ := callOp("add", false, []int64{h, h}, nil, 1)
				callFree(h)
				for _, o := range outs {
					callFree(o)
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, before, abi.LiveTensors())
}

// FuzzOp feeds random op names, handles and attribute bags to wt_op: every
// outcome must be a status, never a crash or an internal error.
func FuzzOp(f *testing.F) {
	f.Add("sum", int64(1), "axes", int32(5), int64(0), 1.0, "x", []byte{1, 0})
	f.Add("reshape", int64(2), "shape", int32(5), int64(-1), 0.5, "", []byte{255, 3})
	f.Add("gelu", int64(1), "approximate", int32(4), int64(0), 0.0, "tanh", []byte{})
	f.Add("cast", int64(1), "dtype", int32(7), int64(12), 0.0, "", []byte{})
	ops := core.OpNames()
	f.Fuzz(func(t *testing.T, name string, handle int64, attr string, kind int32, iv int64, fv float64, sv string, list []byte) {
		a := mustTensor(t, []float32{1, -2, 3, 4, 0.5, 6}, 2, 3)
		defer callFree(a)
		if len(name) > 0 && name[0] < 64 {
			name = ops[int(name[0])%len(ops)]
		}
		ints := make([]int64, len(list))
		floats := make([]float64, len(list))
		for i, b := range list {
			ints[i], floats[i] = int64(int8(b)), float64(int8(b))/3
		}
		at := goAttr{Name: attr, Kind: kind, I: iv, F: fv, S: sv}
		if kind == 5 {
			at.Ints = ints
		} else if kind == 6 {
			at.Floats = floats
		}
		st, outs, _ := callOp(name, false, []int64{a, handle % 4}, []goAttr{at}, 4)
		if st == statusInternal || strings.Contains(lastError(), "internal error") {
			t.Fatalf("%s: internal error: %s", name, lastError())
		}
		for _, o := range outs {
			callFree(o)
		}
	})
}

// FuzzFromData feeds random dtypes, shapes and byte counts.
func FuzzFromData(f *testing.F) {
	f.Add(int32(1), []byte{2, 3}, int32(2), uint16(24))
	f.Add(int32(11), []byte{}, int32(0), uint16(1))
	f.Add(int32(0), []byte{200}, int32(-1), uint16(0))
	f.Fuzz(func(t *testing.T, dtype int32, dims []byte, ndim int32, nbytes uint16) {
		shape := make([]int64, len(dims))
		for i, d := range dims {
			shape[i] = int64(int8(d))
		}
		data := make([]byte, nbytes)
		st, h := callFromData(data, int(nbytes), dtype, shape, ndim%70, "")
		if st == statusInternal {
			t.Fatal(lastError())
		}
		if st == int32(statusOK) {
			assert.Equal(t, int32(statusOK), callFree(h))
		}
	})
}

// pinThread keeps the test's goroutine on one OS thread for the whole test.
// wt_last_error is the calling thread's, as C expects; a test calls the
// exported functions from Go, and a goroutine that moved to another thread
// between a failing call and its lastError() read an empty message
// (TestBorrowedImportRefusesBadInput failed one run in ten that way).
func pinThread(t *testing.T) {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}
