package diffuse

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The ControlNet reference vectors: diffusers 0.42 ran tiny seeded
// ControlNetModels beside the tiny conditional UNets, and
// StableDiffusionControlNetPipeline and its img2img pipeline on the first
// (testdata/make_controlnet_refs.py), with every noise drawn.

type controlRunRef struct {
	Kind            string   `json:"kind"`
	Steps           int      `json:"steps"`
	GuidanceScale   float64  `json:"guidance_scale"`
	Conditioning    float64  `json:"conditioning_scale"`
	Start           float64  `json:"control_guidance_start"`
	End             float64  `json:"control_guidance_end"`
	Prompts         int      `json:"prompts"`
	ImagesPerPrompt int      `json:"images_per_prompt"`
	ControlImages   int      `json:"control_images"`
	Strength        *float64 `json:"strength"`
	NoiseDraws      int      `json:"noise_draws"`
	Scheduler       string   `json:"scheduler"`
	Eta             float64  `json:"eta"`
}

type controlRefs struct {
	Models        []string                 `json:"models"`
	ResidualT     float64                  `json:"residual_t"`
	ResidualScale float64                  `json:"residual_scale"`
	UNetTimesteps []float64                `json:"unet_timesteps"`
	Runs          map[string]controlRunRef `json:"runs"`
	refTensors
}

func loadControlRefs(t testing.TB) *controlRefs {
	t.Helper()
	var r controlRefs
	r.refTensors = readRefs(t, "controlnet_refs", &r)
	require.Len(t, r.Models, 2)
	return &r
}

// controlUNet is the UNet each ControlNet of the references was made for.
var controlUNet = map[string]string{"controlnet_tiny": "unet2dcond_tiny", "controlnet_variant": "unet2dcond_variant"}

// checkControlNet compares model name's residuals and the UNet's output
// with them on dev and returns the worst relative error.
func (r *controlRefs) checkControlNet(t *testing.T, name string, dev core.Device) float64 {
	net, err := LoadControlNet(filepath.Join("testdata", name), WithDevice(dev))
	require.NoError(t, err)
	unet, err := LoadUNet2DCondition(filepath.Join("testdata", controlUNet[name]), WithDevice(dev))
	require.NoError(t, err)
	x := r.Get(t, name+"/sample", dev)
	enc := r.Get(t, name+"/encoder_hidden_states", dev)
	cond := r.Get(t, name+"/cond", dev)
	res, err := net.Forward(x, r.ResidualT, enc, cond, r.ResidualScale)
	require.NoError(t, err)
	worst := 0.0
	for i, d := range res.Down {
		e := reftest.RelMaxErr(t, d, r.Get(t, fmt.Sprintf("%s/down_%d", name, i), core.CPU))
		require.Less(t, e, condTol, "%s down residual %d", name, i)
		worst = math.Max(worst, e)
	}
	_, ok := r.File.Tensors[fmt.Sprintf("%s/down_%d", name, len(res.Down))]
	require.False(t, ok, "diffusers gave more down residuals than %d", len(res.Down))
	e := reftest.RelMaxErr(t, res.Mid, r.Get(t, name+"/mid", core.CPU))
	require.Less(t, e, condTol, "%s mid residual", name)
	worst = math.Max(worst, e)
	for _, ts := range r.UNetTimesteps {
		res, err := net.Forward(x, ts, enc, cond, 1)
		require.NoError(t, err)
		out, err := unet.ForwardControlled(x, ts, enc, res)
		require.NoError(t, err)
		e := reftest.RelMaxErr(t, out, r.Get(t, fmt.Sprintf("%s/unet_%d", name, int(ts)), core.CPU))
		require.Less(t, e, condTol, "%s: UNet with residuals at t=%v", name, ts)
		worst = math.Max(worst, e)
	}
	return worst
}

func TestControlNetMatchesDiffusers(t *testing.T) {
	r := loadControlRefs(t)
	checkEach(t, r.Models, core.CPU, r.checkControlNet)
}

func TestControlNetOnWebGPU(t *testing.T) {
	r := loadControlRefs(t)
	checkEachOnWebGPU(t, r.Models, r.checkControlNet)
}

