package plugins

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func TestGoodPluginRegistersOps(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	n := p.Name()
	assert.Equal(t, "1.2.3", p.Version())
	assert.Equal(t, []string{n + ".add1", n + ".fail", n + ".record", n + ".attrs", n + ".infer_echo"}, p.Ops())
	assert.Contains(t, p.WGSLSource(n+".add1"), "@compute")
	assert.Empty(t, p.WGSLSource(n+".fail"))

	def, ok := core.LookupOp(n + ".add1")
	require.True(t, ok)
	assert.Equal(t, "plugin", def.Category)
	assert.Equal(t, "x + 1, elementwise.", def.Doc)
	assert.Equal(t, []core.DType{core.F32}, def.Inputs[0].DTypes)
	assert.Equal(t, []string{"y"}, def.Outputs)
	assert.True(t, def.Differentiable())
	assert.NotNil(t, core.LookupKernel("cpu", n+".add1"))

	attrs, _ := core.LookupOp(n + ".attrs")
	assert.Equal(t, core.AttrSpec{Name: "alpha", Kind: core.AttrFloat, Default: 1.5, Doc: "a float"}, attrs.Attrs[0])
	assert.Equal(t, []int{0, 1}, attrs.Attrs[4].Default)
	assert.Equal(t, core.F16, attrs.Attrs[6].Default)
	assert.Nil(t, attrs.Attrs[7].Default)
}

func TestAdd1Values(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	checkAdd1(t, p.Name(), []float32{0, 1, -2.5, 1e6})
	checkAdd1(t, p.Name(), nil) // zero elements

	// A strided input (a transposed view) is made contiguous first.
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
	xt := core.Call1("transpose", nil, x)
	require.NoError(t, xt.Err())
	require.False(t, xt.IsContiguous())
	y := core.Call1(p.Name()+".add1", nil, xt)
	require.NoError(t, y.Err())
	assert.Equal(t, core.Shape{3, 2}, y.Shape())
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 5, 3, 6, 4, 7}, got)

	// A rank-0 tensor.
	s := core.Call1(p.Name()+".add1", nil, core.Scalar(41, core.F32))
	v, err := s.Item()
	require.NoError(t, err)
	assert.Equal(t, 42.0, v)

	// core checks the manifest's dtypes before the plugin runs.
	_, err = core.Call(p.Name()+".add1", []*core.Tensor{core.FromSlice([]float64{1}, core.Shape{1})}, nil)
	assert.ErrorContains(t, err, "has dtype f64, want one of [f32]")
}

func TestBackwardThroughManifestExpression(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	x := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}).SetRequiresGrad(true)
	y := core.Call1(p.Name()+".add1", nil, x)
	loss := core.Call1("sum", nil, core.Call1("mul", nil, y, y))
	require.NoError(t, loss.Err())
	require.NoError(t, loss.Backward())
	g, err := x.Grad().Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 6, 8}, g) // d/dx (x+1)^2 = 2(x+1)
}

func TestKernelErrorCarriesMessage(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	_, err := core.Call(p.Name()+".fail", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), p.Name()+".fail")
	assert.Contains(t, err.Error(), "plugin "+p.Name())
	assert.Contains(t, err.Error(), "wt_kernel returned 7: failed on purpose")
	checkAdd1(t, p.Name(), []float32{1}) // the instance is still fine
}

