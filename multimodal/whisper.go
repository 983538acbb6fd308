package multimodal

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// WhisperModel is transformers' WhisperModel: an audio encoder (two 1-D
// convolutions, the second of stride 2, GELU after each, position
// embeddings, pre-norm self-attention layers, a final LayerNorm) and a
// text decoder (token and learned position embeddings, pre-norm layers of
// causal self-attention, cross-attention to the encoder's states and an
// MLP, a final LayerNorm). Its StateDict holds the names save_pretrained
// writes (encoder.…, decoder.…).
type WhisperModel struct {
	nn.Base
	Config WhisperConfig

	dev     core.Device
	dtype   core.DType
	encoder *whisperEncoder
	decoder *whisperDecoder
}

type whisperEncoder struct {
	nn.Base
	conv1, conv2 *nn.Conv1d
	pos          *nn.Embedding
	layers       []*whisperLayer
	norm         *nn.LayerNorm
}

type whisperDecoder struct {
	nn.Base
	tokens *nn.Embedding
	pos    *nn.Embedding
	layers []*whisperLayer
	norm   *nn.LayerNorm
}

// whisperAttention is WhisperAttention: q, v and out projections with
// biases, k without.
type whisperAttention struct {
	nn.Base
	q, k, v, o     *nn.Linear
	heads, headDim int
}

// whisperLayer is an encoder layer, or with cross set a decoder layer.
type whisperLayer struct {
	nn.Base
	self, cross         *whisperAttention
	selfNorm, crossNorm *nn.LayerNorm
	fc1, fc2            *nn.Linear
	finalNorm           *nn.LayerNorm
	act                 string
}

// whisperLayerNormEps is torch.nn.LayerNorm's default, which Whisper uses.
const whisperLayerNormEps = 1e-5

func (w *weights) whisperAttention(name string, dim, heads int) *whisperAttention {
	a := &whisperAttention{heads: heads, headDim: dim / heads}
	a.q = w.linear(name+".q_proj", dim, dim)
	a.k = w.linearBias(name+".k_proj", dim, dim, false)
	a.v = w.linear(name+".v_proj", dim, dim)
	a.o = w.linear(name+".out_proj", dim, dim)
	w.register(&a.Base, nil, nn.NamedModule{Name: "k_proj", Module: a.k}, nn.NamedModule{Name: "v_proj", Module: a.v},
		nn.NamedModule{Name: "q_proj", Module: a.q}, nn.NamedModule{Name: "out_proj", Module: a.o})
	return a
}

func (w *weights) whisperLayer(name string, dim, heads, ffn int, act string, decoder bool) *whisperLayer {
	l := &whisperLayer{act: act}
	l.self = w.whisperAttention(name+".self_attn", dim, heads)
	l.selfNorm = w.layerNorm(name+".self_attn_layer_norm", dim, whisperLayerNormEps)
	children := []nn.NamedModule{{Name: "self_attn", Module: l.self}, {Name: "self_attn_layer_norm", Module: l.selfNorm}}
	if decoder {
		l.cross = w.whisperAttention(name+".encoder_attn", dim, heads)
		l.crossNorm = w.layerNorm(name+".encoder_attn_layer_norm", dim, whisperLayerNormEps)
		children = append(children, nn.NamedModule{Name: "encoder_attn", Module: l.cross},
			nn.NamedModule{Name: "encoder_attn_layer_norm", Module: l.crossNorm})
	}
	l.fc1 = w.linear(name+".fc1", dim, ffn)
	l.fc2 = w.linear(name+".fc2", ffn, dim)
	l.finalNorm = w.layerNorm(name+".final_layer_norm", dim, whisperLayerNormEps)
	children = append(children, nn.NamedModule{Name: "fc1", Module: l.fc1}, nn.NamedModule{Name: "fc2", Module: l.fc2},
		nn.NamedModule{Name: "final_layer_norm", Module: l.finalNorm})
	w.register(&l.Base, nil, children...)
	return l
}

func (w *weights) conv1d(name string, in, out, k, stride, pad int) *nn.Conv1d {
	c := &nn.Conv1d{ConvGeometry: nn.ConvGeometry{In: in, Out: out, Kernel: []int{k}, Stride: []int{stride},
		Padding: []int{pad}, Dilation: []int{1}, Groups: 1}}
	c.Weight, c.Bias = w.param(name+".weight", out, in, k), w.param(name+".bias", out)
	w.register(&c.Base, []nn.NamedParameter{{Name: "weight", Param: c.Weight}, {Name: "bias", Param: c.Bias}})
	return c
}