// replayControlRun runs one of diffusers' ControlNet pipeline runs with the
// noise it drew and returns the worst relative error (of the latents, and
// for img2img of the decoded images too).
func (r *controlRefs) replayControlRun(t *testing.T, name string, dev core.Device) float64 {
	run := r.Runs[name]
	unet, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"), WithDevice(dev))
	require.NoError(t, err)
	net, err := LoadControlNet(filepath.Join("testdata", "controlnet_tiny"), WithDevice(dev))
	require.NoError(t, err)
	rows := func(key string, n int) *core.Tensor { return sliceAxis(r.Get(t, key, dev), 0, 0, n) }
	pr := Prompts{Embeds: rows("pipe/prompt_embeds", run.Prompts), Negative: rows("pipe/negative_prompt_embeds", run.Prompts),
		GuidanceScale: run.GuidanceScale, ImagesPerPrompt: run.ImagesPerPrompt}
	p := NewUNet2DConditionPipeline(unet, refScheduler(t, run.Scheduler, run.Eta))
	p.Height, p.Width = 8, 8
	p.Control = &Control{Net: net, Image: rows("pipe/control", run.ControlImages), Scale: run.Conditioning,
		Start: run.Start, End: run.End}
	k := 0
	noise := r.replayNoise(t, "pipe_"+name, run.NoiseDraws, &k)
	if run.Kind == "txt2img" {
		latents, err := p.Sample(pr, run.Steps, noise)
		require.NoError(t, err)
		require.Equal(t, run.NoiseDraws, k, "noise draws")
		e := reftest.RelMaxErr(t, latents, r.Get(t, "pipe_"+name+"/latents", core.CPU))
		require.Less(t, e, condPipeTol, name)
		return e
	}
	vae, err := LoadAutoencoderKL(filepath.Join("testdata", "vae_tiny"), WithDevice(dev))
	require.NoError(t, err)
	images, err := (&Img2ImgPipeline{VAE: vae, Cond: p}).Generate(r.Get(t, "pipe/init", dev), *run.Strength, pr, run.Steps, noise)
	require.NoError(t, err)
	require.Equal(t, run.NoiseDraws, k, "noise draws")
	e := reftest.RelMaxErr(t, images, r.Get(t, "pipe_"+name+"/images", core.CPU))
	require.Less(t, e, condPipeTol, name)
	return e
}

func TestControlNetPipelinesMatchDiffusers(t *testing.T) {
	r := loadControlRefs(t)
	checkEach(t, sortedKeys(r.Runs), core.CPU, r.replayControlRun)
}

func TestControlNetPipelinesOnWebGPU(t *testing.T) {
	r := loadControlRefs(t)
	checkEachOnWebGPU(t, sortedKeys(r.Runs), r.replayControlRun)
}

func TestControlNetStateDictNames(t *testing.T) {
	requireCheckpointNames(t, LoadControlNet, "controlnet_tiny", "controlnet_variant")
}

// Outside the control window the pipeline runs the plain UNet: a window
// that never opens gives the uncontrolled latents bit for bit, and one
// that does changes them.
func TestControlWindow(t *testing.T) {
	r := loadControlRefs(t)
	unet, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	net, err := LoadControlNet(filepath.Join("testdata", "controlnet_tiny"))
	require.NoError(t, err)
	pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", core.CPU), Negative: r.Get(t, "pipe/negative_prompt_embeds", core.CPU),
		GuidanceScale: 4}
	run := func(c *Control) []float64 {
		cfg, _ := Defaults("DDIMScheduler")
		s, err := New("DDIMScheduler", cfg)
		require.NoError(t, err)
		p := NewUNet2DConditionPipeline(unet, s)
		p.Height, p.Width, p.Control = 8, 8, c
		x, err := p.Sample(pr, 4, SeededNoise(5))
		require.NoError(t, err)
		v, err := x.Float64s()
		require.NoError(t, err)
		return v
	}
	img := sliceAxis(r.Get(t, "pipe/control", core.CPU), 0, 0, 1)
	plain := run(nil)
	// With 4 steps, (i+1)/4 > 0.2 for every i: the window never opens.
	require.Equal(t, plain, run(&Control{Net: net, Image: img, Scale: 1, Start: 0, End: 0.2}))
	require.NotEqual(t, plain, run(NewControl(net, img)))
}