func TestCallRecordLayout(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	x := core.FromSlice(make([]uint8, 512), core.Shape{512})
	w := core.FromSlice([]float64{1, 2}, core.Shape{2, 1})
	outs, err := core.Call(p.Name()+".record", []*core.Tensor{x, w}, nil) // z absent
	require.NoError(t, err)
	require.Len(t, outs, 2)
	assert.Equal(t, core.F64, outs[1].DType())
	assert.Equal(t, core.Shape{2, 512}, outs[1].Shape()) // broadcast of [512] and [2, 1]
	rec, err := outs[0].Bytes()
	require.NoError(t, err)
	u := func(off int) uint32 { return binary.LittleEndian.Uint32(rec[off:]) }
	assert.Equal(t, uint32(3), u(0), "n_inputs")
	assert.Equal(t, uint32(2), u(4), "n_outputs")
	assert.Equal(t, uint32(2), u(12), "attrs_len of {}")
	type tensorRec struct{ ptr, nbytes, dtype, ndim uint32 }
	at := func(i int) tensorRec {
		o := 16 + 48*i
		return tensorRec{u(o), u(o + 4), u(o + 8), u(o + 12)}
	}
	assert.Equal(t, tensorRec{at(0).ptr, 512, 10, 1}, at(0))
	assert.Equal(t, uint32(512), u(16+16))
	assert.Equal(t, tensorRec{at(1).ptr, 16, 4, 2}, at(1))
	assert.Equal(t, []uint32{2, 1, 0}, []uint32{u(64 + 16), u(64 + 20), u(64 + 24)})
	assert.Equal(t, tensorRec{}, at(2), "absent optional input")
	assert.Equal(t, tensorRec{at(3).ptr, 512, 10, 1}, at(3))
	assert.Equal(t, tensorRec{at(4).ptr, 2 * 512 * 8, 4, 2}, at(4))
	for i := range 5 {
		if i != 2 {
			assert.NotZero(t, at(i).ptr)
			assert.Zero(t, at(i).ptr%8, "tensor %d is 8-byte aligned", i)
		}
	}
	assert.Zero(t, u(8)%8, "attrs are 8-byte aligned")
}

func TestAttrsJSON(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	x := core.FromSlice(make([]uint8, 256), core.Shape{256})
	decode := func(attrs core.Attrs) map[string]any {
		y := core.Call1(p.Name()+".attrs", attrs, x)
		require.NoError(t, y.Err())
		raw, err := y.Bytes()
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(bytes.TrimRight(raw, "\x00"), &m), "%q", raw)
		return m
	}
	assert.Equal(t, map[string]any{"alpha": 1.5, "n": 3.0, "flag": true, "mode": "a", "axes": []any{0.0, 1.0},
		"ws": []any{0.5}, "dt": "f16", "opt": nil}, decode(nil))
	assert.Equal(t, map[string]any{"alpha": 2.0, "n": -7.0, "flag": false, "mode": "b", "axes": []any{2.0},
		"ws": []any{1.0, 2.0}, "dt": "i64", "opt": 5.0},
		decode(core.Attrs{"alpha": 2, "n": -7, "flag": false, "mode": "b", "axes": []int{2}, "ws": []float64{1, 2},
			"dt": core.I64, "opt": 5}))

	_, err := core.Call(p.Name()+".attrs", []*core.Tensor{x}, core.Attrs{"mode": "c"})
	assert.ErrorContains(t, err, `attribute "mode" is "c", want one of [a b]`)
	_, err = core.Call(p.Name()+".attrs", []*core.Tensor{x}, core.Attrs{"alpha": 0.0 / zero()})
	assert.ErrorContains(t, err, "JSON cannot carry")
}

func zero() float64 { return 0 }

func TestInferRequestAndAnswer(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	x := core.FromSlice([]int32{1, 2, 3, 4, 5, 6}, core.Shape{2, 3})
	y := core.Call1(p.Name()+".infer_echo", core.Attrs{"k": 9}, x)
	require.NoError(t, y.Err())
	assert.Equal(t, core.Shape{1024}, y.Shape())
	assert.Equal(t, core.U8, y.DType())
	raw, err := y.Bytes()
	require.NoError(t, err)
	var req struct {
		Op     string `json:"op"`
		Inputs []struct {
			Shape []int  `json:"shape"`
			DType string `json:"dtype"`
		} `json:"inputs"`
		Attrs map[string]any `json:"attrs"`
	}
	require.NoError(t, json.Unmarshal(bytes.TrimRight(raw, "\x00"), &req), "%q", raw)
	assert.Equal(t, p.Name()+".infer_echo", req.Op)
	require.Len(t, req.Inputs, 1)
	assert.Equal(t, []int{2, 3}, req.Inputs[0].Shape)
	assert.Equal(t, "i32", req.Inputs[0].DType)
	assert.Equal(t, map[string]any{"k": 9.0}, req.Attrs)
}

