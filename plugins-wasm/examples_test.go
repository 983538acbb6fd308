package plugins_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	plugins "github.com/webtensor/webtensor/plugins-wasm"
)

// The SDK examples, built by `make plugins`, loaded through the host and
// called through core like any op. Expected values are hand-computed (Python's
// math module, printed to 17 digits), not produced by the plugins' own code.

// loadExample loads build/plugins/<file> into a host of its own, closed
// when the test ends so no other test in the binary finds the plugin taken.
// Each example loads in one test with subtests, as a plugin user would.
func loadExample(t *testing.T, file string) *plugins.Plugin {
	t.Helper()
	path := filepath.Join("..", "build", "plugins", file)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is missing: run `make plugins` to build the example plugins", filepath.Join("build", "plugins", file))
	}
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.NewConfig())
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close(ctx) })
	p, err := h.LoadFile(ctx, path)
	require.NoError(t, err)
	return p
}

// forwardBackward runs op on x (a leaf that requires grad), then backward
// with the upstream gradient up, and returns y's values and x's gradient.
func forwardBackward[T float32 | float64](t *testing.T, op string, attrs core.Attrs, x *core.Tensor, up []T) (y, dx []float64) {
	t.Helper()
	x.SetRequiresGrad(true)
	outs, err := core.Call(op, []*core.Tensor{x}, attrs)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	y, err = outs[0].Float64s()
	require.NoError(t, err)
	require.NoError(t, outs[0].Backward(core.FromSlice(up, outs[0].Shape())))
	require.NotNil(t, x.Grad(), "%s: no gradient reached x", op)
	assert.Equal(t, x.DType(), x.Grad().DType())
	dx, err = x.Grad().Float64s()
	require.NoError(t, err)
	return y, dx
}

func TestGoSwishExample(t *testing.T) {
	p := loadExample(t, "goswish.wasm")
	assert.Equal(t, "goswish", p.Name())
	assert.Equal(t, []string{"goswish.swish", "goswish.pairwise_sum"}, p.Ops())
	t.Run("swish", testSwish)
	t.Run("pairwise_sum", testPairwiseSum)
	t.Run("changing sizes", func(t *testing.T) { callsOfChangingSize(t, "goswish.swish", 0.3112296656009273) })
	t.Run("concurrent calls", func(t *testing.T) {
		concurrentCalls(t, "goswish.swish", func(x float64) float64 { return x / (1 + math.Exp(-x)) })
	})
}

func testSwish(t *testing.T) {
	x := []float64{-3, -0.5, 0, 0.5, 2}
	up := []float64{1, 1, 1, 1, 1}
	cases := []struct {
		attrs  core.Attrs
		y, dy  []float64 // x*s(bx) and s(bx)*(1 + bx*(1 - s(bx)))
		beta   string
		f32Tol float64
	}{
		{nil, []float64{-0.14227761953270035, -0.1887703343990727, 0, 0.3112296656009273, 1.7615941559557646},
			[]float64{-0.08810410601516962, 0.2600388126973482, 0.5, 0.7399611873026519, 1.0907842487848955}, "default 1", 1e-6},
		{core.Attrs{"beta": 2.5}, []float64{-0.0016583359107707986, -0.11135006941265442, 0, 0.38864993058734554, 1.9866142981514305},
			[]float64{-0.0035907694083426034, 0.006319155084687563, 0.5, 0.9936808449153124, 1.0265474324296655}, "2.5", 1e-6},
	}
	for _, c := range cases {
		y, dx := forwardBackward(t, "goswish.swish", c.attrs, core.FromSlice(x, core.Shape{5}), up)
		assert.InDeltaSlice(t, c.y, y, 1e-14, "f64 swish, beta %s", c.beta)
		assert.InDeltaSlice(t, c.dy, dx, 1e-14, "f64 swish gradient, beta %s", c.beta)

		x32 := []float32{-3, -0.5, 0, 0.5, 2}
		y, dx = forwardBackward(t, "goswish.swish", c.attrs, core.FromSlice(x32, core.Shape{5}), []float32{1, 1, 1, 1, 1})
		assert.InDeltaSlice(t, c.y, y, c.f32Tol, "f32 swish, beta %s", c.beta)
		assert.InDeltaSlice(t, c.dy, dx, c.f32Tol, "f32 swish gradient, beta %s", c.beta)
	}

	// The host refuses a dtype the manifest does not list, before the plugin runs.
	_, err := core.Call("goswish.swish", []*core.Tensor{core.FromSlice([]int64{1, 2}, core.Shape{2})}, nil)
	assert.ErrorContains(t, err, "goswish.swish")
}