func TestControlNetErrors(t *testing.T) {
	r := loadControlRefs(t)
	net, err := LoadControlNet(filepath.Join("testdata", "controlnet_tiny"))
	require.NoError(t, err)
	unet, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	variant, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_variant"))
	require.NoError(t, err)
	x := r.Get(t, "controlnet_tiny/sample", core.CPU)
	enc := r.Get(t, "controlnet_tiny/encoder_hidden_states", core.CPU)
	cond := r.Get(t, "controlnet_tiny/cond", core.CPU)
	_, err = net.Forward(x, 1, enc, sliceAxis(cond, 2, 0, 16), 1)
	require.ErrorContains(t, err, "control image has shape [2 3 16 32], want [2 3 32 32]")
	_, err = net.Forward(x, 1, enc, nil, 1)
	require.ErrorContains(t, err, "no control image")
	_, err = net.Forward(x, 1, sliceAxis(enc, 2, 0, 5), cond, 1)
	require.ErrorContains(t, err, "encoder hidden states have shape [2 7 5]")
	res, err := net.Forward(x, 1, enc, cond, 1)
	require.NoError(t, err)
	// Residuals of the tiny ControlNet do not fit the variant UNet.
	vx := core.Zeros(core.Shape{2, 4, 16, 16}, core.F32)
	_, err = variant.ForwardControlled(vx, 1, core.Zeros(core.Shape{2, 7, 12}, core.F32), res)
	require.ErrorContains(t, err, "4 down residuals for the UNet's 6 down-path states")
	short := &ControlResiduals{Down: res.Down, Mid: sliceAxis(res.Mid, 2, 0, 2)}
	_, err = unet.ForwardControlled(x, 1, enc, short)
	require.ErrorContains(t, err, "mid residual has shape [2 32 2 8], the mid block's output [2 32 8 8]")

	cfg, _ := Defaults("DDIMScheduler")
	s, err := New("DDIMScheduler", cfg)
	require.NoError(t, err)
	p := NewUNet2DConditionPipeline(unet, s)
	p.Height, p.Width = 8, 8
	pr := Prompts{Embeds: r.Get(t, "pipe/prompt_embeds", core.CPU), Negative: r.Get(t, "pipe/negative_prompt_embeds", core.CPU), GuidanceScale: 3}
	img := r.Get(t, "pipe/control", core.CPU)
	for _, c := range []struct {
		ctrl *Control
		want string
	}{
		{&Control{Net: net, Image: img, Scale: 1}, "guidance window [0, 0] must satisfy 0 <= Start < End <= 1"},
		{&Control{Net: net, Image: img, Scale: 1, Start: 0.5, End: 1.5}, "guidance window [0.5, 1.5]"},
		{&Control{Image: img, End: 1}, "Control.Net is nil"},
		{&Control{Net: net, End: 1}, "Control.Image is nil"},
		{NewControl(net, core.Concat([]*core.Tensor{img, img}, core.Attrs{"axis": 0})), "control image batch is 4; want 1 or the number of prompts, 2"},
		{NewControl(net, img.Cast(core.F16)), "control image is f16 on cpu, the pipeline f32 on cpu"},
		{NewControl(net, sliceAxis(img, 3, 0, 8)), "control image has shape [4 3 16 8], want [4 3 16 16]"},
	} {
		p.Control = c.ctrl
		_, err := p.Sample(pr, 2, SeededNoise(1))
		require.ErrorContains(t, err, c.want)
	}
	// A model without ForwardControlled cannot be steered.
	p.Model, p.Control = plainCond{unet}, NewControl(net, img)
	_, err = p.Sample(pr, 2, SeededNoise(1))
	require.ErrorContains(t, err, "takes no ControlNet residuals")
}

// plainCond hides UNet2DConditionModel's ForwardControlled.
type plainCond struct{ m *UNet2DConditionModel }

func (p plainCond) Forward(x *core.Tensor, t float64, ctx *core.Tensor) (*core.Tensor, error) {
	return p.m.Forward(x, t, ctx)
}

func TestControlNetConfigErrors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "controlnet_tiny", "config.json"))
	require.NoError(t, err)
	var base map[string]any
	require.NoError(t, json.Unmarshal(raw, &base))
	for _, c := range []struct {
		key  string
		val  any
		want string
	}{
		{"global_pool_conditions", true, "key \"global_pool_conditions\": value true is not supported"},
		{"controlnet_conditioning_channel_order", "rbg", `key "controlnet_conditioning_channel_order": value "rbg" is not supported`},
		{"mid_block_type", "UNetMidBlock2D", "key \"mid_block_type\": value \"UNetMidBlock2D\" is not supported"},
		{"conditioning_embedding_out_channels", []int{}, "conditioning_embedding_out_channels: empty"},
		{"conditioning_channels", 0, "conditioning_channels: 0, want >= 1"},
		{"up_block_types", []string{"UpBlock2D"}, `unknown key "up_block_types"`},
		{"block_out_channels", []int{16, 30}, "ControlNetModel config: block_out_channels: [16 30]: entry 1 is not a positive multiple of norm_num_groups 8"},
		{"layers_per_block", []int{1, 1}, `key "layers_per_block":`},
		{"class_embed_type", "timestep", "key \"class_embed_type\": value \"timestep\" is not supported"},
	} {
		cfg := map[string]any{}
		for k, v := range base {
			cfg[k] = v
		}
		cfg[c.key] = c.val
		b, err := json.Marshal(cfg)
		require.NoError(t, err)
		_, err = ParseControlNetConfig(b)
		require.ErrorContains(t, err, c.want, c.key)
	}
	cfg, err := ParseControlNetConfig(raw)
	require.NoError(t, err)
	require.Equal(t, 2, cfg.ControlScale())
	require.Equal(t, []int{8, 16}, cfg.ConditioningEmbeddingOutChannels)
}
