package diffuse

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/modelfs"
	"github.com/webtensor/webtensor/multimodal"
)

// StableDiffusionPipeline is diffusers' StableDiffusionPipeline (text to
// image) loaded from the folder its save_pretrained writes: the CLIP
// tokenizer and text encoder (package multimodal) turn prompts into the
// encoder states the UNet attends to, CondPipeline runs the guided
// denoising loop, and the VAE decodes the latents. The safety checker and
// feature extractor a folder may name are not run: images are returned as
// the model made them.
type StableDiffusionPipeline struct {
	// Tokenizer truncates and pads every prompt to MaxLength ids with the
	// folder's pad token, as diffusers' padding="max_length",
	// truncation=True call does.
	Tokenizer   *multimodal.Tokenizer
	TextEncoder *multimodal.CLIPTextModel
	UNet        *UNet2DConditionModel
	VAE         *AutoencoderKL
	// Scheduler is scheduler/scheduler_config.json; every run builds its
	// own scheduler from it (a scheduler holds a run's state).
	Scheduler Config
	// MaxLength is the tokenizer's model_max_length, or the text encoder's
	// max_position_embeddings when the folder sets none.
	MaxLength int
}

// sdComponents are StableDiffusionPipeline's components in model_index.json:
// the classes each may be (any scheduler), and the optional ones this
// pipeline does not run.
var (
	sdComponents = map[string][]string{
		"unet": {"UNet2DConditionModel"}, "vae": {"AutoencoderKL"}, "text_encoder": {"CLIPTextModel"},
		"tokenizer": {"CLIPTokenizer", "CLIPTokenizerFast"}, "scheduler": nil,
	}
	sdUnused = map[string]bool{"safety_checker": true, "feature_extractor": true, "image_encoder": true,
		"requires_safety_checker": true}
)

// LoadStableDiffusion loads a StableDiffusionPipeline folder:
// model_index.json, unet/, vae/, text_encoder/ (a transformers
// CLIPTextModel), tokenizer/ (tokenizer.json, or vocab.json and
// merges.txt) and scheduler/scheduler_config.json. Every model loads as
// strictly as its own loader, on the device and in the dtype the options
// give, and the components must fit together (the text encoder's width is
// the UNet's cross_attention_dim, the VAE's latent channels the UNet's).
func LoadStableDiffusion(dir string, opts ...LoadOption) (*StableDiffusionPipeline, error) {
	const op = "diffuse: LoadStableDiffusion"
	o := newLoadOptions(opts)
	d, err := o.folder(op, dir)
	if err != nil {
		return nil, err
	}
	if err := checkSDIndex(d); err != nil {
		return nil, err
	}
	p := &StableDiffusionPipeline{}
	raw, err := d.Sub("scheduler").ReadFile("scheduler_config.json")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if p.Scheduler, err = ParseConfig(raw); err != nil {
		return nil, fmt.Errorf("%s: scheduler/scheduler_config.json: %w", op, err)
	}
	if p.UNet, err = LoadUNet2DCondition(d.Path("unet"), opts...); err != nil {
		return nil, err
	}
	if p.VAE, err = LoadAutoencoderKL(d.Path("vae"), opts...); err != nil {
		return nil, err
	}
	textOpts := []multimodal.LoadOption{multimodal.WithDevice(o.dev), multimodal.WithDType(o.dtype)}
	var tokOpts []multimodal.LoadOption
	if o.fsys != nil {
		textOpts = append(textOpts, multimodal.FromFS(o.fsys))
		tokOpts = append(tokOpts, multimodal.FromFS(o.fsys))
	}
	if p.TextEncoder, err = multimodal.LoadCLIPTextModel(d.Path("text_encoder"), textOpts...); err != nil {
		return nil, err
	}
	tok, tcfg, err := multimodal.LoadCLIPTokenizer(d.Path("tokenizer"), tokOpts...)
	if err != nil {
		return nil, err
	}
	enc := p.TextEncoder.Config
	p.MaxLength = tcfg.ModelMaxLength
	if p.MaxLength == 0 {
		p.MaxLength = enc.MaxPositionEmbeddings
	}
	u, v := p.UNet.Config, p.VAE.Config
	switch {
	case p.MaxLength > enc.MaxPositionEmbeddings:
		return nil, fmt.Errorf("%s: the tokenizer's model_max_length %d is more than the text encoder's max_position_embeddings %d", op, p.MaxLength, enc.MaxPositionEmbeddings)
	case enc.HiddenSize != u.CrossAttentionDim:
		return nil, fmt.Errorf("%s: the text encoder's hidden_size %d is not the UNet's cross_attention_dim %d", op, enc.HiddenSize, u.CrossAttentionDim)
	case v.LatentChannels != u.InChannels || v.LatentChannels != u.OutChannels:
		return nil, fmt.Errorf("%s: the VAE's latent_channels %d differ from the UNet's in_channels %d and out_channels %d", op, v.LatentChannels, u.InChannels, u.OutChannels)
	}
	if p.Tokenizer, err = tcfg.MaxLengthPadded(tok, p.MaxLength); err != nil {
		return nil, fmt.Errorf("%s: tokenizer: %w", op, err)
	}
	return p, nil
}

