package diffuse

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
	"github.com/webtensor/webtensor/nn"
)

// pointwise is a model whose prediction at a pixel depends on that pixel
// alone (and the encoder states' mean), so tiling must not change it: the
// blend's weights must sum to one at every pixel and each tile must land
// where it came from.
type pointwise struct{}

func (pointwise) Forward(x *core.Tensor, t float64, ctx *core.Tensor) (*core.Tensor, error) {
	c := ctx.Mean(core.Attrs{"axes": []int{1, 2}, "keepdim": true}).Reshape(core.Shape{dimOf(ctx, 0), 1, 1, 1})
	out := x.Tanh().Mul(x).Add(c).Add(scalarLike(x, t/1000))
	return out, out.Err()
}

func TestTiledDenoiserBlendsExactly(t *testing.T) {
	devs := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devs = append(devs, webgputest.Device)
	}
	for _, dev := range devs {
		checkBlendsExactly(t, dev)
	}
}

func checkBlendsExactly(t *testing.T, dev core.Device) {
	ctx := core.Randn(core.Attrs{"shape": []int{2, 3, 5}, "dtype": core.F32, "seed": int64(1)}).To(dev)
	for _, c := range []struct{ h, w, tile, overlap int }{
		{24, 24, 16, 8}, {20, 37, 8, 3}, {9, 30, 16, 4}, {16, 16, 16, 4}, {33, 17, 10, 9},
	} {
		x := core.Randn(core.Attrs{"shape": []int{2, 4, c.h, c.w}, "dtype": core.F32, "seed": int64(2)}).To(dev)
		want, err := pointwise{}.Forward(x, 300, ctx)
		require.NoError(t, err)
		got, err := (&TiledDenoiser{Model: pointwise{}, Tile: c.tile, Overlap: c.overlap}).Forward(x, 300, ctx)
		require.NoError(t, err)
		e := reftest.RelMaxErr(t, got, want)
		require.Less(t, e, 1e-6, "%+v on %s", c, dev)
	}
}

// seamErrors compares a tiled prediction with the whole one: the largest
// error, relative to the largest value, over the pixels in an overlap band
// (covered by two or more windows) and over the rest.
func seamErrors(t *testing.T, tiled, full *core.Tensor, side, tile, overlap int) (band, inner float64) {
	g, err := tiled.Float64s()
	require.NoError(t, err)
	w, err := full.Float64s()
	require.NoError(t, err)
	starts := tileStarts(side, tile, overlap)
	inBand := func(p int) bool {
		for k := 1; k < len(starts); k++ {
			if p >= starts[k] && p < starts[k-1]+tile {
				return true
			}
		}
		return false
	}
	scale := 0.0
	for i, v := range w {
		scale = math.Max(scale, math.Abs(v))
		d := math.Abs(v - g[i])
		if y, x := (i/side)%side, i%side; inBand(y) || inBand(x) {
			band = math.Max(band, d)
		} else {
			inner = math.Max(inner, d)
		}
	}
	return band / scale, inner / scale
}

// The tiny UNet tiled against the whole where both fit. Its group norms
// and attention see the whole tile, so no tile's prediction equals the
// whole one's even far from a seam (the "inner" error is the model's
// non-locality, which tiling cannot remove). What the blend controls is
// the seams: there the error must stay within 1.5 times the inner one,
// where a 1-pixel overlap leaves it at 1.8 times and more; and a tile as
// large as the latents is the plain Forward, bit for bit.
func TestTiledUNetSeams(t *testing.T) {
	r := loadCondRefs(t)
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	ctx := r.Get(t, "pipe/prompt_embeds", core.CPU)
	const side = 24
	x := core.Randn(core.Attrs{"shape": []int{2, 4, side, side}, "dtype": core.F32, "seed": int64(4)})
	for _, ts := range []float64{999, 500, 50} {
		full, err := m.Forward(x, ts, ctx)
		require.NoError(t, err)
		tiled, err := (&TiledDenoiser{Model: m, Tile: 16, Overlap: 8}).Forward(x, ts, ctx)
		require.NoError(t, err)
		band, inner := seamErrors(t, tiled, full, side, 16, 8)
		hard, err := (&TiledDenoiser{Model: m, Tile: 16, Overlap: 1}).Forward(x, ts, ctx)
		require.NoError(t, err)
		hardBand, _ := seamErrors(t, hard, full, side, 16, 1)
		t.Logf("t=%v: seam error %.3g, inner %.3g (ratio %.2f); with a 1-pixel overlap the seams are at %.3g",
			ts, band, inner, band/inner, hardBand)
		require.Less(t, band, 1.5*inner, "t=%v", ts)
		require.Less(t, band, hardBand, "t=%v", ts)
	}
	whole, err := (&TiledDenoiser{Model: m, Tile: 16, Overlap: 4}).Forward(sliceAxis(sliceAxis(x, 2, 0, 16), 3, 0, 16), 500, ctx)
	require.NoError(t, err)
	plain, err := m.Forward(sliceAxis(sliceAxis(x, 2, 0, 16), 3, 0, 16), 500, ctx)
	require.NoError(t, err)
	a, _ := whole.Float64s()
	b, _ := plain.Float64s()
	require.Equal(t, b, a)
}

