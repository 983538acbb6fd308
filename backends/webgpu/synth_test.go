package webgpu_test

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

func randomF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

// matmulOn runs a [m,k] @ [k,n] product of seeded operands on dev.
func matmulOn(t *testing.T, dev core.Device, m, k, n int) []float32 {
	t.Helper()
	rng := rand.New(rand.NewSource(7))
	a := core.FromSlice(randomF32(rng, m*k), core.Shape{m, k}, dev)
	b := core.FromSlice(randomF32(rng, k*n), core.Shape{k, n}, dev)
	c := core.Call1("matmul", nil, a, b)
	require.NoError(t, c.Err())
	v, err := c.Float32s()
	require.NoError(t, err)
	return v
}

func maxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// Every tile the template can build computes the product the CPU does, in
// force through the tuner like any decision (SetTuning), for a K whose
// chunks an unrolled step does not divide; a tile without the tail loop
// is caught by CheckVariant, and a workgroup size by its bits.
func TestSynthesisedVariantsComputeTheProduct(t *testing.T) {
	b := needGPU(t)
	const m, k, n = 36, 260, 72 // K/4 = 65 chunks: odd
	want := matmulOn(t, core.Device{Kind: "cpu"}, m, k, n)
	b.ResetKernelUses()
	matmulOn(t, gpu, m, k, n)
	var key string
	for _, u := range b.KernelUses() {
		if u.Kind == "matmul" {
			key = u.Key
		}
	}
	require.True(t, strings.HasSuffix(key, "-v4"), "the product consults a vec4 NN decision, got %q", key)
	assert.True(t, webgpu.Synthesisable(key))
	t.Cleanup(func() { _ = b.SetTuning(key, "") })
	tiles := []webgpu.MatmulTile{
		{TM: 4, TN: 4, V: 4, KU: 1, WX: 64, WY: 1},
		{TM: 8, TN: 8, V: 4, KU: 2, WX: 8, WY: 8},
		{TM: 16, TN: 8, V: 4, KU: 2, WX: 16, WY: 4},
		{TM: 2, TN: 16, V: 4, KU: 4, WX: 4, WY: 16},
		{TM: 4, TN: 8, V: 2, KU: 2, WX: 32, WY: 2},
	}
	for _, tile := range tiles {
		v := tile.Variant()
		back, err := webgpu.ParseMatmulTile(v)
		require.NoError(t, err)
		assert.Equal(t, tile, back)
		c, err := b.CheckVariant(key, v)
		require.NoError(t, err, v)
		assert.True(t, c.OK, "%s: %+v", v, c)
		require.NoError(t, b.SetTuning(key, v))
		assert.Equal(t, v, b.TuningVariant(key))
		got := matmulOn(t, gpu, m, k, n)
		assert.LessOrEqual(t, maxAbsDiff(got, want), 1e-4, v)
	}
	broken := webgpu.MatmulTile{TM: 8, TN: 8, V: 4, KU: 2, WX: 64, WY: 1, NoTail: true}.Variant()
	c, err := b.CheckVariant(key, broken)
	require.NoError(t, err)
	assert.False(t, c.OK, "a kernel that drops K's last chunk must fail its check: %+v", c)
	assert.Greater(t, c.MaxError, 10*c.Limit)

	_, err = webgpu.ParseMatmulTile("syn-m16n16v4k4-wg64x1")
	assert.ErrorContains(t, err, "at most 128")
	assert.Error(t, b.SetTuning(key, "syn-m8n8v3k3-wg8x8"))
	assert.Error(t, b.SetTuning(key, "256"), "a workgroup size is no matmul variant")

	b.ResetKernelUses()
	x := core.FromSlice(randomF32(rand.New(rand.NewSource(3)), 1<<19), core.Shape{1 << 19}, gpu)
	require.NoError(t, core.Call1("add", nil, x, x).Err())
	var wgKey string
	for _, u := range b.KernelUses() {
		if u.Kind == "map-wg" {
			wgKey = u.Key
		}
	}
	require.NotEmpty(t, wgKey, "a 2^19-element add consults the workgroup decision: %v", b.KernelUses())
	for _, wg := range webgpu.SynthWorkgroups {
		c, err := b.CheckVariant(wgKey, wg)
		require.NoError(t, err)
		assert.True(t, c.OK, "workgroup %s: %+v", wg, c)
		assert.Zero(t, c.MaxError)
	}
	d, err := b.TimeVariant(wgKey, "128", 2)
	require.NoError(t, err)
	assert.Positive(t, d)
}
