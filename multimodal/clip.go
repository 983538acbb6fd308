package multimodal

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// CLIPModel is transformers' CLIPModel: a causal text transformer and a
// ViT-style vision transformer, each pooled (the end-of-text token; the
// class token after post_layernorm) and projected into one embedding
// space, where a learned temperature (logit_scale) scales the cosine
// similarities. Its StateDict holds transformers' names (text_model.…,
// vision_model.…, text_projection, visual_projection, logit_scale).
type CLIPModel struct {
	nn.Base
	Config CLIPConfig

	dev        core.Device
	dtype      core.DType
	text       *clipText
	vision     *clipVision
	textProj   *nn.Linear
	visualProj *nn.Linear
	logitScale *nn.Parameter
}

type clipText struct {
	nn.Base
	cfg     CLIPTextConfig
	tok     *nn.Embedding
	pos     *nn.Embedding
	layers  []*preNormLayer
	finalLN *nn.LayerNorm
}

type clipVision struct {
	nn.Base
	cfg      CLIPVisionConfig
	class    *nn.Parameter
	patch    *nn.Conv2d
	pos      *nn.Embedding
	preLN    *nn.LayerNorm
	layers   []*preNormLayer
	postLN   *nn.LayerNorm
	numPatch int
}

// clipLayerNames are CLIPEncoderLayer's names.
var clipLayerNames = layerNames{
	q: ".self_attn.q_proj", k: ".self_attn.k_proj", v: ".self_attn.v_proj", o: ".self_attn.out_proj",
	fc1: ".mlp.fc1", fc2: ".mlp.fc2", norm1: ".layer_norm1", norm2: ".layer_norm2",
	nest: func(w *weights, l *preNormLayer) []nn.NamedModule {
		attn := w.group(nn.NamedModule{Name: "k_proj", Module: l.k}, nn.NamedModule{Name: "v_proj", Module: l.v},
			nn.NamedModule{Name: "q_proj", Module: l.q}, nn.NamedModule{Name: "out_proj", Module: l.o})
		return []nn.NamedModule{{Name: "self_attn", Module: attn}, {Name: "layer_norm1", Module: l.norm1},
			{Name: "mlp", Module: w.group(nn.NamedModule{Name: "fc1", Module: l.fc1}, nn.NamedModule{Name: "fc2", Module: l.fc2})},
			{Name: "layer_norm2", Module: l.norm2}}
	},
}

