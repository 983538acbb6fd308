package diffuse

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/internal/reftest"
)

// condPipeNames are the guidance runs of testdata/make_cond_refs.py.
var condPipeNames = []string{"ddim", "euler", "euler_a"}

// replayCondPipeline runs StableDiffusionPipeline's run pname with the noise
// diffusers drew and returns the worst error of the latents relative to
// their largest value. With compiled the UNet runs as a fused IR graph
// (CompiledUNet), which must fuse elementwise chains and the attention
// head transposes (GroupNorm+SiLU is joined already: the ResNet blocks
// call ForwardSiLU).
func replayCondPipeline(t *testing.T, r *unetRefs, pname string, dev core.Device, compiled bool) float64 {
	ref, ok := r.Pipelines[pname]
	require.True(t, ok, pname)
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"), WithDevice(dev))
	require.NoError(t, err)
	k := 0
	noise := r.stackedNoise("pipe_"+pname+"/noise", ref.NoiseDraws, &k)
	pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", dev), Negative: r.Get(t, "pipe/negative_prompt_embeds", dev),
		GuidanceScale: ref.GuidanceScale, ImagesPerPrompt: ref.ImagesPerPrompt}
	p := NewUNet2DConditionPipeline(m, refScheduler(t, ref.Scheduler, ref.Eta))
	var cu *CompiledUNet
	if compiled {
		cu, err = CompileUNet2DCondition(m)
		require.NoError(t, err)
		p.Model = cu
	}
	_, fellBack := ir.FusionCounts()
	latents, err := p.Sample(pr, ref.Steps, noise)
	require.NoError(t, err)
	if compiled {
		// Sampling runs with gradients on, as a user's program does: the
		// compiled forward, like the eager one, records none, so every
		// fused node runs as its kernel rather than its original ops.
		_, after := ir.FusionCounts()
		require.Equal(t, fellBack, after, "fused nodes that ran their original ops")
		require.False(t, latents.RequiresGrad(), "the compiled UNet recorded autograd")
		b := pr.Embeds.Shape()[0] * max(ref.ImagesPerPrompt, 1) * 2
		rep := cu.FuseReport(core.Shape{b, p.Channels, p.Height, p.Width}, core.Shape{b, pr.Embeds.Shape()[1], pr.Embeds.Shape()[2]})
		t.Logf("%s: %+v", dev, rep)
		require.Positive(t, rep.Elementwise, "elementwise trees")
		require.Positive(t, rep.Attention, "attention written with its heads transposed")
	}
	require.Equal(t, ref.NoiseDraws, k, "noise draws")
	e := reftest.RelMaxErr(t, latents, r.Get(t, "pipe_"+pname+"/latents", core.CPU))
	require.Less(t, e, condPipeTol, pname)
	return e
}

// condPipeTol bounds the latents' error relative to their largest value.
// Guidance multiplies the difference of two UNet outputs by s (up to 7.5
// here), so the UNet's ~1e-6 reordering differences grow by about 2s + 1
// per step before the scheduler's coefficients; 1e-4 still leaves a
// factor of ten.
const condPipeTol = 1e-4

func TestCondPipelineMatchesDiffusers(t *testing.T) {
	r := loadCondRefs(t)
	for _, pname := range condPipeNames {
		t.Run(pname, func(t *testing.T) {
			t.Logf("worst error: %.2g", replayCondPipeline(t, r, pname, core.CPU, false))
		})
	}
	t.Run("compiled", func(t *testing.T) {
		t.Logf("worst error: %.2g", replayCondPipeline(t, r, "ddim", core.CPU, true))
	})
}

func TestCondPipelineOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	r := loadCondRefs(t)
	for _, pname := range condPipeNames {
		t.Run(pname, func(t *testing.T) {
			t.Logf("worst error: %.2g", replayCondPipeline(t, r, pname, webgputest.Device, false))
		})
	}
	t.Run("compiled", func(t *testing.T) {
		t.Logf("worst error: %.2g", replayCondPipeline(t, r, "ddim", webgputest.Device, true))
	})
}

