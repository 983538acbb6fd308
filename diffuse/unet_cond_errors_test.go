package diffuse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

const blk = "down_blocks.0.attentions.0.transformer_blocks.0."

func TestLoadUNet2DConditionCheckpointErrors(t *testing.T) {
	requireCheckpointErrors(t, "unet2dcond_tiny", LoadUNet2DCondition,
		missingTensor(blk+"attn2.to_k.weight", 16, 24),
		// A linear projection's weight where the config says 1×1 conv.
		misshapenTensor("down_blocks.0.attentions.0.proj_in.weight", []int{16, 16}, []int{16, 16, 1, 1}),
		// The attention projections have no bias in diffusers' UNet.
		strayTensor(blk+"attn1.to_q.bias", blk+"attn1.to_out.0.bias"),
		configMisfit(func(s string) string {
			s = strings.Replace(s, `"use_linear_projection": false`, `"use_linear_projection": true`, 1)
			return strings.Replace(s, `"cross_attention_dim": 24`, `"cross_attention_dim": 32`, 1)
		},
			"tensor down_blocks.0.attentions.0.proj_in.weight has shape [16 16 1 1], want [16 16]",
			"tensor up_blocks.1.attentions.1.proj_out.weight has shape [16 16 1 1], want [16 16]",
			"tensor mid_block.attentions.0.transformer_blocks.0.attn2.to_v.weight has shape [32 24], want [32 32]",
		),
	)
}

// Every feature webtensor leaves out fails naming its key and value.
func TestUNet2DConditionConfigRefusals(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "unet2dcond_tiny", "config.json"))
	require.NoError(t, err)
	base := string(raw)
	for _, c := range []struct{ from, to, want string }{
		{`"only_cross_attention": false`, `"only_cross_attention": true`, "key \"only_cross_attention\": value true is not supported"},
		{`"addition_embed_type": null`, `"addition_embed_type": "text"`, `key "addition_embed_type": value "text" is not supported`},
		{`"time_embedding_type": "positional"`, `"time_embedding_type": "fourier"`, `key "time_embedding_type": value "fourier" is not supported`},
		{`"act_fn": "silu"`, `"act_fn": "gelu"`, `key "act_fn": value "gelu" is not supported`},
		{`"mid_block_type": "UNetMidBlock2DCrossAttn"`, `"mid_block_type": "UNetMidBlock2DSimpleCrossAttn"`, `key "mid_block_type": value "UNetMidBlock2DSimpleCrossAttn" is not supported`},
		{`"encoder_hid_dim": null`, `"encoder_hid_dim": 768`, "key \"encoder_hid_dim\": value 768 is not supported"},
		{`"transformer_layers_per_block": 1`, `"transformer_layers_per_block": [1, 2]`, "key \"transformer_layers_per_block\": value [1, 2] is not supported (webtensor takes one number for every block)"},
		{`"cross_attention_dim": 24`, `"cross_attention_dim": [24, 24]`, "key \"cross_attention_dim\": value [24, 24] is not supported"},
		{`"attention_head_dim": 2`, `"attention_head_dim": [2, 2, 2]`, "attention_head_dim: [2 2 2] has 3 entries for 2 block_out_channels"},
		{`"attention_head_dim": 2`, `"attention_head_dim": 64`, "attention_head_dim: entry 0 is 64 heads for 16 channels (want 1 to 16)"},
		{`"attention_head_dim": 2`, `"attention_head_dim": null`, "attention_head_dim: null with num_attention_heads null leaves the head count unset"},
		{`"down_block_types": [`, `"down_block_types": ["SimpleCrossAttnDownBlock2D", `, "down_block_types: 3 types for 2 block_out_channels"},
		{`"CrossAttnDownBlock2D",`, `"SimpleCrossAttnDownBlock2D",`, `down_block_types: "SimpleCrossAttnDownBlock2D" (entry 0) is not supported`},
		{`"CrossAttnUpBlock2D",`, `"AttnUpBlock2D",`, `up_block_types: "AttnUpBlock2D" (entry 0) is not supported`},
		{`"norm_num_groups": 8`, `"norm_num_groups": null`, "key \"norm_num_groups\": value null is not supported"},
		{`"conv_in_kernel": 3`, `"conv_in_kernel": 1`, "key \"conv_in_kernel\": value 1 is not supported"},
		{`"resnet_time_scale_shift": "default"`, `"resnet_time_scale_shift": "spatial"`, `resnet_time_scale_shift: "spatial" is not supported`},
		{`"act_fn": "silu"`, `"act_fn": "silu", "controlnet_conditioning": 1`, `unknown key "controlnet_conditioning"`},
		{`"_class_name": "UNet2DConditionModel"`, `"_class_name": "UNet2DModel"`, `key "_class_name": value "UNet2DModel" is not supported`},
	} {
		cfg := strings.Replace(base, c.from, c.to, 1)
		require.NotEqual(t, base, cfg, "edit %s", c.from)
		_, err := ParseUNet2DConditionConfig([]byte(cfg))
		require.ErrorContains(t, err, c.want, c.to)
	}
}

func TestUNet2DConditionForwardErrors(t *testing.T) {
	m, err := LoadUNet2DCondition(filepath.Join("testdata", "unet2dcond_tiny"))
	require.NoError(t, err)
	x := core.Zeros(core.Shape{2, 4, 16, 16}, core.F32)
	enc := func(s ...int) *core.Tensor { return core.Zeros(core.Shape(s), core.F32) }
	_, err = m.Forward(x, 10, enc(2, 7, 20))
	require.ErrorContains(t, err, "encoder hidden states have shape [2 7 20], want (2, sequence, 24) (the sample's batch, cross_attention_dim 24)")
	_, err = m.Forward(x, 10, enc(1, 7, 24))
	require.ErrorContains(t, err, "encoder hidden states have shape [1 7 24], want (2, sequence, 24)")
	_, err = m.Forward(x, 10, enc(2, 24))
	require.ErrorContains(t, err, "encoder hidden states have shape [2 24]")
	_, err = m.Forward(x, 10, nil)
	require.ErrorContains(t, err, "encoder hidden states are nil")
	_, err = m.Forward(x, 10, enc(2, 7, 24).Cast(core.F16))
	require.ErrorContains(t, err, "encoder hidden states have dtype f16, the model f32")
	_, err = m.Forward(core.Zeros(core.Shape{2, 3, 16, 16}, core.F32), 10, enc(2, 7, 24))
	require.ErrorContains(t, err, "sample has shape [2 3 16 16], want (batch, 4, height, width)")
	_, err = m.Forward(core.Zeros(core.Shape{2, 4, 15, 16}, core.F32), 10, enc(2, 7, 24))
	require.ErrorContains(t, err, "multiples of 2")
	_, err = m.ForwardTimesteps(x, core.Zeros(core.Shape{3}, core.F32), enc(2, 7, 24))
	require.ErrorContains(t, err, "timesteps have shape [3], want [] or [2]")
	out, err := m.Forward(x, 10, enc(2, 1, 24)) // any sequence length
	require.NoError(t, err)
	require.Equal(t, core.Shape{2, 4, 16, 16}, out.Shape())
}
