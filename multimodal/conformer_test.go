package multimodal

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
)

// The Conformer reference vectors: transformers' Wav2Vec2FeatureExtractor
// and two tiny seeded Wav2Vec2ConformerModel checkpoints (relative and
// rotary positions), and torchaudio's resample
// (testdata/make_conformer_refs.py).

// conformerTol is relative to the largest reference value, as visionTol.
const conformerTol = 1e-4

// inputValuesTol bounds the extractor's absolute error: numpy takes the
// mean and variance in float32, webtensor in float64.
const inputValuesTol = 1e-5

type conformerRefs struct {
	reftest.Refs
	Extractor []struct {
		Name   string          `json:"name"`
		Config json.RawMessage `json:"config"`
		Batch  int             `json:"batch"`
	} `json:"extractor"`
	ModelLengths []int `json:"model_lengths"`
	Models       []struct {
		Name   string `json:"name"`
		Frames int    `json:"frames"`
	} `json:"models"`
	Resample []struct {
		Name string `json:"name"`
		From int    `json:"from"`
		To   int    `json:"to"`
	} `json:"resample"`
}

func loadConformerRefs(t *testing.T) *conformerRefs {
	t.Helper()
	var r conformerRefs
	r.Refs = reftest.ReadRefs(t, "conformer_refs", &r)
	return &r
}

func (r *conformerRefs) waves(t *testing.T, prefix string, n int) [][]float32 {
	t.Helper()
	var out [][]float32
	for i := range n {
		w, err := r.Get(t, fmt.Sprintf("%s/wave_%d", prefix, i), core.CPU).Float32s()
		require.NoError(t, err)
		out = append(out, w)
	}
	return out
}

// modelMask is the model inputs' attention mask: each row's length of
// ones, then zeros.
func (r *conformerRefs) modelMask(dev core.Device) *core.Tensor {
	n := 0
	for _, l := range r.ModelLengths {
		n = max(n, l)
	}
	mask := make([]int64, len(r.ModelLengths)*n)
	for i, l := range r.ModelLengths {
		for j := range l {
			mask[i*n+j] = 1
		}
	}
	return core.FromSlice(mask, core.Shape{len(r.ModelLengths), n}, dev)
}

func TestWav2Vec2FeatureExtractorMatchesTransformers(t *testing.T) {
	r := loadConformerRefs(t)
	require.NotEmpty(t, r.Extractor)
	for _, c := range r.Extractor {
		fe, err := ParseWav2Vec2FeatureExtractor(c.Config)
		require.NoError(t, err, c.Name)
		in, err := fe.Extract(r.waves(t, "extractor/"+c.Name, c.Batch), core.CPU)
		require.NoError(t, err, c.Name)
		e := maxAbsErr(t, in.InputValues, r.Get(t, "extractor/"+c.Name+"/input_values", core.CPU))
		t.Logf("%s: input values: max error %.2g", c.Name, e)
		require.Less(t, e, inputValuesTol, c.Name)
		if want, ok := r.File.Tensors["extractor/"+c.Name+"/attention_mask"]; ok {
			require.NotNil(t, in.AttentionMask, c.Name)
			g, err := in.AttentionMask.Int64s()
			require.NoError(t, err)
			w, err := want.ToTensor(core.CPU).Int64s()
			require.NoError(t, err)
			require.Equal(t, w, g, c.Name)
		} else {
			require.Nil(t, in.AttentionMask, c.Name)
		}
	}
}

