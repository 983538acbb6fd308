package webgpu_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

func randn(shape core.Shape, seed uint64) []float64 {
	g := core.Gen{Shape: shape, DType: core.F64}
	return g.Generate(seed)
}

func closeTo(t *testing.T, got, want *core.Tensor, tol float64) {
	t.Helper()
	require.NoError(t, got.Err())
	require.NoError(t, want.Err())
	require.Equal(t, want.Shape(), got.Shape())
	g, err := got.Float64s()
	require.NoError(t, err)
	w, err := want.Float64s()
	require.NoError(t, err)
	for i := range w {
		if math.Abs(g[i]-w[i]) > tol*(1+math.Abs(w[i])) {
			t.Fatalf("element %d: got %v, want %v", i, g[i], w[i])
		}
	}
}

// Both matmul variants must agree with the CPU on ragged, batched,
// broadcast and transposed operands, whichever the tuner would pick.
func TestMatmulVariantsMatchCPU(t *testing.T) {
	b := needGPU(t)
	cases := []struct{ a, b core.Shape }{
		{core.Shape{1, 1}, core.Shape{1, 1}},
		{core.Shape{5, 7}, core.Shape{7, 3}},
		{core.Shape{33, 17}, core.Shape{17, 65}},
		{core.Shape{3, 1, 20, 9}, core.Shape{4, 9, 18}},
		{core.Shape{130, 70}, core.Shape{70, 129}},
		{core.Shape{2, 37, 64}, core.Shape{64, 20}}, // regblock4: k and n multiples of 4
		{core.Shape{5, 8}, core.Shape{3, 8, 12}},
	}
	for _, v := range []string{"regblock", "regblock4", "regblock16", "tiled"} {
		for i, c := range cases {
			ac := core.FromFloat64s(core.F32, c.a, randn(c.a, uint64(i)))
			bc := core.FromFloat64s(core.F32, c.b, randn(c.b, uint64(i+100)))
			want := ac.Matmul(bc)
			ag, bg := ac.To(gpu), bc.To(gpu)
			got, err := b.MatmulVariant(ag, bg, v)
			require.NoError(t, err, "%s %v x %v", v, c.a, c.b)
			closeTo(t, got, want, 1e-4)
			// A transposed view goes in without a copy.
			bt := bc.Transpose().Contiguous().To(gpu).Transpose()
			require.False(t, bt.IsContiguous() && len(c.b) > 1 && c.b[len(c.b)-1] > 1)
			got, err = b.MatmulVariant(ag, bt, v)
			require.NoError(t, err)
			closeTo(t, got, want, 1e-4)
		}
	}
}

func TestTunerRemembersAndSurvivesCorruptCache(t *testing.T) {
	b := needGPU(t)
	a := core.FromFloat64s(core.F32, core.Shape{96, 96}, randn(core.Shape{96, 96}, 1), gpu)
	require.NoError(t, a.Matmul(a).Err())
	require.NoError(t, b.Sync())
	const key = "matmul|b0-m6-k6-n6-v4"
	rec, ok := b.Tuning()[key]
	require.True(t, ok, "a 96^3 product is timed: %v", b.Tuning())
	assert.Len(t, rec.Timings, 4)
	path := b.TuningFile(key)
	require.True(t, strings.HasPrefix(path, filepath.Join(os.Getenv("XDG_CACHE_HOME"), "webtensor", "webgpu", "tune-")), path)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(raw), rec.Variant)
	// A corrupt entry is ignored: the decision is measured again and the
	// entry rewritten.
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o644))
	b.ForgetTuning()
	corrupt := b.KernelCacheStats().DiskCorrupt
	require.NoError(t, a.Matmul(a).Err())
	assert.Equal(t, corrupt+1, b.KernelCacheStats().DiskCorrupt)
	raw, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(raw), b.Tuning()[key].Variant)
}

func TestRefusesF64AndOutOfRangeI64(t *testing.T) {
	needGPU(t)
	x := core.FromFloat64s(core.F64, core.Shape{2}, []float64{1, 2}, gpu)
	require.Error(t, x.Err())
	assert.Contains(t, x.Err().Error(), "cast to f32")
	big := core.FromSlice([]int64{1, 1 << 40}, core.Shape{2}, gpu)
	require.Error(t, big.Err())
	assert.Contains(t, big.Err().Error(), "does not fit in i32")
	ok := core.FromSlice([]int64{-5, 1 << 30}, core.Shape{2}, gpu)
	require.NoError(t, ok.Err())
	v, err := ok.Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{-5, 1 << 30}, v)
}

func TestSoftwareAdapterIsNeverTheDefault(t *testing.T) {
	b := needGPU(t)
	if !b.Capabilities().Software {
		t.Skipf("adapter %s is a real GPU", b.Capabilities().Description)
	}
	if os.Getenv("WEBTENSOR_DEVICE") == "" {
		assert.Equal(t, core.CPU, core.DefaultDevice())
	}
}

// Released buffers return to the pool and are handed out again, and a
// chain of kernels never reads a buffer after it was reused.
func TestPoolReuseKeepsResultsIntact(t *testing.T) {
	needGPU(t)
	want := 0.0
	x := core.FromFloat64s(core.F32, core.Shape{1000}, make([]float64, 1000), gpu)
	for i := range 50 {
		y := x.Add(core.FromFloat64s(core.F32, core.Shape{1}, []float64{1}, gpu))
		x.Release()
		x = y
		want = float64(i + 1)
	}
	v, err := x.Float64s()
	require.NoError(t, err)
	for _, e := range v {
		require.Equal(t, want, e)
	}
}

// webgpu:N picks the N-th adapter (best first); asking for one that does
// not exist says how many there are.
func TestDeviceIndex(t *testing.T) {
	needGPU(t)
	n := 0
	for {
		if _, err := core.BackendFor(core.Device{Kind: "webgpu", Index: n}); err != nil {
			assert.Contains(t, err.Error(), "this machine has")
			break
		}
		n++
	}
	require.GreaterOrEqual(t, n, 1)
	last := core.Device{Kind: "webgpu", Index: n - 1}
	x := core.FromSlice([]float32{1, 2}, core.Shape{2}, last)
	require.NoError(t, x.Err())
	assert.Equal(t, last, x.Device())
	v, err := x.Add(x).Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{2, 4}, v)
}

// Large elementwise launches pick their workgroup size by measurement,
// once per size class, and the result is still right.
func TestWorkgroupSizeIsTuned(t *testing.T) {
	b := needGPU(t)
	x := core.Call1("randn", core.Attrs{"shape": []int{1 << 20}, "seed": 9})
	got := x.To(gpu).Add(x.To(gpu))
	closeTo(t, got, x.Add(x), 1e-6)
	rec, ok := b.Tuning()["map-wg|n20"]
	require.True(t, ok, "decisions: %v", b.Tuning())
	assert.Contains(t, []string{"64", "256"}, rec.Variant)
	assert.Len(t, rec.Timings, 2)
}
