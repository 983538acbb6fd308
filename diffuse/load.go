package diffuse

import (
	"fmt"
	"io/fs"

	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/modelfs"
)

// FromFS makes every folder a loader is given a slash-separated path
// inside fsys ("." is its root) instead of an operating-system path: the
// files are then read through fsys, such as a zip archive of a saved
// pipeline (the browser has no file system; abi's wt_diffusion_load_zip
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