// LoadCLIPModel loads a CLIPModel saved by save_pretrained (config.json
// and model.safetensors), as strictly as LoadBertModel. The tokenizer is
// the folder's tokenizer.json (LoadTokenizer).
func LoadCLIPModel(dir string, opts ...LoadOption) (*CLIPModel, error) {
	cfg, w, path, err := readCheckpoint("LoadCLIPModel", dir, ParseCLIPConfig, opts)
	if err != nil {
		return nil, err
	}
	m := &CLIPModel{Config: cfg, dev: w.dev, dtype: w.dtype}
	m.text = w.clipText(cfg.Text, "text_model.")
	m.vision = w.clipVision(cfg.Vision)
	m.visualProj = w.linearBias("visual_projection", cfg.Vision.HiddenSize, cfg.ProjectionDim, false)
	m.textProj = w.linearBias("text_projection", cfg.Text.HiddenSize, cfg.ProjectionDim, false)
	m.logitScale = w.param("logit_scale")
	w.register(&m.Base, []nn.NamedParameter{{Name: "logit_scale", Param: m.logitScale}},
		nn.NamedModule{Name: "text_model", Module: m.text}, nn.NamedModule{Name: "vision_model", Module: m.vision},
		nn.NamedModule{Name: "visual_projection", Module: m.visualProj}, nn.NamedModule{Name: "text_projection", Module: m.textProj})
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

func clipDims(hidden, inter, heads int, eps float64, act string) layerDims {
	return layerDims{hidden: hidden, inter: inter, heads: heads, eps: eps, act: act, qkvBias: true}
}

// clipLayers are a tower's encoder layers; prefix is the tower's name
// prefix with its dot ("text_model.", or "" for a bare tower).
func (w *weights) clipLayers(prefix string, n int, d layerDims) ([]*preNormLayer, *list) {
	var layers []*preNormLayer
	mods := make([]nn.Module, n)
	for i := range n {
		l := w.preNormLayer(fmt.Sprintf("%sencoder.layers.%d", prefix, i), d, clipLayerNames)
		layers, mods[i] = append(layers, l), l
	}
	return layers, w.list(mods...)
}

// clipText is the text tower with its tensors under prefix: "text_model."
// in a CLIPModel, a CLIPTextModelWithProjection and the CLIPTextModel
// files transformers 4 saved (Stable Diffusion's), "" in the
// CLIPTextModel files transformers 5 saves (the tower is the model).
func (w *weights) clipText(c CLIPTextConfig, prefix string) *clipText {
	t := &clipText{cfg: c}
	t.tok = w.embedding(prefix+"embeddings.token_embedding", c.VocabSize, c.HiddenSize)
	t.pos = w.embedding(prefix+"embeddings.position_embedding", c.MaxPositionEmbeddings, c.HiddenSize)
	var layers *list
	t.layers, layers = w.clipLayers(prefix, c.NumHiddenLayers,
		clipDims(c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads, c.LayerNormEps, c.HiddenAct))
	t.finalLN = w.layerNorm(prefix+"final_layer_norm", c.HiddenSize, c.LayerNormEps)
	// transformers saved the position_ids buffer until 4.31; Stable
	// Diffusion v1's text_encoder checkpoints still hold it.
	w.ignore(prefix + "embeddings.position_ids")
	w.register(&t.Base, nil,
		nn.NamedModule{Name: "embeddings", Module: w.group(nn.NamedModule{Name: "token_embedding", Module: t.tok},
			nn.NamedModule{Name: "position_embedding", Module: t.pos})},
		nn.NamedModule{Name: "encoder", Module: w.group(nn.NamedModule{Name: "layers", Module: layers})},
		nn.NamedModule{Name: "final_layer_norm", Module: t.finalLN})
	return t
}

func (w *weights) clipVision(c CLIPVisionConfig) *clipVision {
	v := &clipVision{cfg: c, numPatch: (c.ImageSize / c.PatchSize) * (c.ImageSize / c.PatchSize)}
	v.class = w.param("vision_model.embeddings.class_embedding", c.HiddenSize)
	v.patch = w.patchConv("vision_model.embeddings.patch_embedding", c.NumChannels, c.HiddenSize, c.PatchSize, false)
	v.pos = w.embedding("vision_model.embeddings.position_embedding", v.numPatch+1, c.HiddenSize)
	v.preLN = w.layerNorm("vision_model.pre_layrnorm", c.HiddenSize, c.LayerNormEps)
	var layers *list
	v.layers, layers = w.clipLayers("vision_model.", c.NumHiddenLayers,
		clipDims(c.HiddenSize, c.IntermediateSize, c.NumAttentionHeads, c.LayerNormEps, c.HiddenAct))
	v.postLN = w.layerNorm("vision_model.post_layernorm", c.HiddenSize, c.LayerNormEps)
	emb := w.group(nn.NamedModule{Name: "patch_embedding", Module: v.patch}, nn.NamedModule{Name: "position_embedding", Module: v.pos})
	w.register(&emb.Base, []nn.NamedParameter{{Name: "class_embedding", Param: v.class}})
	w.register(&v.Base, nil, nn.NamedModule{Name: "embeddings", Module: emb}, nn.NamedModule{Name: "pre_layrnorm", Module: v.preLN},
		nn.NamedModule{Name: "encoder", Module: w.group(nn.NamedModule{Name: "layers", Module: layers})},
		nn.NamedModule{Name: "post_layernorm", Module: v.postLN})
	return v
}

// Device is where the weights live; inputs must be there.
func (m *CLIPModel) Device() core.Device { return m.dev }

// CLIPTextOutput is the text tower's result.
type CLIPTextOutput struct {
	LastHiddenState *core.Tensor // (B, S, text hidden), after final_layer_norm
	PoolerOutput    *core.Tensor // (B, text hidden): the end-of-text token's state
	// TextEmbeds is CLIPTextModelWithProjection's text_embeds, (B,
	// projection_dim); nil from the other models.
	TextEmbeds *core.Tensor
}

// EncodeText runs the text tower on ids (B, S) and an optional attention
// mask (B, S; 0 marks padding), both integer tensors on the model's
// device. Each query attends to itself and the non-padding tokens before
// it.
func (m *CLIPModel) EncodeText(ids, mask *core.Tensor) (*CLIPTextOutput, error) {
	return m.text.encode("CLIPModel.EncodeText", ids, mask, m.dev)
}

// encode is the text tower's forward pass, shared by CLIPModel and the
// standalone text models; op names the caller in errors.
func (t *clipText) encode(op string, ids, mask *core.Tensor, dev core.Device) (*CLIPTextOutput, error) {
	c := t.cfg
	if err := checkIDs(op, ids, mask, c.MaxPositionEmbeddings, dev); err != nil {
		return nil, err
	}
	host, err := ids.Int64s()
	if err != nil {
		return nil, fmt.Errorf("multimodal: %s: %w", op, err)
	}
	defer core.NoGradScope()()
	s := ids.Shape()
	b, n := s[0], s[1]
	h := t.tok.Forward(ids).Add(t.pos.Weight.Tensor().Slice(core.Attrs{"axis": 0, "start": 0, "stop": n}))
	causal := make([]bool, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			causal[i*n+j] = true
		}
	}
	attend := core.FromSlice(causal, core.Shape{1, 1, n, n}, dev)
	if mask != nil {
		keep := mask.Ne(core.Scalar(0, mask.DType(), dev)).Reshape(core.Shape{b, 1, 1, n})
		attend = attend.LogicalAnd(keep)
	}
	for _, l := range t.layers {
		h = l.forward(h, attend)
	}
	h = t.finalLN.Forward(h)
	// The pooled state is at the first end-of-text token; for the legacy
	// eos_token_id 2, at the largest id, as transformers does.
	rows := make([]int64, b)
	for i := range b {
		row := host[i*n : (i+1)*n]
		best := 0
		for j, id := range row {
			if c.EOSTokenID == 2 && id > row[best] {
				best = j
			}
			if c.EOSTokenID != 2 && id == int64(c.EOSTokenID) {
				best = j
				break
			}
		}
		rows[i] = int64(i*n + best)
	}
	pooled := h.Reshape(core.Shape{b * n, c.HiddenSize}).IndexSelect(core.FromSlice(rows, core.Shape{b}, dev), core.Attrs{"axis": 0})
	if err := pooled.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: %s: %w", op, err)
	}
	return &CLIPTextOutput{LastHiddenState: h, PoolerOutput: pooled}, nil
}