// buildWhisper builds the encoder and decoder under prefix ("" for a
// WhisperModel checkpoint, "model." inside WhisperForConditionalGeneration).
func buildWhisper(cfg WhisperConfig, w *weights, prefix string) *WhisperModel {
	d := cfg.DModel
	m := &WhisperModel{Config: cfg, dev: w.dev, dtype: w.dtype}
	e := &whisperEncoder{}
	e.conv1 = w.conv1d(prefix+"encoder.conv1", cfg.NumMelBins, d, 3, 1, 1)
	e.conv2 = w.conv1d(prefix+"encoder.conv2", d, d, 3, 2, 1)
	e.pos = w.embedding(prefix+"encoder.embed_positions", cfg.MaxSourcePositions, d)
	var layers []nn.Module
	for i := range cfg.EncoderLayers {
		l := w.whisperLayer(fmt.Sprintf("%sencoder.layers.%d", prefix, i), d, cfg.EncoderAttentionHeads, cfg.EncoderFFNDim, cfg.ActivationFunction, false)
		e.layers = append(e.layers, l)
		layers = append(layers, l)
	}
	e.norm = w.layerNorm(prefix+"encoder.layer_norm", d, whisperLayerNormEps)
	w.register(&e.Base, nil, nn.NamedModule{Name: "conv1", Module: e.conv1}, nn.NamedModule{Name: "conv2", Module: e.conv2},
		nn.NamedModule{Name: "embed_positions", Module: e.pos}, nn.NamedModule{Name: "layers", Module: w.list(layers...)},
		nn.NamedModule{Name: "layer_norm", Module: e.norm})

	dec := &whisperDecoder{}
	dec.tokens = w.embedding(prefix+"decoder.embed_tokens", cfg.VocabSize, d)
	dec.pos = w.embedding(prefix+"decoder.embed_positions", cfg.MaxTargetPositions, d)
	layers = nil
	for i := range cfg.DecoderLayers {
		l := w.whisperLayer(fmt.Sprintf("%sdecoder.layers.%d", prefix, i), d, cfg.DecoderAttentionHeads, cfg.DecoderFFNDim, cfg.ActivationFunction, true)
		dec.layers = append(dec.layers, l)
		layers = append(layers, l)
	}
	dec.norm = w.layerNorm(prefix+"decoder.layer_norm", d, whisperLayerNormEps)
	w.register(&dec.Base, nil, nn.NamedModule{Name: "embed_tokens", Module: dec.tokens},
		nn.NamedModule{Name: "embed_positions", Module: dec.pos}, nn.NamedModule{Name: "layers", Module: w.list(layers...)},
		nn.NamedModule{Name: "layer_norm", Module: dec.norm})
	m.encoder, m.decoder = e, dec
	w.register(&m.Base, nil, nn.NamedModule{Name: "encoder", Module: e}, nn.NamedModule{Name: "decoder", Module: dec})
	return m
}

// LoadWhisperModel loads a WhisperModel saved by save_pretrained
// (config.json and model.safetensors, names encoder.… and decoder.…), as
// strictly as LoadBertModel.
func LoadWhisperModel(dir string, opts ...LoadOption) (*WhisperModel, error) {
	cfg, w, path, err := readCheckpoint("LoadWhisperModel", dir, ParseWhisperConfig, opts)
	if err != nil {
		return nil, err
	}
	m := buildWhisper(cfg, w, "")
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// Device is where the weights live; inputs must be there.
func (m *WhisperModel) Device() core.Device { return m.dev }

// EncoderOutput is the audio encoder's result.
type EncoderOutput struct {
	LastHiddenState *core.Tensor   // (B, max_source_positions, d_model), after the final LayerNorm
	HiddenStates    []*core.Tensor // the embeddings' and every layer's output (before the final norm)
}

// Encode runs the encoder on log-mel features (B, num_mel_bins,
// 2·max_source_positions), as the feature extractor makes them.
func (m *WhisperModel) Encode(features *core.Tensor) (*EncoderOutput, error) {
	c := m.Config
	if err := checkFeatures(features, c.NumMelBins, 2*c.MaxSourcePositions, m.dev, m.dtype); err != nil {
		return nil, fmt.Errorf("multimodal: WhisperModel.Encode: %w", err)
	}
	return m.encode(features, c.MaxSourcePositions)
}

// encode runs the encoder on features (B, mels, 2n): n positions, the
// first n position embeddings. Whisper is trained on the whole window
// (n = max_source_positions); fewer is whisper.cpp's audio_ctx, which
// streaming may choose for speed.
func (m *WhisperModel) encode(features *core.Tensor, n int) (*EncoderOutput, error) {
	defer core.NoGradScope()()
	e := m.encoder
	x := e.conv2.Forward(e.conv1.Forward(features).GELU()).GELU()
	pos := e.pos.Weight.Tensor()
	if n < m.Config.MaxSourcePositions {
		pos = pos.Slice(core.Attrs{"axis": 0, "start": 0, "stop": n})
	}
	h := x.Permute(core.Attrs{"dims": []int{0, 2, 1}}).Add(pos)
	out := &EncoderOutput{HiddenStates: []*core.Tensor{h}}
	for _, l := range e.layers {
		h = l.forward(h, nil, nil)
		out.HiddenStates = append(out.HiddenStates, h)
	}
	out.LastHiddenState = e.norm.Forward(h)
	if err := out.LastHiddenState.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: WhisperModel.Encode: %w", err)
	}
	return out, nil
}