// crossProjections counts the key/value projections of encoder states the
// model's cross-attention layers have computed, and the layers.
func crossProjections(m nn.Module) (computed, layers int) {
	for _, a := range crossAttentions(m) {
		computed += a.kv.computed
		if a.kv.computed > 0 {
			layers++
		}
	}
	return computed, layers
}

// A guided, tiled run projects the text once per cross-attention layer
// for the whole run (not per step, tile or guidance half), and gives the
// latents it gives without the cache, bit for bit.
func TestCrossAttentionCacheOncePerRun(t *testing.T) {
	r := loadCondRefs(t)
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", core.CPU), Negative: r.Get(t, "pipe/negative_prompt_embeds", core.CPU),
		GuidanceScale: 4}
	const steps, tiles = 3, 4 // 24×24 latents in 16×16 windows 8 apart: 2×2 windows
	run := func(model CondDenoiser) ([]float64, int, int) {
		before, _ := crossProjections(m)
		cfg, _ := Defaults("EulerDiscreteScheduler")
		s, err := New("EulerDiscreteScheduler", cfg)
		require.NoError(t, err)
		p := NewUNet2DConditionPipeline(m, s)
		p.Model, p.Height, p.Width = &TiledDenoiser{Model: model, Tile: 16, Overlap: 8}, 24, 24
		x, err := p.Sample(pr, steps, SeededNoise(3))
		require.NoError(t, err)
		v, err := x.Float64s()
		require.NoError(t, err)
		after, layers := crossProjections(m)
		return v, after - before, layers
	}
	cached, n, layers := run(m)
	require.Equal(t, 7, layers) // the tiny UNet's Transformer2DModels: 1 + 1 down, 1 mid, 2 + 2 up
	require.Equal(t, layers, n, "projections with the cache")
	plain, n, _ := run(plainCond{m})
	require.Equal(t, layers*steps*tiles, n, "projections without it")
	require.Equal(t, plain, cached)
	// Released after the run: a plain Forward projects again.
	before, _ := crossProjections(m)
	_, err = m.Forward(core.Zeros(core.Shape{2, 4, 16, 16}, core.F32), 1, pr.Embeds)
	require.NoError(t, err)
	after, _ := crossProjections(m)
	require.Equal(t, layers, after-before)
}

func TestTiledDenoiserErrors(t *testing.T) {
	x := core.Zeros(core.Shape{1, 4, 24, 24}, core.F32)
	ctx := core.Zeros(core.Shape{1, 3, 5}, core.F32)
	for _, c := range []struct {
		d    *TiledDenoiser
		want string
	}{
		{&TiledDenoiser{Tile: 8, Overlap: 2}, "Model is nil"},
		{&TiledDenoiser{Model: pointwise{}, Tile: 0, Overlap: 2}, "tile of 0 latent pixels"},
		{&TiledDenoiser{Model: pointwise{}, Tile: 8, Overlap: 8}, "overlap 8, want 1 to 7 (less than the tile of 8)"},
		{&TiledDenoiser{Model: pointwise{}, Tile: 8, Overlap: 0}, "overlap 0"},
	} {
		_, err := c.d.Forward(x, 1, ctx)
		require.ErrorContains(t, err, c.want)
	}
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	_, err = (&TiledDenoiser{Model: m, Tile: 9, Overlap: 3}).Forward(x, 1, core.Zeros(core.Shape{1, 3, 24}, core.F32))
	require.ErrorContains(t, err, "tile at (0, 0): diffuse: UNet2DConditionModel.Forward: sample is 9×9; height and width must be positive multiples of 2")
}
