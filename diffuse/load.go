package diffuse

import (
	"fmt"
	"io/fs"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/modelfs"
)

// FromFS makes every folder a loader is given a slash-separated path
// inside fsys ("." is its root) instead of an operating-system path: the
// files are then read through fsys, such as a zip archive of a saved
// pipeline (the browser has no file system; abi's diffusion.load
// opens one). LoadStableDiffusion passes it on to the text encoder's and
// tokenizer's loaders. Weight streaming maps the checkpoint file from
// disk, so LoadUNet2DConditionStreamed refuses it.
func FromFS(fsys fs.FS) LoadOption { return func(o *loadOptions) { o.fsys = fsys } }

// folder is where a loader reads dir's files: the OS folder, or dir
// inside the FromFS file system.
func (o *loadOptions) folder(op, dir string) (modelfs.Dir, error) {
	if o.fsys == nil {
		return modelfs.OS(dir), nil
	}
	d, err := modelfs.In(o.fsys, dir)
	if err != nil {
		return modelfs.Dir{}, fmt.Errorf("%s: %w", op, err)
	}
	return d, nil
}

// modelFile is the weights file of a diffusers model folder.
const modelFile = "diffusion_pytorch_model.safetensors"

// readModel reads a diffusers model folder: its config.json with parse
// and its safetensors weights whole. The errors name the file; path is
// the weights' path, for the weight checks' errors.
func readModel[C any](op string, d modelfs.Dir, parse func([]byte) (C, error)) (cfg C, f *safetensors.File, path string, err error) {
	raw, err := d.ReadFile("config.json")
	if err != nil {
		return cfg, nil, "", fmt.Errorf("%s: %w", op, err)
	}
	if cfg, err = parse(raw); err != nil {
		return cfg, nil, "", fmt.Errorf("%w (in %s)", err, d.Path("config.json"))
	}
	path = d.Path(modelFile)
	buf, err := d.ReadFile(modelFile)
	if err != nil {
		return cfg, nil, "", fmt.Errorf("%s: %w", op, err)
	}
	if f, err = safetensors.Decode(buf); err != nil {
		return cfg, nil, "", fmt.Errorf("%s: %s: %w", op, path, err)
	}
	return cfg, f, path, nil
}

// newLoadOptions applies opts to the defaults: the CPU, float32.
func newLoadOptions(opts []LoadOption) loadOptions {
	o := loadOptions{dev: core.CPU, dtype: core.F32}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// checkFloat refuses a WithDType that is not a float dtype: a model's
// weights and activations are floats.
func (o *loadOptions) checkFloat(op string) error {
	if !o.dtype.IsFloat() {
		return fmt.Errorf("%s: dtype %s is not a float dtype", op, o.dtype)
	}
	return nil
}

// loadWhole is the path of every loader that reads its weights whole:
// apply opts, read dir's config with parse and its checkpoint, build the
// model on those weights with build, and fail listing every tensor the
// checkpoint lacks, misshapes or holds beyond what build asked for. The
// caller sets what the options decide on the model it returns.
func loadWhole[C, M any](op, dir string, opts []LoadOption, parse func([]byte) (C, error), build func(C, *weights) M) (m M, o loadOptions, err error) {
	o = newLoadOptions(opts)
	if err = o.checkFloat(op); err != nil {
		return m, o, err
	}
	d, err := o.folder(op, dir)
	if err != nil {
		return m, o, err
	}
	cfg, f, path, err := readModel(op, d, parse)
	if err != nil {
		return m, o, err
	}
	w, err := newWeights(f, o.dev, o.dtype)
	if err != nil {
		return m, o, fmt.Errorf("%s: %w", op, err)
	}
	w.int8 = o.int8
	built := build(cfg, w)
	if err = w.check(path); err != nil {
		return m, o, err
	}
	return built, o, nil
}