func testPairwiseSum(t *testing.T) {
	// [2, 5] -> [2, 3]: the odd last element of each row stands alone.
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 10, 20, 30, 40, 50}, core.Shape{2, 5})
	up := []float32{1, 2, 3, 4, 5, 6} // distinct, so a misrouted gradient shows
	y, dx := forwardBackward(t, "goswish.pairwise_sum", nil, x, up)
	assert.Equal(t, []float64{3, 7, 5, 30, 70, 50}, y)
	// x[i, j] feeds y[i, j/2] with weight 1, so dx[i, j] = up[i, j/2].
	assert.Equal(t, []float64{1, 1, 2, 2, 3, 4, 4, 5, 5, 6}, dx)

	outs, err := core.Call("goswish.pairwise_sum", []*core.Tensor{core.FromSlice([]float64{1, 2, 3, 4}, core.Shape{1, 1, 4})}, nil)
	require.NoError(t, err)
	assert.Equal(t, core.Shape{1, 1, 2}, outs[0].Shape())
	assert.Equal(t, core.F64, outs[0].DType())

	// wt_infer's error comes back with the plugin's message.
	_, err = core.Call("goswish.pairwise_sum", []*core.Tensor{core.Scalar(1, core.F32)}, nil)
	assert.ErrorContains(t, err, "x is a scalar; it needs at least one axis")
}

func TestCClipExample(t *testing.T) {
	p := loadExample(t, "cclip.wasm")
	assert.Equal(t, "cclip", p.Name())
	assert.Equal(t, []string{"cclip.soft_clip", "cclip.count_above"}, p.Ops())
	assert.Contains(t, p.WGSLSource("cclip.soft_clip"), "params.limit * tanh(x[id.x] / params.limit)")
	t.Run("soft_clip", testSoftClip)
	t.Run("count_above", testCountAbove)
	t.Run("changing sizes", func(t *testing.T) { callsOfChangingSize(t, "cclip.soft_clip", 0.46211715726000974) })
	t.Run("concurrent calls", func(t *testing.T) { concurrentCalls(t, "cclip.soft_clip", math.Tanh) })
}

func testSoftClip(t *testing.T) {
	x := []float32{-5, -1, 0, 0.5, 3}
	up := []float32{1, 1, 1, 1, 1}
	// limit 2: 2*tanh(x/2) and 1 - tanh(x/2)^2.
	y, dx := forwardBackward(t, "cclip.soft_clip", core.Attrs{"limit": 2.0}, core.FromSlice(x, core.Shape{5}), up)
	assert.InDeltaSlice(t, []float64{-1.9732285963028606, -0.9242343145200195, 0, 0.48983732480741826, 1.8102965072897328}, y, 1e-6)
	assert.InDeltaSlice(t, []float64{0.026592226683160525, 0.7864477329659274, 1, 0.940014848806378, 0.18070663892364858}, dx, 1e-6)
	// limit defaults to 1: tanh(x).
	y, _ = forwardBackward(t, "cclip.soft_clip", nil, core.FromSlice(x, core.Shape{5}), up)
	assert.InDeltaSlice(t, []float64{-0.9999092042625951, -0.7615941559557649, 0, 0.46211715726000974, 0.9950547536867305}, y, 1e-6)

	_, err := core.Call("cclip.soft_clip", []*core.Tensor{core.FromSlice(x, core.Shape{5})}, core.Attrs{"limit": -1.5})
	assert.ErrorContains(t, err, "limit must be > 0, got -1.5")
}

func testCountAbove(t *testing.T) {
	// A scalar i64 whatever the input's shape (the plugin's wt_infer says so).
	m := core.FromSlice([]float32{-2, 0.5, 3, 1, 0.25, 7}, core.Shape{2, 3})
	outs, err := core.Call("cclip.count_above", []*core.Tensor{m}, core.Attrs{"threshold": 0.75})
	require.NoError(t, err)
	assert.Equal(t, core.I64, outs[0].DType())
	assert.Equal(t, 0, outs[0].Rank())
	n, err := outs[0].Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, n)
	outs, err = core.Call("cclip.count_above", []*core.Tensor{m}, nil) // threshold 0
	require.NoError(t, err)
	n, _ = outs[0].Int64s()
	assert.Equal(t, []int64{5}, n)
}