// EncodeImage runs the vision tower on pixel values (B, num_channels,
// image_size, image_size), normalized as CLIP's image processor does.
func (m *CLIPModel) EncodeImage(pixels *core.Tensor) (*VisionOutput, error) {
	c := m.Config.Vision
	if err := checkPixels("CLIPModel.EncodeImage", pixels, c.NumChannels, c.ImageSize, m.dev, m.dtype); err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	v := m.vision
	h := prependToken(v.class.Tensor(), patchEmbed(v.patch, pixels)).Add(v.pos.Weight.Tensor())
	h = v.preLN.Forward(h)
	out := &VisionOutput{HiddenStates: []*core.Tensor{h}}
	for _, l := range v.layers {
		h = l.forward(h, nil)
		out.HiddenStates = append(out.HiddenStates, h)
	}
	out.LastHiddenState = h
	out.PoolerOutput = v.postLN.Forward(firstToken(h))
	if err := out.PoolerOutput.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: CLIPModel.EncodeImage: %w", err)
	}
	return out, nil
}

// TextFeatures is transformers' get_text_features: the projected pooled
// text states (B, projection_dim), not normalized.
func (m *CLIPModel) TextFeatures(ids, mask *core.Tensor) (*core.Tensor, error) {
	out, err := m.EncodeText(ids, mask)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	return m.textProj.Forward(out.PoolerOutput), nil
}

// ImageFeatures is get_image_features: the projected pooled image states
// (B, projection_dim), not normalized.
func (m *CLIPModel) ImageFeatures(pixels *core.Tensor) (*core.Tensor, error) {
	out, err := m.EncodeImage(pixels)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	return m.visualProj.Forward(out.PoolerOutput), nil
}