func TestConcurrentCalls(t *testing.T) {
	h := newTestHost(t, NewConfig())
	p := loadGood(t, h)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				n := 1 + (g*7+i)%300
				vals := make([]float32, n)
				for j := range vals {
					vals[j] = float32(g*1000 + j)
				}
				y := core.Call1(p.Name()+".add1", nil, core.FromSlice(vals, core.Shape{n}))
				got, err := y.Float32s()
				if err != nil {
					errs <- err
					return
				}
				for j, v := range got {
					if v != vals[j]+1 {
						errs <- assert.AnError
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestCloseAndReload(t *testing.T) {
	h := newTestHost(t, NewConfig())
	name := uniq("reload")
	wasm := newFixture(name).wasm()
	p, err := h.Load(context.Background(), "a.wasm", wasm)
	require.NoError(t, err)

	_, err = h.Load(context.Background(), "b.wasm", wasm)
	assert.ErrorContains(t, err, `a plugin named "`+name+`" is already loaded`)

	require.NoError(t, p.Close())
	require.NoError(t, p.Close()) // idempotent
	_, err = core.Call(name+".add1", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
	assert.ErrorContains(t, err, "was closed")

	// The same manifest takes its ops over again, from another host too.
	h2 := newTestHost(t, NewConfig())
	p2, err := h2.Load(context.Background(), "a.wasm", wasm)
	require.NoError(t, err)
	checkAdd1(t, name, []float32{5})

	// A changed declaration of a registered op is refused.
	require.NoError(t, p2.Close())
	f := newFixture(name)
	f.manifest = strings.Replace(f.manifest, "x + 1, elementwise.", "changed doc", 1)
	_, err = h.Load(context.Background(), "c.wasm", f.wasm())
	assert.ErrorContains(t, err, "registered by an earlier plugin with another declaration")

	// Closing the host closes its plugins.
	p3, err := h.Load(context.Background(), "a.wasm", wasm)
	require.NoError(t, err)
	require.NoError(t, h.Close(context.Background()))
	_, err = core.Call(name+".add1", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
	assert.ErrorContains(t, err, "was closed")
	_, err = h.Load(context.Background(), "a.wasm", wasm)
	assert.ErrorContains(t, err, "host is closed")
	assert.NoError(t, p3.Close())
}

func TestLoadFileAndDiskCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "file.wasm")
	name := uniq("file")
	require.NoError(t, os.WriteFile(path, newFixture(name).wasm(), 0o644))
	cache := filepath.Join(dir, "cache")
	h := newTestHost(t, NewConfig().WithDiskCache(cache))
	p, err := h.LoadFile(context.Background(), path)
	require.NoError(t, err)
	checkAdd1(t, p.Name(), []float32{1, 2})
	entries, err := os.ReadDir(cache)
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "compiled code is written to the cache directory")

	_, err = h.LoadFile(context.Background(), filepath.Join(dir, "missing.wasm"))
	assert.ErrorContains(t, err, "missing.wasm")
}

func TestConfigValidation(t *testing.T) {
	_, err := NewHost(context.Background(), NewConfig().WithMemoryLimit(0))
	assert.ErrorContains(t, err, "memory limit")
	_, err = NewHost(context.Background(), NewConfig().WithMemoryLimit(5<<30))
	assert.ErrorContains(t, err, "memory limit")
	_, err = NewHost(context.Background(), NewConfig().WithDeadline(0))
	assert.ErrorContains(t, err, "deadline")
	c := NewConfig()
	_ = c.WithDeadline(1)
	assert.Equal(t, DefaultDeadline, c.deadline, "With returns a copy")
}

func TestNoDeadlineConfig(t *testing.T) {
	h := newTestHost(t, NewConfig().WithNoDeadline())
	p := loadGood(t, h)
	checkAdd1(t, p.Name(), []float32{1, 2, 3})
	y := core.Call1(p.Name()+".infer_echo", nil, core.FromSlice([]float32{1}, core.Shape{1}))
	assert.NoError(t, y.Err())
}
