package diffuse

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func TestLoadUNet2DCheckpointErrors(t *testing.T) {
	requireCheckpointErrors(t, "unet2d_tiny", LoadUNet2D,
		missingTensor("down_blocks.1.attentions.0.to_q.weight", 32, 32),
		misshapenTensor("conv_in.weight", []int{16, 3, 9}, []int{16, 3, 3, 3}),
		strayTensor("mid_block.attentions.0.extra.weight", "conv_out.bias"),
		configMisfit(replaceOnce(`"layers_per_block": 1`, `"layers_per_block": 2`),
			"tensor down_blocks.0.resnets.1.norm1.weight is missing", "tensor up_blocks.1.resnets.2.conv1.weight is missing"),
	)
}

func TestUNet2DConfigErrors(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{`"time_embedding_type": "positional"`, `"time_embedding_type": "fourier"`,
			`key "time_embedding_type": value "fourier" is not supported (supported: "positional")`},
		{`"class_embed_type": null`, `"class_embed_type": "timestep"`, `key "class_embed_type": value "timestep" is not supported`},
		{`"act_fn": "silu"`, `"act_fn": "gelu"`, `key "act_fn": value "gelu" is not supported`},
		{`"downsample_type": "conv"`, `"downsample_type": "resnet"`, `key "downsample_type": value "resnet" is not supported`},
		{`"resnet_time_scale_shift": "default"`, `"resnet_time_scale_shift": "spatial"`, `resnet_time_scale_shift: "spatial" is not supported`},
		{`"DownBlock2D"`, `"SkipDownBlock2D"`, `down_block_types: "SkipDownBlock2D" (entry 0) is not supported`},
		{`"norm_num_groups": 4`, `"norm_num_groups": 5`, `block_out_channels: [16 32]: entry 0 is not a positive multiple of norm_num_groups 5`},
		{`"act_fn": "silu"`, `"act_fn": "silu", "use_linear_projection": true`, `unknown key "use_linear_projection"`},
		{`"layers_per_block": 1`, `"layers_per_block": "one"`, `key "layers_per_block": json: cannot unmarshal`},
		{`"_class_name": "UNet2DModel"`, `"_class_name": "UNet2DConditionModel"`, `key "_class_name": value "UNet2DConditionModel" is not supported`},
	}
	for _, c := range cases {
		dir := editedCheckpoint(t, "unet2d_tiny", func(s string) string {
			require.Contains(t, s, c.from)
			return strings.Replace(s, c.from, c.to, 1)
		}, nil)
		_, err := LoadUNet2D(dir)
		require.ErrorContains(t, err, c.want)
	}
}

func TestUNet2DForwardErrors(t *testing.T) {
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"))
	require.NoError(t, err)
	x := core.Zeros(core.Shape{2, 4, 16, 16}, core.F32)
	_, err = m.Forward(x, 10)
	require.ErrorContains(t, err, "sample has shape [2 4 16 16], want (batch, 3, height, width) (in_channels 3)")

	_, err = m.Forward(core.Zeros(core.Shape{1, 3, 9, 16}, core.F32), 10)
	require.ErrorContains(t, err, "sample is 9×16; height and width must be positive multiples of 2")

	_, err = m.Forward(core.Zeros(core.Shape{1, 3, 16, 16}, core.F64), 10)
	require.ErrorContains(t, err, "sample has dtype f64, the model f32")

	_, err = m.ForwardTimesteps(core.Zeros(core.Shape{2, 3, 16, 16}, core.F32), core.FromSlice([]int64{1, 2, 3}, core.Shape{3}))
	require.ErrorContains(t, err, "timesteps have shape [3], want [] or [2] (the batch)")

	_, err = LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"), WithDType(core.I32))
	require.ErrorContains(t, err, "dtype i32 is not a float dtype")
}

func TestPipelineErrors(t *testing.T) {
	m, err := LoadUNet2D(filepath.Join("testdata", "unet2d_tiny"))
	require.NoError(t, err)
	cfg, _ := Defaults("DDIMScheduler")
	s, err := New("DDIMScheduler", cfg)
	require.NoError(t, err)
	p := NewUNet2DPipeline(m, s)
	_, err = p.Generate(1, 2, nil)
	require.ErrorContains(t, err, "no Noise")
	_, err = p.Generate(0, 2, SeededNoise(1))
	require.ErrorContains(t, err, "batch 0, want >= 1")
	_, err = p.Generate(1, 0, SeededNoise(1))
	require.Error(t, err)

	// A pipeline whose image shape disagrees with the model fails in the
	// model, naming the sample's shape.
	p.Channels = 4
	_, err = p.Generate(1, 2, SeededNoise(1))
	require.ErrorContains(t, err, "step 0 (t=500): diffuse: UNet2DModel.Forward: sample has shape [1 4 16 16]")
}