// DecoderCache holds what decoding has computed so far: every layer's
// self-attention keys and values over the ids seen, and its
// cross-attention keys and values, computed once from the encoder's
// states. A Decode call with a cache attends to the cached ids and
// appends its own, so generation feeds one new id per step.
type DecoderCache struct {
	self, cross [][2]*core.Tensor // per layer: (B, heads, length, head dim)
	encoder     *core.Tensor
	length      int
}

// NewDecoderCache starts a cache for decoding against encoder states
// (B, frames, d_model).
func (m *WhisperModel) NewDecoderCache(encoder *core.Tensor) *DecoderCache {
	n := len(m.decoder.layers)
	return &DecoderCache{self: make([][2]*core.Tensor, n), cross: make([][2]*core.Tensor, n), encoder: encoder}
}

// Len is the number of decoder positions the cache holds.
func (c *DecoderCache) Len() int { return c.length }

// DecoderOutput is the decoder's result.
type DecoderOutput struct {
	LastHiddenState *core.Tensor   // (B, S, d_model), after the final LayerNorm
	HiddenStates    []*core.Tensor // the embeddings' and every layer's output (before the final norm)
}

// Decode runs the decoder on ids (B, S) after the cache's positions,
// attending to the cache's encoder states, and extends the cache.
func (m *WhisperModel) Decode(ids *core.Tensor, cache *DecoderCache) (*DecoderOutput, error) {
	if cache == nil || cache.encoder == nil {
		return nil, fmt.Errorf("multimodal: WhisperModel.Decode: no cache (NewDecoderCache gives one for the encoder states)")
	}
	if err := checkIDs("WhisperModel.Decode", ids, nil, math.MaxInt, m.dev); err != nil {
		return nil, err
	}
	if end := cache.length + ids.Shape()[1]; end > m.Config.MaxTargetPositions {
		return nil, fmt.Errorf("multimodal: WhisperModel.Decode: %d cached and %d new ids exceed max_target_positions %d",
			cache.length, ids.Shape()[1], m.Config.MaxTargetPositions)
	}
	if b, eb := ids.Shape()[0], cache.encoder.Shape()[0]; b != eb {
		return nil, fmt.Errorf("multimodal: WhisperModel.Decode: %d id rows for %d encoder states", b, eb)
	}
	defer core.NoGradScope()()
	d, s := m.decoder, ids.Shape()[1]
	pos := d.pos.Weight.Tensor().Slice(core.Attrs{"axis": 0, "start": cache.length, "stop": cache.length + s})
	h := d.tokens.Forward(ids).Add(pos)
	out := &DecoderOutput{HiddenStates: []*core.Tensor{h}}
	for i, l := range d.layers {
		h = l.forward(h, cache, &i)
		out.HiddenStates = append(out.HiddenStates, h)
	}
	cache.length += s
	out.LastHiddenState = d.norm.Forward(h)
	if err := out.LastHiddenState.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: WhisperModel.Decode: %w", err)
	}
	return out, nil
}

// WhisperOutput is WhisperModel.Forward's result.
type WhisperOutput struct {
	Encoder *EncoderOutput
	Decoder *DecoderOutput
}

// Forward encodes features and decodes ids (B, S) from the start, as
// WhisperModel's forward with decoder_input_ids.
func (m *WhisperModel) Forward(features, ids *core.Tensor) (*WhisperOutput, error) {
	enc, err := m.Encode(features)
	if err != nil {
		return nil, err
	}
	dec, err := m.Decode(ids, m.NewDecoderCache(enc.LastHiddenState))
	if err != nil {
		return nil, err
	}
	return &WhisperOutput{Encoder: enc, Decoder: dec}, nil
}

