package abi

import (
	"encoding/json"
	"runtime"
	"slices"
	"sync"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/diffuse"
	"github.com/webtensor/webtensor/internal/modelfs"
	"github.com/webtensor/webtensor/nn"
)

// Diffusion pipelines (the diffusion.* targets): a folder diffusers'
// save_pretrained wrote for DDPMPipeline, DDIMPipeline, DiTPipeline or
// StableDiffusionPipeline, or a zip archive of one (the browser has no
// folders), loaded by package diffuse and sampled there with a seeded
// Philox noise stream, so every SDK gets the same images for a seed on one
// device.

var diffusionPipelines = newObjects[*diffusionPipeline]("diffusion pipeline")

// diffusionPipeline is a loaded pipeline folder. The scheduler is kept as
// its config and built per call: schedulers carry a run's state
// (timesteps, multistep history), and a call may ask for another class.
type diffusionPipeline struct {
	class string // model_index.json's _class_name
	sched diffuse.Config
	unet  *diffuse.UNet2DModel           // DDPMPipeline, DDIMPipeline
	dit   *diffuse.DiTTransformer2DModel // DiTPipeline
	vae   *diffuse.AutoencoderKL         // DiTPipeline
	sd    *diffuse.StableDiffusionPipeline
	dev   core.Device
	// mu lets diffusion.quantize_int8 change the models' weights while
	// no other thread samples with them.
	mu   sync.RWMutex
	int8 bool // the models hold int8 weights
}

// models are the pipeline's denoiser and VAE (a text-to-image pipeline's
// CLIP text encoder is multimodal's, run once per prompt, and stays f32).
func (p *diffusionPipeline) models() []nn.Module {
	switch {
	case p.unet != nil:
		return []nn.Module{p.unet}
	case p.sd != nil:
		return []nn.Module{p.sd.UNet, p.sd.VAE}
	}
	return []nn.Module{p.dit, p.vae}
}

// pipelineComponents are the components each supported pipeline class
// has, with the class model_index.json must name for each.
var pipelineComponents = map[string]map[string]string{
	"DDPMPipeline": {"unet": "UNet2DModel", "scheduler": ""},
	"DDIMPipeline": {"unet": "UNet2DModel", "scheduler": ""},
	"DiTPipeline":  {"transformer": "DiTTransformer2DModel", "vae": "AutoencoderKL", "scheduler": ""},
}

// diffusionLoad is diffusion.load: the pipeline folder dir
// (model_index.json, scheduler/scheduler_config.json and the models'
// folders) with the weights on device ("": the default).
func diffusionLoad(dir, device string) (int64, error) {
	return fromFolder("diffusion.load", dir, device, diffusionLoadDir)
}

// maxZipBytes bounds the uncompressed bytes a model's zip archive (a
// pipeline's, a sentence encoder's, CLIP's) may declare in all, so a zip
// bomb fails before anything is read. A page's WebAssembly memory is 4 GiB,
// which the archive itself and the weights share; elsewhere the bound is
// far above any model webtensor runs.
func maxZipBytes() int64 {
	if runtime.GOARCH == "wasm" {
		return 2 << 30
	}
	return 64 << 30
}

// diffusionLoadZip is diffusion.load: a zip archive of a pipeline
// folder (model_index.json at its root, or in its one top-level folder as
// `zip -r pipe.zip pipe` nests it), read from data during the call only.
// Every failure, a hostile archive's included, is WT_ERR_INVALID naming
// the entry or file and the problem.
func diffusionLoadZip(data []byte, device string) (int64, error) {
	const fn = "diffusion.load"
	d, err := openModelZip(fn, data, "model_index.json")
	if err != nil {
		return 0, err
	}
	return fromArchive(diffusionLoadDir(fn, d, device))
}

