package diffuse

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/reftest"
)

func TestLoadAutoencoderKLCheckpointErrors(t *testing.T) {
	requireCheckpointErrors(t, "vae_tiny", LoadAutoencoderKL,
		missingTensor("encoder.mid_block.attentions.0.to_q.weight", 32, 32),
		misshapenTensor("decoder.conv_in.weight", []int{32, 4, 9}, []int{32, 4, 3, 3}),
		// The UNet's time projection has no place in the VAE's ResNets.
		strayTensor("decoder.up_blocks.0.resnets.0.time_emb_proj.weight", "decoder.conv_in.bias"),
		configMisfit(replaceOnce(`"use_quant_conv": true`, `"use_quant_conv": false`),
			"tensor quant_conv.weight is not a parameter of the model", "tensor quant_conv.bias is not a parameter of the model"),
		configMisfit(replaceOnce(`"layers_per_block": 1`, `"layers_per_block": 2`),
			"tensor encoder.down_blocks.0.resnets.1.norm1.weight is missing", "tensor decoder.up_blocks.1.resnets.2.conv1.weight is missing"),
		configMisfit(replaceOnce(`"mid_block_add_attention": true`, `"mid_block_add_attention": false`),
			"tensor decoder.mid_block.attentions.0.group_norm.weight is not a parameter of the model"),
	)
}

func TestAutoencoderKLConfigErrors(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{`"DownEncoderBlock2D",`, `"AttnDownEncoderBlock2D",`, `down_block_types: "AttnDownEncoderBlock2D" (entry 0) is not supported`},
		{`"UpDecoderBlock2D"
  ]`, `"AttnUpDecoderBlock2D"
  ]`, `up_block_types: "AttnUpDecoderBlock2D" (entry 1) is not supported`},
		{`"act_fn": "silu"`, `"act_fn": "gelu"`, `key "act_fn": value "gelu" is not supported (supported: "silu", "swish")`},
		{`"shift_factor": null`, `"shift_factor": 0.1159`, "key \"shift_factor\": value 0.1159 is not supported"},
		{`"latents_mean": null`, `"latents_mean": [0.1, 0.2, 0.3, 0.4]`, "key \"latents_mean\": value [0.1, 0.2, 0.3, 0.4] is not supported"},
		{`"_class_name": "AutoencoderKL"`, `"_class_name": "AutoencoderTiny"`, `key "_class_name": value "AutoencoderTiny" is not supported`},
		{`"norm_num_groups": 8`, `"norm_num_groups": 5`, "block_out_channels: [16 32]: entry 0 is not a positive multiple of norm_num_groups 5"},
		{`"in_channels": 3`, `"in_channels": null`, "key \"in_channels\": value null is not supported"},
		{`"latent_channels": 4`, `"latent_channels": 0`, "latent_channels: 0, want >= 1"},
		{`"block_out_channels": [
    16,
    32
  ]`, `"block_out_channels": [32]`, "down_block_types: 2 types for 1 block_out_channels"},
		{`"sample_size": 32`, `"sample_size": [32, 48]`, "key \"sample_size\": value [32, 48] is not supported"},
		{`"force_upcast": true`, `"force_upcast": true, "norm_type": "spatial"`, `unknown key "norm_type"`},
	} {
		_, err := LoadAutoencoderKL(editedCheckpoint(t, "vae_tiny", replaceOnce(tc.old, tc.new), nil))
		require.ErrorContains(t, err, "diffuse: AutoencoderKL config: "+tc.want, tc.new)
	}
	// The pair form of sample_size, as some hub configs write it.
	_, err := LoadAutoencoderKL(editedCheckpoint(t, "vae_tiny", replaceOnce(`"sample_size": 32`, `"sample_size": [32, 32]`), nil))
	require.NoError(t, err)
}

func TestAutoencoderKLInputErrors(t *testing.T) {
	m, err := LoadAutoencoderKL(filepath.Join("testdata", "vae_tiny"))
	require.NoError(t, err)
	randn := func(shape ...int) *core.Tensor {
		x, err := SeededNoise(1)(core.Shape(shape), core.F32, core.CPU)
		require.NoError(t, err)
		return x
	}

	_, err = m.Encode(randn(1, 4, 8, 8))
	require.ErrorContains(t, err, "AutoencoderKL.Encode: images have shape [1 4 8 8], want (batch, 3, height, width) (in_channels 3)")
	_, err = m.Encode(randn(3, 8, 8))
	require.ErrorContains(t, err, "images have shape [3 8 8]")
	_, err = m.Encode(randn(1, 3, 1, 8))
	require.ErrorContains(t, err, "height and width >= 2")
	_, err = m.Encode(randn(1, 3, 8, 8).Cast(core.F64))
	require.ErrorContains(t, err, "images have dtype f64, the model f32")
	// Odd sides halve down, as diffusers' padded strided conv does.
	post, err := m.Encode(randn(1, 3, 7, 9))
	require.NoError(t, err)
	require.Equal(t, core.Shape{1, 4, 3, 4}, post.Mean.Shape())

	_, err = post.Sample(randn(1, 4, 4, 4))
	require.ErrorContains(t, err, "DiagonalGaussian.Sample: noise has shape [1 4 4 4], the mean [1 4 3 4]")
	_, err = post.Sample(randn(1, 4, 3, 4).Cast(core.F64))
	require.ErrorContains(t, err, "noise has dtype f64, the mean f32")

	_, err = m.Decode(randn(1, 3, 4, 4))
	require.ErrorContains(t, err, "AutoencoderKL.Decode: latents have shape [1 3 4 4], want (batch, 4, height, width) (latent_channels 4)")
	_, err = m.DecodeTiled(randn(1, 8, 4, 4), 4, 1)
	require.ErrorContains(t, err, "AutoencoderKL.DecodeTiled: latents have shape [1 8 4 4], want (batch, 4, height, width)")

	z := randn(1, 4, 6, 6)
	_, err = m.DecodeTiled(z, 2, 2)
	require.ErrorContains(t, err, "tile of 2 latent pixels is not larger than the overlap 2")
	_, err = m.DecodeTiled(z, 2, 3)
	require.ErrorContains(t, err, "tile of 2 latent pixels is not larger than the overlap 3")
	_, err = m.DecodeTiled(z, 0, 0)
	require.ErrorContains(t, err, "tile of 0 latent pixels, want >= 1")
	_, err = m.DecodeTiled(z, 4, -1)
	require.ErrorContains(t, err, "overlap -1, want >= 0")

	// A latent no larger than a tile decodes whole, as in diffusers; tiles
	// without overlap are plain concatenation of tile decodes.
	whole, err := m.Decode(z)
	require.NoError(t, err)
	one, err := m.DecodeTiled(z, 6, 1)
	require.NoError(t, err)
	require.Zero(t, reftest.RelMaxErr(t, one, whole))
	quarters, err := m.DecodeTiled(z, 3, 0)
	require.NoError(t, err)
	corner, err := m.Decode(sliceAxis(sliceAxis(z, 2, 3, 6), 3, 0, 3))
	require.NoError(t, err)
	require.Zero(t, reftest.RelMaxErr(t, sliceAxis(sliceAxis(quarters, 2, 6, 12), 3, 0, 6), corner))
}
