package multimodal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
	"github.com/webtensor/webtensor/nn"
)

// The vision reference vectors: tiny seeded ViTForImageClassification,
// ViTModel and CLIPModel checkpoints that transformers saved, with their
// inputs and outputs (testdata/make_refs.py).

// visionTol is relative to the largest reference value, as miniLMTol.
const visionTol = 1e-4

type visionRefs struct{ reftest.Refs }

func loadVisionRefs(t *testing.T) *visionRefs {
	t.Helper()
	return &visionRefs{reftest.ReadRefs(t, "vision_refs", nil)}
}

func (r *visionRefs) check(t *testing.T, name string, got *core.Tensor) {
	t.Helper()
	e := reftest.RelMaxErr(t, got, r.Get(t, name, core.CPU))
	t.Logf("%s: relative error %.2g", name, e)
	require.Less(t, e, visionTol, name)
}

func checkViT(t *testing.T, dev core.Device) {
	r := loadVisionRefs(t)
	cls, err := LoadViTForImageClassification(filepath.Join("testdata", "vit_cls"), WithDevice(dev))
	require.NoError(t, err)
	require.Len(t, cls.ViT.Config.Labels, 5)
	out, err := cls.ViT.Forward(r.Get(t, "vit_cls/pixel_values", dev))
	require.NoError(t, err)
	require.Nil(t, out.PoolerOutput)
	r.check(t, "vit_cls/last_hidden_state", out.LastHiddenState)
	r.check(t, "vit_cls/hidden_states_1", out.HiddenStates[1])
	logits, err := cls.Forward(r.Get(t, "vit_cls/pixel_values", dev))
	require.NoError(t, err)
	r.check(t, "vit_cls/logits", logits)

	m, err := LoadViTModel(filepath.Join("testdata", "vit_model"), WithDevice(dev))
	require.NoError(t, err)
	out, err = m.Forward(r.Get(t, "vit_model/pixel_values", dev))
	require.NoError(t, err)
	r.check(t, "vit_model/last_hidden_state", out.LastHiddenState)
	r.check(t, "vit_model/hidden_states_1", out.HiddenStates[1])
	r.check(t, "vit_model/pooler_output", out.PoolerOutput)
}

func TestViTMatchesTransformers(t *testing.T) { checkViT(t, core.CPU) }

func TestViTOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkViT(t, webgputest.Device)
}

func checkCLIP(t *testing.T, dev core.Device) {
	r := loadVisionRefs(t)
	dir := filepath.Join("testdata", "clip_tiny")
	m, err := LoadCLIPModel(dir, WithDevice(dev))
	require.NoError(t, err)
	tok, err := LoadTokenizer(filepath.Join(dir, "tokenizer.json"))
	require.NoError(t, err)
	texts := []string{"a photo of a cat", "a photo of a dog", "a painting of a house by the sea"}
	encs, err := tok.EncodeBatch(texts, true)
	require.NoError(t, err)
	in, err := BatchTensors(encs, dev)
	require.NoError(t, err)
	for name, got := range map[string]*core.Tensor{"clip/input_ids": in.IDs, "clip/attention_mask": in.AttentionMask} {
		want, err := r.Get(t, name, core.CPU).Int64s()
		require.NoError(t, err)
		g, err := got.Int64s()
		require.NoError(t, err)
		require.Equal(t, want, g, name)
	}
	pixels := r.Get(t, "clip/pixel_values", dev)

	text, err := m.EncodeText(in.IDs, in.AttentionMask)
	require.NoError(t, err)
	r.check(t, "clip/text_last_hidden_state", text.LastHiddenState)
	r.check(t, "clip/text_pooler_output", text.PoolerOutput)
	image, err := m.EncodeImage(pixels)
	require.NoError(t, err)
	r.check(t, "clip/vision_pooler_output", image.PoolerOutput)
	feats, err := m.TextFeatures(in.IDs, in.AttentionMask)
	require.NoError(t, err)
	r.check(t, "clip/text_features", feats)
	feats, err = m.ImageFeatures(pixels)
	require.NoError(t, err)
	r.check(t, "clip/image_features", feats)
	out, err := m.Forward(in.IDs, in.AttentionMask, pixels)
	require.NoError(t, err)
	r.check(t, "clip/text_embeds", out.TextEmbeds)
	r.check(t, "clip/image_embeds", out.ImageEmbeds)
	r.check(t, "clip/logits_per_image", out.LogitsPerImage)

	probs, err := m.ZeroShot(tok, texts, pixels)
	require.NoError(t, err)
	want := r.Get(t, "clip/logits_per_image", core.CPU).Softmax(core.Attrs{"axis": -1})
	e := reftest.RelMaxErr(t, probs, want)
	t.Logf("zero-shot probabilities: relative error %.2g", e)
	require.Less(t, e, visionTol)
}