// diffusionLoadDir loads the pipeline in folder d for fn.
func diffusionLoadDir(fn string, d modelfs.Dir, device string) (int64, error) {
	dev, err := modelDevice(device)
	if err != nil {
		return 0, err
	}
	opts := []diffuse.LoadOption{diffuse.WithDevice(dev)}
	if !d.OnDisk() {
		opts = append(opts, diffuse.FromFS(d.FS()))
	}
	raw, err := d.ReadFile("model_index.json")
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	var index map[string]json.RawMessage
	if err := json.Unmarshal(raw, &index); err != nil {
		return 0, Invalidf("%s: model_index.json: %v", fn, err)
	}
	var class string
	_ = json.Unmarshal(index["_class_name"], &class)
	if class == "StableDiffusionPipeline" {
		// Package diffuse reads the whole folder, model_index.json too.
		sd, err := diffuse.LoadStableDiffusion(d.String(), opts...)
		if err != nil {
			return 0, loadFailed(fn, err)
		}
		return diffusionPipelines.add(&diffusionPipeline{class: class, sched: sd.Scheduler, sd: sd, dev: dev}), nil
	}
	want, ok := pipelineComponents[class]
	if !ok {
		return 0, Invalidf("%s: model_index.json: pipeline %q is not supported (supported: DDIMPipeline, DDPMPipeline, DiTPipeline, StableDiffusionPipeline)", fn, class)
	}
	if err := checkComponents(index, want); err != nil {
		return 0, Invalidf("%s: model_index.json: %v", fn, err)
	}
	p := &diffusionPipeline{class: class, dev: dev}
	raw, err = d.Sub("scheduler").ReadFile("scheduler_config.json")
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	if p.sched, err = diffuse.ParseConfig(raw); err != nil {
		return 0, Invalidf("%s: scheduler/scheduler_config.json: %v", fn, err)
	}
	if class == "DiTPipeline" {
		if p.dit, err = diffuse.LoadDiT(d.Path("transformer"), opts...); err == nil {
			p.vae, err = diffuse.LoadAutoencoderKL(d.Path("vae"), opts...)
		}
	} else {
		p.unet, err = diffuse.LoadUNet2D(d.Path("unet"), opts...)
	}
	if err != nil {
		return 0, loadFailed(fn, err)
	}
	return diffusionPipelines.add(p), nil
}

// checkComponents holds model_index.json's components to the pipeline's:
// ["diffusers", class] for each, the scheduler of any class.
func checkComponents(index map[string]json.RawMessage, want map[string]string) error {
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		var entry []string
		if err := json.Unmarshal(index[name], &entry); err != nil || len(entry) != 2 {
			return Invalidf("component %q is %s, want [library, class]", name, string(index[name]))
		}
		if c := want[name]; c != "" && entry[1] != c {
			return Invalidf("component %q is a %s, want a %s", name, entry[1], c)
		}
	}
	return nil
}

// diffusionFree is diffusion.free; images it made stay valid.
func diffusionFree(h int64) error { return diffusionPipelines.free(h) }

// diffusionQuantizeInt8 is diffusion.quantize_int8: the pipeline's
// models (the UNet; the DiT and the VAE) hold their linear and conv
// weights as int8 with one f32 scale per output channel from now on
// (diffuse.QuantizeInt8), dequantised layer by layer as they run; a
// second call changes nothing.
func diffusionQuantizeInt8(h int64) error {
	const fn = "diffusion.quantize_int8"
	p, err := diffusionPipelines.get(h)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.models() {
		if _, err := diffuse.QuantizeInt8(m); err != nil {
			return Invalidf("%s: %v", fn, err)
		}
	}
	p.int8 = true
	return nil
}