// CLIPOutput is CLIPModel.Forward's result.
type CLIPOutput struct {
	LogitsPerImage *core.Tensor // (images, texts): scaled cosine similarities
	LogitsPerText  *core.Tensor // (texts, images)
	TextEmbeds     *core.Tensor // (texts, projection_dim), unit L2 norm
	ImageEmbeds    *core.Tensor // (images, projection_dim), unit L2 norm
}

// Forward embeds texts and images and scores every pair, as CLIPModel's
// forward: exp(logit_scale) times the cosine similarity.
func (m *CLIPModel) Forward(ids, mask, pixels *core.Tensor) (*CLIPOutput, error) {
	text, err := m.TextFeatures(ids, mask)
	if err != nil {
		return nil, err
	}
	image, err := m.ImageFeatures(pixels)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	unit := func(x *core.Tensor) *core.Tensor {
		return x.Div(x.Square().Sum(core.Attrs{"axes": []int{-1}, "keepdim": true}).Sqrt())
	}
	out := &CLIPOutput{TextEmbeds: unit(text), ImageEmbeds: unit(image)}
	out.LogitsPerText = out.TextEmbeds.Matmul(out.ImageEmbeds.Transpose()).Mul(m.logitScale.Tensor().Exp())
	out.LogitsPerImage = out.LogitsPerText.Transpose()
	if err := out.LogitsPerImage.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: CLIPModel.Forward: %w", err)
	}
	return out, nil
}

// ZeroShot classifies images among labels written as texts ("a photo of
// a cat"): tok (the model's tokenizer.json, padding to a common length)
// encodes them, and the result (images, texts) holds each image's
// probabilities over the texts, the softmax of LogitsPerImage, as
// transformers' zero-shot-image-classification pipeline gives.
func (m *CLIPModel) ZeroShot(tok *Tokenizer, texts []string, pixels *core.Tensor) (*core.Tensor, error) {
	encs, err := tok.EncodeBatch(texts, true)
	if err != nil {
		return nil, fmt.Errorf("multimodal: CLIPModel.ZeroShot: %w", err)
	}
	in, err := BatchTensors(encs, m.dev)
	if err != nil {
		return nil, fmt.Errorf("multimodal: CLIPModel.ZeroShot: %w", err)
	}
	out, err := m.Forward(in.IDs, in.AttentionMask, pixels)
	if err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	return out.LogitsPerImage.Softmax(core.Attrs{"axis": -1}), nil
}

// checkIDs checks integer ids (B, S) and an optional mask of their shape.
func checkIDs(op string, ids, mask *core.Tensor, maxLen int, dev core.Device) error {
	if ids == nil {
		return fmt.Errorf("multimodal: %s: ids are nil", op)
	}
	for _, t := range []struct {
		name string
		t    *core.Tensor
	}{{"ids", ids}, {"mask", mask}} {
		if t.t == nil {
			continue
		}
		s := t.t.Shape()
		switch {
		case t.t.Err() != nil:
			return fmt.Errorf("multimodal: %s: %s: %w", op, t.name, t.t.Err())
		case len(s) != 2 || s[0] < 1 || s[1] < 1:
			return fmt.Errorf("multimodal: %s: %s have shape %v, want (batch, sequence) with both >= 1", op, t.name, s)
		case !s.Equal(ids.Shape()):
			return fmt.Errorf("multimodal: %s: %s have shape %v, the ids %v", op, t.name, s, ids.Shape())
		case t.t.DType().IsFloat() || t.t.DType() == core.Bool:
			return fmt.Errorf("multimodal: %s: %s have dtype %s, want an integer dtype", op, t.name, t.t.DType())
		case t.t.Device() != dev:
			return fmt.Errorf("multimodal: %s: %s are on %s, the model on %s", op, t.name, t.t.Device(), dev)
		}
	}
	if n := ids.Shape()[1]; n > maxLen {
		return fmt.Errorf("multimodal: %s: sequence length %d is longer than max_position_embeddings %d", op, n, maxLen)
	}
	return nil
}