// On WebGPU too, a seeded run gives bit-identical latents twice.
func TestCondPipelineDeterministicOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	r := loadCondRefs(t)
	dev := webgputest.Device
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"), WithDevice(dev))
	require.NoError(t, err)
	pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", dev), Negative: r.Get(t, "pipe/negative_prompt_embeds", dev),
		GuidanceScale: 6}
	run := func() []float64 {
		cfg, _ := Defaults("EulerAncestralDiscreteScheduler")
		s, err := New("EulerAncestralDiscreteScheduler", cfg)
		require.NoError(t, err)
		x, err := NewUNet2DConditionPipeline(m, s).Sample(pr, 3, SeededNoise(7))
		require.NoError(t, err)
		require.Equal(t, dev, x.Device())
		v, err := x.Float64s()
		require.NoError(t, err)
		return v
	}
	require.Equal(t, run(), run())
}

// A seeded run gives bit-identical latents twice, and another seed others;
// a shared (1, ...) negative embedding is the same as repeating it.
func TestCondPipelineDeterministic(t *testing.T) {
	r := loadCondRefs(t)
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	neg := r.Get(t, "pipe/negative_prompt_embeds", core.CPU)
	pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", core.CPU), GuidanceScale: 6,
		Negative: neg.Slice(core.Attrs{"axis": 0, "start": 0, "stop": 1})}
	run := func(pr Prompts, seed uint64) []float64 {
		cfg, _ := Defaults("EulerAncestralDiscreteScheduler")
		s, err := New("EulerAncestralDiscreteScheduler", cfg)
		require.NoError(t, err)
		x, err := NewUNet2DConditionPipeline(m, s).Sample(pr, 4, SeededNoise(seed))
		require.NoError(t, err)
		require.Equal(t, core.Shape{2, 4, 16, 16}, x.Shape())
		v, err := x.Float64s()
		require.NoError(t, err)
		return v
	}
	a := run(pr, 7)
	require.Equal(t, a, run(pr, 7))
	require.NotEqual(t, a, run(pr, 8))
	shared := pr
	shared.Negative = core.Concat([]*core.Tensor{pr.Negative, pr.Negative}, core.Attrs{"axis": 0})
	require.Equal(t, a, run(shared, 7))
	// Without guidance the negative prompt is not needed.
	require.NotEqual(t, a, run(Prompts{Embeds: pr.Embeds, GuidanceScale: 1}, 7))
}

func TestCondPipelineErrors(t *testing.T) {
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	cfg, _ := Defaults("DDIMScheduler")
	s, err := New("DDIMScheduler", cfg)
	require.NoError(t, err)
	p := NewUNet2DConditionPipeline(m, s)
	emb := func(sh ...int) *core.Tensor { return core.Zeros(core.Shape(sh), core.F32) }
	for _, c := range []struct {
		pr   Prompts
		want string
	}{
		{Prompts{GuidanceScale: 7}, "Prompts.Embeds is nil"},
		{Prompts{Embeds: emb(2, 7, 24), GuidanceScale: 7}, "guidance scale 7 needs negative embeddings"},
		{Prompts{Embeds: emb(2, 7, 24), Negative: emb(2, 5, 24), GuidanceScale: 7}, "negative embeddings have shape [2 5 24]; want [2 7 24] or [1 7 24]"},
		{Prompts{Embeds: emb(2, 7, 24), Negative: emb(3, 7, 24), GuidanceScale: 7}, "negative embeddings have shape [3 7 24]"},
		{Prompts{Embeds: emb(7, 24), GuidanceScale: 7}, "prompt embeddings have shape [7 24], want (prompts, sequence, width)"},
		{Prompts{Embeds: emb(2, 7, 24).Cast(core.F16), GuidanceScale: 1}, "prompt embeddings are f16 on cpu, the pipeline f32 on cpu"},
		{Prompts{Embeds: emb(2, 7, 20), Negative: emb(1, 7, 20), GuidanceScale: 7}, "encoder hidden states have shape [4 7 20], want (4, sequence, 24)"},
		{Prompts{Embeds: emb(2, 7, 24), ImagesPerPrompt: -1}, "ImagesPerPrompt -1"},
	} {
		_, err := p.Sample(c.pr, 2, SeededNoise(1))
		require.ErrorContains(t, err, c.want)
	}
	_, err = p.Sample(Prompts{Embeds: emb(1, 7, 24)}, 2, nil)
	require.ErrorContains(t, err, "no Noise")
	// Images per prompt multiply the batch, with or without guidance.
	x, err := p.Sample(Prompts{Embeds: emb(2, 7, 24), Negative: emb(1, 7, 24), GuidanceScale: 3, ImagesPerPrompt: 3}, 1, SeededNoise(1))
	require.NoError(t, err)
	require.Equal(t, core.Shape{6, 4, 16, 16}, x.Shape())
}