// checkSDIndex holds model_index.json to StableDiffusionPipeline's layout:
// the class, each component as [library, class] with a class this
// pipeline loads, and no component it does not know.
func checkSDIndex(d modelfs.Dir) error {
	const op = "diffuse: LoadStableDiffusion"
	path := d.Path("model_index.json")
	raw, err := d.ReadFile("model_index.json")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var index map[string]json.RawMessage
	if err := json.Unmarshal(raw, &index); err != nil {
		return fmt.Errorf("%s: %s: %w", op, path, err)
	}
	var class string
	_ = json.Unmarshal(index["_class_name"], &class)
	if class != "StableDiffusionPipeline" {
		return fmt.Errorf("%s: %s: _class_name is %s, want \"StableDiffusionPipeline\"", op, path, string(index["_class_name"]))
	}
	keys := make([]string, 0, len(index))
	for k := range index {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := sdComponents[k]; !ok && !sdUnused[k] && !strings.HasPrefix(k, "_") {
			return fmt.Errorf("%s: %s: component %q is not one StableDiffusionPipeline has", op, path, k)
		}
	}
	for _, name := range []string{"scheduler", "text_encoder", "tokenizer", "unet", "vae"} {
		var entry []*string
		if err := json.Unmarshal(index[name], &entry); err != nil || len(entry) != 2 || entry[1] == nil {
			return fmt.Errorf("%s: %s: component %q is %s, want [library, class]", op, path, name, string(index[name]))
		}
		if want := sdComponents[name]; want != nil && !slices.Contains(want, *entry[1]) {
			return fmt.Errorf("%s: %s: component %q is a %s, want %s", op, path, name, *entry[1], strings.Join(want, " or "))
		}
	}
	return nil
}

// TextToImage is one run of a StableDiffusionPipeline: the arguments of
// diffusers' __call__ that webtensor takes.
type TextToImage struct {
	Prompts []string
	// NegativePrompts are the unconditional half of guidance: nil for
	// the empty prompt (diffusers' default), one shared by every prompt,
	// or one per prompt.
	NegativePrompts []string
	// GuidanceScale is classifier-free guidance's s (diffusers' default
	// is 7.5); at s <= 1 the prompts run alone, as in diffusers.
	GuidanceScale float64
	// ImagesPerPrompt is num_images_per_prompt; 0 means 1.
	ImagesPerPrompt int
	// Steps is num_inference_steps.
	Steps int
	// Height and Width are the images' size in pixels; 0 takes the UNet's
	// sample_size times the VAE's scale factor, diffusers' default. Each
	// must be a multiple of the scale factor.
	Height, Width int
	// Scheduler names a scheduler class to sample with, its config
	// converted from the folder's (Config.For); "" keeps the folder's.
	Scheduler string
	// Progress, when set, is told after each denoising step (WithProgress).
	Progress Progress
}

// ScaleFactor is the VAE's downsampling, 2^(blocks-1): the images' side
// over the latents'.
func (p *StableDiffusionPipeline) ScaleFactor() int {
	return 1 << max(len(p.VAE.Config.BlockOutChannels)-1, 0)
}