func checkConformer(t *testing.T, dev core.Device) {
	r := loadConformerRefs(t)
	require.Len(t, r.Models, 2)
	for _, c := range r.Models {
		dir := filepath.Join("testdata", c.Name)
		m, err := LoadWav2Vec2ConformerModel(dir, WithDevice(dev))
		require.NoError(t, err, c.Name)

		// The extractor saved with the model, on the raw waveforms.
		fe, err := LoadWav2Vec2FeatureExtractor(dir)
		require.NoError(t, err)
		in, err := fe.Extract(r.waves(t, "model", len(r.ModelLengths)), dev)
		require.NoError(t, err)
		e := maxAbsErr(t, in.InputValues, r.Get(t, "model/input_values", core.CPU))
		require.Less(t, e, inputValuesTol, c.Name)
		e = maxAbsErr(t, in.AttentionMask, r.modelMask(core.CPU))
		require.Zero(t, e, c.Name)

		values := r.Get(t, "model/input_values", dev)
		out, err := m.Forward(values, r.modelMask(dev))
		require.NoError(t, err, c.Name)
		require.Equal(t, c.Frames, out.LastHiddenState.Shape()[1])
		want := r.Get(t, c.Name+"/last_hidden_state", core.CPU)
		e = reftest.RelMaxErr(t, out.LastHiddenState, want)
		t.Logf("%s: last_hidden_state: relative error %.2g", c.Name, e)
		require.Less(t, e, conformerTol, c.Name)
		frames, err := out.FrameMask.Int64s()
		require.NoError(t, err)
		real := 0
		for _, v := range frames[c.Frames:] {
			real += int(v)
		}
		require.Equal(t, m.Config.FeatureLength(r.ModelLengths[1]), real, c.Name)

		// The first waveform is unpadded: alone and without a mask it gives
		// the batch's first row.
		first := values.Slice(core.Attrs{"axis": 0, "start": 0, "stop": 1})
		alone, err := m.Forward(first, nil)
		require.NoError(t, err)
		require.Nil(t, alone.FrameMask)
		e = reftest.RelMaxErr(t, alone.LastHiddenState, want.Slice(core.Attrs{"axis": 0, "start": 0, "stop": 1}))
		require.Less(t, e, conformerTol, c.Name+" unmasked")
	}
}

func TestWav2Vec2ConformerMatchesTransformers(t *testing.T) { checkConformer(t, core.CPU) }

func TestWav2Vec2ConformerOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkConformer(t, webgputest.Device)
}

func TestWav2Vec2ConformerStateDictNames(t *testing.T) {
	for _, name := range []string{"conformer_tiny_rel", "conformer_tiny_rotary"} {
		m, err := LoadWav2Vec2ConformerModel(filepath.Join("testdata", name))
		require.NoError(t, err)
		requireStateDictIsFile(t, m, filepath.Join("testdata", name, "model.safetensors"))
	}
}

func TestWav2Vec2ConformerLoadErrors(t *testing.T) {
	rel := filepath.Join("testdata", "conformer_tiny_rel")
	// A missing and a misshaped tensor, both named.
	dir := copyCheckpoint(t, rel, nil, func(ts map[string]safetensors.Tensor) {
		delete(ts, "encoder.layers.1.self_attn.pos_bias_u")
		p := ts["encoder.layers.0.conv_module.depthwise_conv.weight"]
		ts["encoder.layers.0.conv_module.depthwise_conv.weight"] = safetensors.Tensor{DType: p.DType, Shape: core.Shape{32, 7, 1}, Data: p.Data}
		m := ts["encoder.layers.0.conv_module.batch_norm.running_mean"]
		ts["encoder.layers.0.conv_module.batch_norm.running_mean"] = safetensors.Tensor{DType: m.DType, Shape: core.Shape{2, 16}, Data: m.Data}
	})
	_, err := LoadWav2Vec2ConformerModel(dir)
	require.ErrorContains(t, err, "tensor encoder.layers.1.self_attn.pos_bias_u is missing (want shape [4 8])")
	require.ErrorContains(t, err, "tensor encoder.layers.0.conv_module.depthwise_conv.weight has shape [32 7 1], want [32 1 7]")
	require.ErrorContains(t, err, "tensor encoder.layers.0.conv_module.batch_norm.running_mean has shape [2 16], want [32]")

	// Rotary positions have no linear_pos: the relative checkpoint's are extra.
	dir = copyCheckpoint(t, rel, map[string]any{"position_embeddings_type": "rotary"}, nil)
	_, err = LoadWav2Vec2ConformerModel(dir)
	require.ErrorContains(t, err, "tensor encoder.layers.0.self_attn.linear_pos.weight is not a parameter of the model")

	for _, c := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"position_embeddings_type": "relative_key"},
			`key "position_embeddings_type": value "relative_key" is not supported (supported: "relative", "rotary")`},
		{map[string]any{"position_embeddings_type": nil}, `key "position_embeddings_type": value null is not supported`},
		{map[string]any{"feat_extract_norm": "batch"}, `key "feat_extract_norm": value "batch" is not supported (supported: "group", "layer")`},
		{map[string]any{"add_adapter": true}, `key "add_adapter": value true is not supported`},
		{map[string]any{"hidden_act": "selu"}, `key "hidden_act": "selu" is not supported`},
		{map[string]any{"conv_kernel": []int{10}}, "conv_dim [16 16], conv_stride [5 2] and conv_kernel [10] must have one entry per conv layer"},
		{map[string]any{"num_feat_extract_layers": 3}, "num_feat_extract_layers is 3, but conv_dim has 2 layers"},
		{map[string]any{"conv_depthwise_kernel_size": 6}, "conv_depthwise_kernel_size 6 must be odd"},
		{map[string]any{"use_rotary": true}, `Wav2Vec2Conformer config: unknown key "use_rotary"`},
	} {
		dir := copyCheckpoint(t, rel, c.set, nil)
		_, err := LoadWav2Vec2ConformerModel(dir)
		require.ErrorContains(t, err, c.want, "%v", c.set)
		require.ErrorContains(t, err, filepath.Join(dir, "config.json"))
	}

	// The rotary checkpoint without inv_freq computes it from the base.
	rot := filepath.Join("testdata", "conformer_tiny_rotary")
	m, err := LoadWav2Vec2ConformerModel(rot)
	require.NoError(t, err)
	dir = copyCheckpoint(t, rot, nil, func(ts map[string]safetensors.Tensor) { delete(ts, "encoder.embed_positions.inv_freq") })
	m2, err := LoadWav2Vec2ConformerModel(dir)
	require.NoError(t, err)
	require.InDeltaSlice(t, m.invFreq, m2.invFreq, 1e-7)
}