// diffusionInfoJSON is diffusion.info: the pipeline and scheduler
// classes, one image's shape (channels, height, width; a text-to-image
// pipeline's default size), whether it takes class labels or prompts, the
// device, the bytes the models' weights take and whether they are int8.
func diffusionInfoJSON(h int64) (string, error) {
	p, err := diffusionPipelines.get(h)
	if err != nil {
		return "", err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	var bytes int64
	for _, m := range p.models() {
		bytes += diffuse.WeightBytes(m)
	}
	var shape []int
	switch {
	case p.unet != nil:
		c := p.unet.Config
		shape = []int{c.OutChannels, c.SampleSize, c.SampleSize}
	case p.sd != nil:
		side := p.sd.UNet.Config.SampleSize * p.sd.ScaleFactor()
		shape = []int{p.sd.VAE.Config.OutChannels, side, side}
	default:
		// The VAE upsamples the latents by 2 per down block but the last.
		side := p.dit.Config.SampleSize << max(len(p.vae.Config.BlockOutChannels)-1, 0)
		shape = []int{p.vae.Config.OutChannels, side, side}
	}
	b, err := json.Marshal(map[string]any{"pipeline": p.class, "scheduler": p.sched.Class,
		"image_shape": shape, "class_conditional": p.dit != nil, "text_conditional": p.sd != nil, "device": p.dev.String(),
		"weight_bytes": bytes, "int8_weights": p.int8})
	return string(b), err
}

// DiffusionDevice is the device the pipeline's models are on (its info's
// "device"): where the browser bridge waits for each step's work.
func DiffusionDevice(h int64) (string, error) {
	p, err := diffusionPipelines.get(h)
	if err != nil {
		return "", err
	}
	return p.dev.String(), nil
}

// scheduler builds the pipeline's scheduler, or its config converted to
// class name ("" keeps the folder's class).
func (p *diffusionPipeline) scheduler(fn, name string) (diffuse.Scheduler, error) {
	cfg := p.sched
	if name != "" && name != cfg.Class {
		var err error
		if cfg, err = cfg.For(name); err != nil {
			return nil, Invalidf("%s: scheduler %q: %v", fn, name, err)
		}
	}
	s, err := diffuse.New(cfg.Class, cfg)
	if err != nil {
		return nil, Invalidf("%s: %v", fn, err)
	}
	return s, nil
}

// diffusionGenerate is diffusion.generate: batch images sampled with
// steps inference steps from the Philox stream of seed, in [0, 1] as
// (batch, C, H, W) on the pipeline's device. scheduler names a diffusers
// scheduler class to sample with instead of the folder's ("" keeps it).
// A class-conditional pipeline takes its labels from
// diffusion.generate_classes instead. progress, when not nil, is told
// after each step (the browser bridge shows it; the C ABI passes none).
func diffusionGenerate(h int64, batch, steps int, seed uint64, scheduler string, progress diffuse.Progress) (int64, error) {
	const fn = "diffusion.generate"
	p, err := diffusionPipelines.get(h)
	if err != nil {
		return 0, err
	}
	if p.sd != nil {
		return 0, Invalidf("%s: a %s is text-conditional: use diffusion.generate_text", fn, p.class)
	}
	if p.unet == nil {
		return 0, Invalidf("%s: a %s is class-conditional: use diffusion.generate_classes", fn, p.class)
	}
	if batch < 1 || steps < 1 {
		return 0, Invalidf("%s: batch %d and steps %d must be >= 1", fn, batch, steps)
	}
	s, err := p.scheduler(fn, scheduler)
	if err != nil {
		return 0, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	pipe := diffuse.NewUNet2DPipeline(p.unet, diffuse.WithProgress(s, progress))
	img, err := pipe.Generate(batch, steps, diffuse.SeededNoise(seed))
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(img)
}

// diffusionGenerateClasses is diffusion.generate_classes: one image
// per class label from a class-conditional pipeline (DiT), with
// classifier-free guidance at guidanceScale (<= 1: none; diffusers'
// default is 4), otherwise as diffusion.generate.
func diffusionGenerateClasses(h int64, labels []int64, steps int, seed uint64, guidanceScale float64, scheduler string, progress diffuse.Progress) (int64, error) {
	const fn = "diffusion.generate_classes"
	p, err := diffusionPipelines.get(h)
	if err != nil {
		return 0, err
	}
	if p.dit == nil {
		use := "diffusion.generate"
		if p.sd != nil {
			use = "diffusion.generate_text"
		}
		return 0, Invalidf("%s: a %s takes no class labels: use %s", fn, p.class, use)
	}
	if len(labels) == 0 || steps < 1 {
		return 0, Invalidf("%s: %d labels and steps %d: want at least one label and one step", fn, len(labels), steps)
	}
	n := p.dit.Config.NumEmbedsAdaNorm
	ls := make([]int, len(labels))
	for i, l := range labels {
		if l < 0 || l >= int64(n) {
			return 0, Invalidf("%s: label %d (at %d) is outside the model's classes 0..%d", fn, l, i, n-1)
		}
		ls[i] = int(l)
	}
	s, err := p.scheduler(fn, scheduler)
	if err != nil {
		return 0, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	pipe := &diffuse.DiTPipeline{Model: p.dit, Scheduler: diffuse.WithProgress(s, progress), VAE: p.vae, GuidanceScale: guidanceScale}
	img, err := pipe.Generate(ls, steps, diffuse.SeededNoise(seed))
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(img)
}

// TextToImage is what diffusion.generate_text asks of a text-to-image
// pipeline, in package diffuse's terms.
type TextToImage struct {
	Prompts, NegativePrompts []string
	ImagesPerPrompt, Steps   int
	Seed                     uint64
	GuidanceScale            float64
	Height, Width            int
	Scheduler                string
	// Latents, when not 0, is a tensor handle: the initial latents
	// (diffusers' latents=), the seed's stream drawing only what a
	// stochastic scheduler draws after them.
	Latents int64
	// Progress, when not nil, is told after each denoising step.
	Progress diffuse.Progress
}

// textPipeline is the StableDiffusionPipeline behind h, or the error that
// names the call a pipeline of another class takes.
func textPipeline(fn string, h int64) (*diffusionPipeline, error) {
	p, err := diffusionPipelines.get(h)
	if err != nil {
		return nil, err
	}
	if p.sd == nil {
		use := "diffusion.generate"
		if p.dit != nil {
			use = "diffusion.generate_classes"
		}
		return nil, Invalidf("%s: a %s takes no prompts: use %s", fn, p.class, use)
	}
	return p, nil
}

// diffusionGenerateText is diffusion.generate_text: images in [0, 1],
// (prompts × images per prompt, C, H, W) on the pipeline's device, from a
// text-to-image pipeline, as diffuse.StableDiffusionPipeline.Generate
// gives them for the Philox stream of the seed.
func diffusionGenerateText(h int64, r TextToImage) (int64, error) {
	const fn = "diffusion.generate_text"
	p, err := textPipeline(fn, h)
	if err != nil {
		return 0, err
	}
	noise := diffuse.SeededNoise(r.Seed)
	if r.Latents != 0 {
		x, err := TensorOf(r.Latents)
		if err != nil {
			return 0, Prefix(err, "%s: latents", fn)
		}
		noise = diffuse.LatentsThen(x, noise)
	}
	img, err := p.sd.Generate(diffuse.TextToImage{Prompts: r.Prompts, NegativePrompts: r.NegativePrompts,
		GuidanceScale: r.GuidanceScale, ImagesPerPrompt: r.ImagesPerPrompt, Steps: r.Steps, Height: r.Height,
		Width: r.Width, Scheduler: r.Scheduler, Progress: r.Progress}, noise)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(img)
}

// diffusionEncodeText is diffusion.encode_text: a text-to-image
// pipeline's text encoder states for texts (n, max length, width), what
// its UNet attends to.
func diffusionEncodeText(h int64, texts []string) (int64, error) {
	const fn = "diffusion.encode_text"
	p, err := textPipeline(fn, h)
	if err != nil {
		return 0, err
	}
	x, err := p.sd.EncodePrompts(texts)
	if err != nil {
		return 0, Invalidf("%s: %v", fn, err)
	}
	return NewOutput(x)
}