// forward is one layer: an encoder layer without cache, a decoder layer
// (layer index i of cache) with one.
func (l *whisperLayer) forward(h *core.Tensor, cache *DecoderCache, i *int) *core.Tensor {
	if h.Err() != nil {
		return h
	}
	if cache == nil {
		h = h.Add(l.self.attend(l.selfNorm.Forward(h), nil, nil, -1))
	} else {
		x := l.selfNorm.Forward(h)
		k, v := l.self.split(l.self.k.Forward(x)), l.self.split(l.self.v.Forward(x))
		if past := cache.self[*i]; past[0] != nil {
			k = core.Concat([]*core.Tensor{past[0], k}, core.Attrs{"axis": 2})
			v = core.Concat([]*core.Tensor{past[1], v}, core.Attrs{"axis": 2})
		}
		cache.self[*i] = [2]*core.Tensor{k, v}
		h = h.Add(l.self.attend(x, k, v, cache.length))
		if cache.cross[*i][0] == nil {
			cache.cross[*i] = [2]*core.Tensor{l.cross.split(l.cross.k.Forward(cache.encoder)), l.cross.split(l.cross.v.Forward(cache.encoder))}
		}
		kv := cache.cross[*i]
		h = h.Add(l.cross.attend(l.crossNorm.Forward(h), kv[0], kv[1], -1))
	}
	return l.fc2.ForwardAdd(linearActivated(l.fc1, l.finalNorm.Forward(h), l.act), h)
}

// split maps (B, S, d) to (B, heads, S, head dim).
func (a *whisperAttention) split(t *core.Tensor) *core.Tensor {
	s := t.Shape()
	return t.Reshape(core.Shape{s[0], s[1], a.heads, a.headDim}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
}

// attend is attention of x's queries to keys k and values v, (B, heads,
// T, head dim); nil k and v mean x's own (encoder self-attention). past
// is the number of cached positions before x's: x's query i sees keys up
// to past+i (causal); past < 0 means no mask (cross-attention).
func (a *whisperAttention) attend(x, k, v *core.Tensor, past int) *core.Tensor {
	s := x.Shape()
	b, n := s[0], s[1]
	qf := a.q.Forward(x)
	q := a.split(qf)
	var own []*core.Tensor // projections made here, dead after the attention (a cache's are kept)
	if k == nil {
		kf, vf := a.k.Forward(x), a.v.Forward(x)
		k, v, own = a.split(kf), a.split(vf), []*core.Tensor{kf, vf}
	}
	attrs := core.Attrs{"scale": 1 / math.Sqrt(float64(a.headDim))}
	var mask *core.Tensor
	switch {
	case past == 0 && n > 1 && k.Shape()[2] == n:
		attrs["is_causal"] = true
	case past > 0 && n > 1:
		// Queries after a cached prefix: is_causal aligns to the top
		// left, so the mask is written out.
		keys := past + n
		m := make([]bool, n*keys)
		for i := range n {
			for j := 0; j <= past+i; j++ {
				m[i*keys+j] = true
			}
		}
		mask = core.FromSlice(m, core.Shape{n, keys}, x.Device())
	}
	o := q.ScaledDotProductAttention(k, v, mask, attrs)
	nn.ReleaseDead(nil, append(own, qf)...)
	joined := o.Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{b, n, a.heads * a.headDim})
	y := a.o.Forward(joined)
	nn.ReleaseDead(nil, joined, o) // joined is a copy of o, or o itself viewed (one head, one position)
	return y
}

// checkFeatures checks log-mel features (B, mels, frames).
func checkFeatures(x *core.Tensor, mels, frames int, dev core.Device, dtype core.DType) error {
	if x == nil {
		return fmt.Errorf("features are nil")
	}
	if err := x.Err(); err != nil {
		return fmt.Errorf("features: %w", err)
	}
	s := x.Shape()
	switch {
	case len(s) != 3 || s[0] < 1 || s[1] != mels || s[2] != frames:
		return fmt.Errorf("features have shape %v, want (batch, %d, %d) (num_mel_bins, 2·max_source_positions)", s, mels, frames)
	case x.DType() != dtype:
		return fmt.Errorf("features have dtype %s, the model %s", x.DType(), dtype)
	case x.Device() != dev:
		return fmt.Errorf("features are on %s, the model on %s", x.Device(), dev)
	}
	return nil
}