func TestWav2Vec2ConformerInputErrors(t *testing.T) {
	m, err := LoadWav2Vec2ConformerModel(filepath.Join("testdata", "conformer_tiny_rel"))
	require.NoError(t, err)
	require.Equal(t, 20, m.receptiveField())
	require.Equal(t, 1, m.Config.FeatureLength(20))
	require.Equal(t, 0, m.Config.FeatureLength(19))
	x := core.Zeros(core.Shape{2, 100}, core.F32)
	_, err = m.Forward(x.Reshape(core.Shape{200}), nil)
	require.ErrorContains(t, err, "input values have shape [200], want (batch, samples)")
	_, err = m.Forward(core.Zeros(core.Shape{1, 19}, core.F32), nil)
	require.ErrorContains(t, err, "input values have 19 samples, fewer than the feature encoder's receptive field 20")
	_, err = m.Forward(x, core.Ones(core.Shape{2, 99}, core.I64))
	require.ErrorContains(t, err, "attention mask has shape [2 99] and dtype i64, want the input values' shape [2 100]")
	rows := make([]int64, 200)
	for j := 100; j < 200; j++ {
		rows[j] = 1
	}
	_, err = m.Forward(x, core.FromSlice(rows, core.Shape{2, 100}))
	require.ErrorContains(t, err, "row 0 has 0 real samples; want from the feature encoder's receptive field 20 to the 100 samples")
	mask := core.FromSlice([]bool{true, true}, core.Shape{1, 2})
	_, err = m.Forward(core.Zeros(core.Shape{1, 2}, core.F32), mask)
	require.ErrorContains(t, err, "fewer than the feature encoder's receptive field")

	_, err = ParseWav2Vec2FeatureExtractor([]byte(`{"feature_size": 2}`))
	require.ErrorContains(t, err, `key "feature_size": value 2 is not supported`)
	_, err = ParseWav2Vec2FeatureExtractor([]byte(`{"padding_side": "left"}`))
	require.ErrorContains(t, err, `key "padding_side": value "left" is not supported`)
	_, err = NewWav2Vec2FeatureExtractor().Extract([][]float32{{0.1}, {}}, core.CPU)
	require.ErrorContains(t, err, "waveform 1 is empty")
	require.True(t, strings.HasPrefix(err.Error(), "multimodal: Wav2Vec2FeatureExtractor.Extract"))
}