// callsOfChangingSize makes the host replace its block in the module's
// memory now and then; every result must still come back whole. want is op
// at 0.5 with default attributes.
func callsOfChangingSize(t *testing.T, op string, want float64) {
	for i := range 24 {
		n := 1 << (10 + i%8) // 1 Ki .. 128 Ki elements
		outs, err := core.Call(op, []*core.Tensor{core.Full(core.Shape{n}, 0.5, core.F32)}, nil)
		require.NoError(t, err, "call %d, %d elements", i, n)
		v, err := outs[0].Float32s()
		require.NoError(t, err)
		require.Len(t, v, n)
		assert.InDelta(t, want, float64(v[0]), 1e-6)
		assert.InDelta(t, want, float64(v[n-1]), 1e-6)
	}
}

// concurrentCalls runs op (default attributes) from several goroutines at
// once, on inputs of their own and of changing sizes, against want
// elementwise: each call must get its own answer whichever instance serves it.
func concurrentCalls(t *testing.T, op string, want func(float64) float64) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 12 {
				n := 1 << (4 + (g+i)%10) // 16 .. 8 Ki elements
				x := make([]float32, n)
				for j := range x {
					x[j] = float32(g-2) + float32(j%7)/4
				}
				outs, err := core.Call(op, []*core.Tensor{core.FromSlice(x, core.Shape{n})}, nil)
				if !assert.NoError(t, err, "goroutine %d, call %d", g, i) {
					return
				}
				y, err := outs[0].Float32s()
				require.NoError(t, err)
				for _, j := range []int{0, n / 3, n - 1} {
					assert.InDelta(t, want(float64(x[j])), float64(y[j]), 1e-6, "goroutine %d, call %d, element %d", g, i, j)
				}
			}
		})
	}
	wg.Wait()
}

// The allocators behind wt_alloc and wt_free, driven through the ABI the way
// a host may: blocks are 8-byte aligned and disjoint while live, and memory
// freed in any order is reused. 100 rounds of 8 MiB allocated and freed
// first-in first-out would need 800 MiB without reuse; the cap is 256 MiB.
func TestExampleAllocators(t *testing.T) {
	ctx := context.Background()
	for _, file := range []string{"cclip.wasm", "goswish.wasm"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("..", "build", "plugins", file)
			wasm, err := os.ReadFile(path)
			if err != nil {
				t.Skipf("%s is missing: run `make plugins` to build the example plugins", filepath.Join("build", "plugins", file))
			}
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithMemoryLimitPages(256<<20>>16))
			defer rt.Close(ctx)
			wasi_snapshot_preview1.MustInstantiate(ctx, rt)
			mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
			require.NoError(t, err)
			alloc, free, mem := mod.ExportedFunction("wt_alloc"), mod.ExportedFunction("wt_free"), mod.Memory()
			const blocks, size = 8, 1 << 20
			for round := range 100 {
				ptrs := make([]uint32, blocks)
				for i := range ptrs {
					r, err := alloc.Call(ctx, size+uint64(i)) // odd sizes round up
					require.NoError(t, err, "round %d", round)
					ptrs[i] = uint32(r[0])
					require.NotZero(t, ptrs[i], "wt_alloc returned 0 in round %d: freed memory is not reused", round)
					require.Zero(t, ptrs[i]%8, "wt_alloc returned %d, not 8-byte aligned", ptrs[i])
					block, ok := mem.Read(ptrs[i], size+uint32(i))
					require.True(t, ok)
					for j := range block {
						block[j] = byte(i + 1)
					}
				}
				for i, p := range ptrs { // a block overlapping another would hold its byte
					block, _ := mem.Read(p, size+uint32(i))
					require.Equal(t, byte(i+1), block[0], "round %d, block %d", round, i)
					require.Equal(t, byte(i+1), block[len(block)-1], "round %d, block %d", round, i)
				}
				for i, p := range ptrs {
					_, err := free.Call(ctx, uint64(p), size+uint64(i))
					require.NoError(t, err)
				}
			}
			assert.Less(t, mem.Size(), uint32(128<<20), "memory grew to %d bytes", mem.Size())
		})
	}
}
