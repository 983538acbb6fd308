package diffuse

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/webtensor/webtensor/nn"
)

// SavePipeline writes an unconditional pipeline's folder as diffusers'
// save_pretrained does, so diffusers' DiffusionPipeline.from_pretrained,
// LoadUNet2D and abi's diffusion.load (of the folder or a zip of it)
// read it: model_index.json (a DDIMPipeline when the scheduler is DDIM's,
// else a DDPMPipeline), unet/config.json (UNet2DConfig.JSON),
// unet/diffusion_pytorch_model.safetensors (the model's StateDict, named
// as diffusers names it) and scheduler/scheduler_config.json (Config.JSON).
// Existing files of those names are replaced, each atomically. A model
// holding int8 weights (QuantizeInt8) has no f32 weights left to save and
// is refused.
func SavePipeline(dir string, m *UNet2DModel, scheduler Config) error {
	const op = "diffuse: SavePipeline"
	for _, s := range m.StateDict() {
		if s.Value.Tensor().Shape().Rank() == 0 {
			return fmt.Errorf("%s: the model holds int8 weights (%s is a placeholder): save it before QuantizeInt8", op, s.Name)
		}
	}
	unetJSON, err := m.Config.JSON()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	schedJSON, err := scheduler.JSON()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	class := "DDPMPipeline"
	if scheduler.Class == "DDIMScheduler" {
		class = "DDIMPipeline"
	}
	index, err := json.MarshalIndent(map[string]any{"_class_name": class,
		"scheduler": []string{"diffusers", scheduler.Class}, "unet": []string{"diffusers", "UNet2DModel"}}, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for _, sub := range []string{"unet", "scheduler"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{"model_index.json", index}, {filepath.Join("unet", "config.json"), unetJSON},
		{filepath.Join("scheduler", "scheduler_config.json"), schedJSON}} {
		if err := writeAtomic(filepath.Join(dir, f.path), append(f.data, '\n')); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	if err := nn.Save(filepath.Join(dir, "unet", modelFile), m); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// writeAtomic writes data to a temporary file beside path and renames it
// into place, so a failed write never leaves half a file there.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// JSON is the config as diffusers' UNet2DModel writes its config.json:
// every key, webtensor's fixed choices (positional time embedding, conv
// up- and downsampling, SiLU, no class embedding) spelled as diffusers
// spells them and 0 for "diffusers' default" written as null, so
// ParseUNet2DConfig reads back the same config.
func (c UNet2DConfig) JSON() ([]byte, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	orNull := func(n int) any {
		if n == 0 {
			return nil
		}
		return n
	}
	var mid any
	if c.MidBlock {
		mid = "UNetMidBlock2D"
	}
	return json.MarshalIndent(map[string]any{
		"_class_name": "UNet2DModel", "act_fn": "silu", "add_attention": c.AddAttention,
		"attention_head_dim": orNull(c.AttentionHeadDim), "attn_norm_num_groups": orNull(c.AttnNormNumGroups),
		"block_out_channels": c.BlockOutChannels, "center_input_sample": c.CenterInputSample,
		"class_embed_type": nil, "down_block_types": c.DownBlockTypes, "downsample_padding": c.DownsamplePadding,
		"downsample_type": "conv", "dropout": 0.0, "flip_sin_to_cos": c.FlipSinToCos, "freq_shift": c.FreqShift,
		"in_channels": c.InChannels, "layers_per_block": c.LayersPerBlock, "mid_block_scale_factor": c.MidBlockScaleFactor,
		"mid_block_type": mid, "norm_eps": c.NormEps, "norm_num_groups": c.NormNumGroups, "num_class_embeds": nil,
		"num_train_timesteps": nil, "out_channels": c.OutChannels, "resnet_time_scale_shift": c.ResnetTimeScaleShift,
		"sample_size": c.SampleSize, "time_embedding_dim": orNull(c.TimeEmbeddingDim),
		"time_embedding_type": "positional", "up_block_types": c.UpBlockTypes, "upsample_type": "conv",
	}, "", "  ")
}

// JSON is the config as diffusers' scheduler_config.json: _class_name and
// every option the class takes. DDIM's eta, webtensor's own key (diffusers
// takes it as an argument of step), is written only when it is not 0.
func (c Config) JSON() ([]byte, error) {
	if _, ok := classKey[c.Class]; !ok {
		return nil, unknownClass(c.Class)
	}
	out := map[string]any{"_class_name": c.Class}
	for k, o := range options {
		if o.field == nil || !takes(o, c.Class) || (k == "eta" && c.Eta == 0) {
			continue
		}
		v := o.field(&c)
		switch p := v.(type) {
		case *string:
			if *p == "" { // variance_type's None
				v = nil
			}
		case *[]float64:
			if *p == nil { // trained_betas' None
				v = nil
			}
		}
		out[k] = v
	}
	return json.MarshalIndent(out, "", "  ")
}