// EncodePrompts is the text encoder's last hidden state for texts,
// (len(texts), MaxLength, hidden): each text tokenized, truncated and
// padded to MaxLength, and encoded without an attention mask, as
// diffusers' encode_prompt does.
func (p *StableDiffusionPipeline) EncodePrompts(texts []string) (*core.Tensor, error) {
	const op = "diffuse: StableDiffusionPipeline.EncodePrompts"
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s: no texts", op)
	}
	encs, err := p.Tokenizer.EncodeBatch(texts, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	in, err := multimodal.BatchTensors(encs, p.TextEncoder.Device())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out, err := p.TextEncoder.EncodeText(in.IDs, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out.LastHiddenState, nil
}

// prompts encodes a run's prompts and negative prompts.
func (p *StableDiffusionPipeline) prompts(r TextToImage) (Prompts, error) {
	pr := Prompts{GuidanceScale: r.GuidanceScale, ImagesPerPrompt: r.ImagesPerPrompt}
	if len(r.Prompts) == 0 {
		return Prompts{}, fmt.Errorf("no prompts")
	}
	var err error
	if pr.Embeds, err = p.EncodePrompts(r.Prompts); err != nil {
		return Prompts{}, err
	}
	if r.GuidanceScale <= 1 {
		return pr, nil
	}
	neg := r.NegativePrompts
	switch len(neg) {
	case 0:
		neg = make([]string, len(r.Prompts))
	case 1, len(r.Prompts):
	default:
		return Prompts{}, fmt.Errorf("%d negative prompts for %d prompts: want none, one or one per prompt", len(neg), len(r.Prompts))
	}
	if pr.Negative, err = p.EncodePrompts(neg); err != nil {
		return Prompts{}, err
	}
	return pr, nil
}

// Latents runs the text encoder and the guided loop and returns the final
// latents (len(Prompts)·ImagesPerPrompt, latent channels, Height/f,
// Width/f) for the scale factor f. noise draws the initial latents first,
// then whatever the scheduler's steps draw: SeededNoise(seed) makes a run
// reproducible.
func (p *StableDiffusionPipeline) Latents(r TextToImage, noise Noise) (*core.Tensor, error) {
	const op = "diffuse: StableDiffusionPipeline"
	if p.Tokenizer == nil || p.TextEncoder == nil || p.UNet == nil || p.VAE == nil {
		return nil, fmt.Errorf("%s: Tokenizer, TextEncoder, UNet and VAE must be set (LoadStableDiffusion sets them)", op)
	}
	if r.Steps < 1 {
		return nil, fmt.Errorf("%s: steps %d, want >= 1", op, r.Steps)
	}
	f := p.ScaleFactor()
	h, w := r.Height, r.Width
	if h == 0 {
		h = p.UNet.Config.SampleSize * f
	}
	if w == 0 {
		w = p.UNet.Config.SampleSize * f
	}
	if h < f || w < f || h%f != 0 || w%f != 0 {
		return nil, fmt.Errorf("%s: image size %d×%d (height×width) must be positive multiples of the VAE's scale factor %d", op, h, w, f)
	}
	cfg := p.Scheduler
	if r.Scheduler != "" && r.Scheduler != cfg.Class {
		var err error
		if cfg, err = cfg.For(r.Scheduler); err != nil {
			return nil, fmt.Errorf("%s: scheduler %q: %w", op, r.Scheduler, err)
		}
	}
	s, err := New(cfg.Class, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	pr, err := p.prompts(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	cond := NewUNet2DConditionPipeline(p.UNet, WithProgress(s, r.Progress))
	cond.Height, cond.Width = h/f, w/f
	return cond.Sample(pr, r.Steps, noise)
}

// Generate is Latents decoded by the VAE (divided by its scaling_factor)
// to images in [0, 1], (len(Prompts)·ImagesPerPrompt, out_channels,
// Height, Width) on the pipeline's device: diffusers' output_type="pt"
// images (output_type="np" is their (B, H, W, C) transpose).
func (p *StableDiffusionPipeline) Generate(r TextToImage, noise Noise) (*core.Tensor, error) {
	x, err := p.Latents(r, noise)
	if err != nil {
		return nil, err
	}
	img, err := p.VAE.Decode(div(x, p.VAE.Config.ScalingFactor))
	if err != nil {
		return nil, fmt.Errorf("diffuse: StableDiffusionPipeline: %w", err)
	}
	out := div(img, 2).Add(scalarLike(img, 0.5)).Clamp(core.Attrs{"min": 0.0, "max": 1.0})
	if err := out.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: StableDiffusionPipeline: %w", err)
	}
	return out, nil
}

// LatentsThen is Noise whose first draw is latents, as diffusers' latents=
// argument gives a pipeline its initial latents (before init_noise_sigma
// scales them), moved to the device and cast to the dtype the draw asks
// for; the later draws (a stochastic scheduler's) are rest's.
func LatentsThen(latents *core.Tensor, rest Noise) Noise {
	first := true
	return func(shape core.Shape, dtype core.DType, dev core.Device) (*core.Tensor, error) {
		if !first {
			if rest == nil {
				return nil, fmt.Errorf("diffuse: LatentsThen: a draw after the initial latents and no noise for it")
			}
			return rest(shape, dtype, dev)
		}
		first = false
		if latents == nil {
			return nil, fmt.Errorf("diffuse: LatentsThen: the initial latents are nil")
		}
		x := latents
		if x.Device() != dev {
			x = x.To(dev)
		}
		if x.DType() != dtype {
			x = x.Cast(dtype)
		}
		return x, x.Err()
	}
}