func TestCLIPMatchesTransformers(t *testing.T) { checkCLIP(t, core.CPU) }

func TestCLIPOnWebGPU(t *testing.T) {
	webgputest.Need(t)
	checkCLIP(t, webgputest.Device)
}

// requireStateDictIsFile checks that m's state dict names are the
// checkpoint's, so nn.Save writes a file transformers loads.
func requireStateDictIsFile(t *testing.T, m nn.Module, path string) {
	t.Helper()
	f, err := safetensors.ReadFile(path)
	require.NoError(t, err)
	var want, got []string
	for k := range f.Tensors {
		want = append(want, k)
	}
	for _, s := range m.StateDict() {
		got = append(got, s.Name)
	}
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got)
}

func TestVisionStateDictNames(t *testing.T) {
	cls, err := LoadViTForImageClassification(filepath.Join("testdata", "vit_cls"))
	require.NoError(t, err)
	requireStateDictIsFile(t, cls, filepath.Join("testdata", "vit_cls", "model.safetensors"))
	m, err := LoadViTModel(filepath.Join("testdata", "vit_model"))
	require.NoError(t, err)
	requireStateDictIsFile(t, m, filepath.Join("testdata", "vit_model", "model.safetensors"))
	clip, err := LoadCLIPModel(filepath.Join("testdata", "clip_tiny"))
	require.NoError(t, err)
	requireStateDictIsFile(t, clip, filepath.Join("testdata", "clip_tiny", "model.safetensors"))
}

func TestVisionLoadErrors(t *testing.T) {
	_, err := ParseViTConfig([]byte(`{"model_type": "vit", "image_size": [32, 24]}`))
	require.ErrorContains(t, err, `ViT config: key "image_size"`)
	_, err = ParseViTConfig([]byte(`{"model_type": "vit", "image_size": 30, "patch_size": 8}`))
	require.ErrorContains(t, err, "image_size 30 is not a multiple of patch_size 8")
	_, err = ParseViTConfig([]byte(`{"model_type": "vit", "pooler_act": "relu"}`))
	require.ErrorContains(t, err, `key "pooler_act": value "relu" is not supported`)
	_, err = ParseCLIPConfig([]byte(`{"model_type": "clip", "text_config": {"rope_theta": 10000}}`))
	require.ErrorContains(t, err, `CLIP text_config config: unknown key "rope_theta"`)
	_, err = ParseCLIPConfig([]byte(`{"model_type": "clip", "vision_config": {"hidden_act": "mish"}}`))
	require.ErrorContains(t, err, `vision_config key "hidden_act": "mish" is not supported`)

	// A checkpoint without logit_scale and with a misshaped projection.
	src := filepath.Join("testdata", "clip_tiny")
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	f, err := safetensors.ReadFile(filepath.Join(src, "model.safetensors"))
	require.NoError(t, err)
	delete(f.Tensors, "logit_scale")
	p := f.Tensors["text_projection.weight"]
	f.Tensors["text_projection.weight"] = safetensors.Tensor{DType: p.DType, Shape: core.Shape{32, 16}, Data: p.Data}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), f.Tensors, f.Metadata))
	_, err = LoadCLIPModel(dir)
	require.ErrorContains(t, err, "tensor logit_scale is missing (want shape [])")
	require.ErrorContains(t, err, "tensor text_projection.weight has shape [32 16], want [16 32]")

	m, err := LoadViTModel(filepath.Join("testdata", "vit_model"))
	require.NoError(t, err)
	_, err = m.Forward(core.FromSlice(make([]float32, 3*24*24), core.Shape{1, 3, 24, 24}))
	require.ErrorContains(t, err, "pixels have shape [1 3 24 24], want (batch, 2, 24, 24)")
}

// copyCheckpoint copies a checkpoint folder, with config.json's keys
// changed as set says (a nil value deletes the key) and the tensors as
// edit leaves them.
func copyCheckpoint(t *testing.T, src string, set map[string]any, edit func(map[string]safetensors.Tensor)) string {
	t.Helper()
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(raw, &cfg))
	for k, v := range set {
		cfg[k] = v
	}
	raw, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644))
	f, err := safetensors.ReadFile(filepath.Join(src, "model.safetensors"))
	require.NoError(t, err)
	if edit != nil {
		edit(f.Tensors)
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), f.Tensors, f.Metadata))
	return dir
}
