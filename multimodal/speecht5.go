package multimodal

import (
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// SpeechT5ForTextToSpeech is transformers' SpeechT5ForTextToSpeech: a text
// encoder (token embeddings plus scaled sinusoidal positions, a LayerNorm,
// post-norm layers whose self-attention adds a learned relative position
// bias), a speech decoder (a prenet of ReLU layers with dropout over the
// previous mel frame, scaled sinusoidal positions and the speaker
// embedding, then post-norm layers of causal self-attention,
// cross-attention and a feed-forward block) and the speech postnet
// (feat_out: reduction_factor mel frames per step, prob_out: the stop
// logits, and a residual stack of conv + batch norm + tanh). Its
// StateDict holds the names save_pretrained writes.
type SpeechT5ForTextToSpeech struct {
	nn.Base
	Config SpeechT5Config

	dev     core.Device
	dtype   core.DType
	encoder *speechT5Encoder
	decoder *speechT5Decoder
	postnet *speechT5Postnet
	// dropoutMask, when set, gives prenet layer i's dropout mask for rows
	// frames (a (rows, units) bool tensor) instead of drawing one: the
	// tests replay the masks transformers drew.
	dropoutMask func(layer, rows int) *core.Tensor
}

type speechT5Encoder struct {
	nn.Base
	embed  *nn.Embedding
	alpha  *nn.Parameter
	norm   *nn.LayerNorm
	layers []*speechT5Layer
	relPos *nn.Embedding // pe_k: (2·encoder_max_relative_position, head dim)
	heads  int
}

type speechT5Decoder struct {
	nn.Base
	prenet  []*nn.Linear
	final   *nn.Linear
	alpha   *nn.Parameter
	speaker *nn.Linear
	layers  []*speechT5Layer
}

type speechT5Postnet struct {
	nn.Base
	featOut, probOut *nn.Linear
	convs            []*nn.Conv1d
	norms            []*nn.BatchNorm
}

// speechT5Layer is a post-norm encoder layer, or with cross set a decoder
// layer. The attention modules are Whisper's with a k_proj bias.
type speechT5Layer struct {
	nn.Base
	self, cross         *whisperAttention
	selfNorm, crossNorm *nn.LayerNorm
	fc1, fc2            *nn.Linear
	finalNorm           *nn.LayerNorm
	act                 string
}

func (w *weights) speechT5Attention(name string, dim, heads int) *whisperAttention {
	a := &whisperAttention{heads: heads, headDim: dim / heads}
	a.q, a.k = w.linear(name+".q_proj", dim, dim), w.linear(name+".k_proj", dim, dim)
	a.v, a.o = w.linear(name+".v_proj", dim, dim), w.linear(name+".out_proj", dim, dim)
	w.register(&a.Base, nil, nn.NamedModule{Name: "k_proj", Module: a.k}, nn.NamedModule{Name: "v_proj", Module: a.v},
		nn.NamedModule{Name: "q_proj", Module: a.q}, nn.NamedModule{Name: "out_proj", Module: a.o})
	return a
}

func (w *weights) speechT5Layer(name string, c SpeechT5Config, heads, ffn int, decoder bool) *speechT5Layer {
	d := c.HiddenSize
	l := &speechT5Layer{act: c.HiddenAct}
	var children []nn.NamedModule
	if decoder {
		l.self = w.speechT5Attention(name+".self_attn", d, heads)
		l.selfNorm = w.layerNorm(name+".self_attn_layer_norm", d, c.LayerNormEps)
		l.cross = w.speechT5Attention(name+".encoder_attn", d, heads)
		l.crossNorm = w.layerNorm(name+".encoder_attn_layer_norm", d, c.LayerNormEps)
		children = []nn.NamedModule{{Name: "self_attn", Module: l.self}, {Name: "self_attn_layer_norm", Module: l.selfNorm},
			{Name: "encoder_attn", Module: l.cross}, {Name: "encoder_attn_layer_norm", Module: l.crossNorm}}
	} else {
		l.self = w.speechT5Attention(name+".attention", d, heads)
		l.selfNorm = w.layerNorm(name+".layer_norm", d, c.LayerNormEps)
		children = []nn.NamedModule{{Name: "attention", Module: l.self}, {Name: "layer_norm", Module: l.selfNorm}}
	}
	l.fc1 = w.linear(name+".feed_forward.intermediate_dense", d, ffn)
	l.fc2 = w.linear(name+".feed_forward.output_dense", ffn, d)
	l.finalNorm = w.layerNorm(name+".final_layer_norm", d, c.LayerNormEps)
	ff := w.group(nn.NamedModule{Name: "intermediate_dense", Module: l.fc1}, nn.NamedModule{Name: "output_dense", Module: l.fc2})
	children = append(children, nn.NamedModule{Name: "feed_forward", Module: ff}, nn.NamedModule{Name: "final_layer_norm", Module: l.finalNorm})
	w.register(&l.Base, nil, children...)
	return l
}

// scalar is a 0-d parameter (ScaledPositionalEncoding's alpha) in a
// module of its own, as torch nests it.
func (w *weights) scalar(name string) (*nn.Parameter, *module) {
	// The sinusoid table beside alpha is computed (scaledPositions); a
	// checkpoint whose transformers kept it as a persistent buffer may
	// carry it, and it is then ignored, as BERT's position_ids are.
	w.ignore(strings.TrimSuffix(name, "alpha") + "pe")
	p := w.param(name)
	m := &module{}
	w.register(&m.Base, []nn.NamedParameter{{Name: "alpha", Param: p}})
	return p, m
}

func buildSpeechT5(c SpeechT5Config, w *weights) *SpeechT5ForTextToSpeech {
	m := &SpeechT5ForTextToSpeech{Config: c, dev: w.dev, dtype: w.dtype}
	d := c.HiddenSize

	e := &speechT5Encoder{heads: c.EncoderAttentionHeads}
	e.embed = w.embedding("speecht5.encoder.prenet.embed_tokens", c.VocabSize, d)
	var encPos *module
	e.alpha, encPos = w.scalar("speecht5.encoder.prenet.encode_positions.alpha")
	e.norm = w.layerNorm("speecht5.encoder.wrapped_encoder.layer_norm", d, c.LayerNormEps)
	var layers []nn.Module
	for i := range c.EncoderLayers {
		l := w.speechT5Layer(fmt.Sprintf("speecht5.encoder.wrapped_encoder.layers.%d", i), c, c.EncoderAttentionHeads, c.EncoderFFNDim, false)
		e.layers, layers = append(e.layers, l), append(layers, l)
	}
	e.relPos = w.embedding("speecht5.encoder.wrapped_encoder.embed_positions.pe_k", 2*c.EncoderMaxRelativePosition, d/c.EncoderAttentionHeads)
	prenet := w.group(nn.NamedModule{Name: "embed_tokens", Module: e.embed}, nn.NamedModule{Name: "encode_positions", Module: encPos})
	wrapped := w.group(nn.NamedModule{Name: "layer_norm", Module: e.norm}, nn.NamedModule{Name: "layers", Module: w.list(layers...)},
		nn.NamedModule{Name: "embed_positions", Module: w.group(nn.NamedModule{Name: "pe_k", Module: e.relPos})})
	w.register(&e.Base, nil, nn.NamedModule{Name: "prenet", Module: prenet}, nn.NamedModule{Name: "wrapped_encoder", Module: wrapped})

	dec := &speechT5Decoder{}
	layers = nil
	for i := range c.SpeechDecoderPrenetLayers {
		in := c.SpeechDecoderPrenetUnits
		if i == 0 {
			in = c.NumMelBins
		}
		l := w.linear(fmt.Sprintf("speecht5.decoder.prenet.layers.%d", i), in, c.SpeechDecoderPrenetUnits)
		dec.prenet, layers = append(dec.prenet, l), append(layers, l)
	}
	dec.final = w.linear("speecht5.decoder.prenet.final_layer", c.SpeechDecoderPrenetUnits, d)
	var decPos *module
	dec.alpha, decPos = w.scalar("speecht5.decoder.prenet.encode_positions.alpha")
	dec.speaker = w.linear("speecht5.decoder.prenet.speaker_embeds_layer", c.SpeakerEmbeddingDim+d, d)
	prenet = w.group(nn.NamedModule{Name: "layers", Module: w.list(layers...)}, nn.NamedModule{Name: "final_layer", Module: dec.final},
		nn.NamedModule{Name: "encode_positions", Module: decPos}, nn.NamedModule{Name: "speaker_embeds_layer", Module: dec.speaker})
	layers = nil
	for i := range c.DecoderLayers {
		l := w.speechT5Layer(fmt.Sprintf("speecht5.decoder.wrapped_decoder.layers.%d", i), c, c.DecoderAttentionHeads, c.DecoderFFNDim, true)
		dec.layers, layers = append(dec.layers, l), append(layers, l)
	}
	wrapped = w.group(nn.NamedModule{Name: "layers", Module: w.list(layers...)})
	w.register(&dec.Base, nil, nn.NamedModule{Name: "prenet", Module: prenet}, nn.NamedModule{Name: "wrapped_decoder", Module: wrapped})

	p := &speechT5Postnet{}
	p.featOut = w.linear("speech_decoder_postnet.feat_out", d, c.NumMelBins*c.ReductionFactor)
	p.probOut = w.linear("speech_decoder_postnet.prob_out", d, c.ReductionFactor)
	layers = nil
	k := c.SpeechDecoderPostnetKernel
	for i := range c.SpeechDecoderPostnetLayers {
		in, out := c.SpeechDecoderPostnetUnits, c.SpeechDecoderPostnetUnits
		if i == 0 {
			in = c.NumMelBins
		}
		if i == c.SpeechDecoderPostnetLayers-1 {
			out = c.NumMelBins
		}
		name := fmt.Sprintf("speech_decoder_postnet.layers.%d", i)
		conv := &nn.Conv1d{ConvGeometry: nn.ConvGeometry{In: in, Out: out, Kernel: []int{k}, Stride: []int{1},
			Padding: []int{(k - 1) / 2}, Dilation: []int{1}, Groups: 1}}
		conv.Weight = w.param(name+".conv.weight", out, in, k)
		w.register(&conv.Base, []nn.NamedParameter{{Name: "weight", Param: conv.Weight}})
		bn := w.batchNorm(name+".batch_norm", out, 1e-5)
		p.convs, p.norms = append(p.convs, conv), append(p.norms, bn)
		layers = append(layers, w.group(nn.NamedModule{Name: "conv", Module: conv}, nn.NamedModule{Name: "batch_norm", Module: bn}))
	}
	w.register(&p.Base, nil, nn.NamedModule{Name: "feat_out", Module: p.featOut}, nn.NamedModule{Name: "prob_out", Module: p.probOut},
		nn.NamedModule{Name: "layers", Module: w.list(layers...)})

	m.encoder, m.decoder, m.postnet = e, dec, p
	model := w.group(nn.NamedModule{Name: "encoder", Module: e}, nn.NamedModule{Name: "decoder", Module: dec})
	w.register(&m.Base, nil, nn.NamedModule{Name: "speecht5", Module: model}, nn.NamedModule{Name: "speech_decoder_postnet", Module: p})
	return m
}

// LoadSpeechT5ForTextToSpeech loads a SpeechT5ForTextToSpeech folder
// save_pretrained wrote (config.json and model.safetensors), as strictly
// as LoadBertModel: every tensor the config implies must be there with
// its shape, and no other.
func LoadSpeechT5ForTextToSpeech(dir string, opts ...LoadOption) (*SpeechT5ForTextToSpeech, error) {
	cfg, w, path, err := readCheckpoint("LoadSpeechT5ForTextToSpeech", dir, ParseSpeechT5Config, opts)
	if err != nil {
		return nil, err
	}
	m := buildSpeechT5(cfg, w)
	if err := w.check(path); err != nil {
		return nil, err
	}
	return m, nil
}

// Device is where the weights live; inputs must be there.
func (m *SpeechT5ForTextToSpeech) Device() core.Device { return m.dev }

// scaledPositions is SpeechT5ScaledPositionalEncoding's table rows
// [start, start+n) for dim: sin at even columns, cos at odd ones, in
// float32 arithmetic as torch builds it (the angle rounded to float32
// before the sine), so long positions match.
func scaledPositions(start, n, dim int) []float32 {
	out := make([]float32, n*dim)
	step := float32(-(math.Log(10000.0) / float64(dim)))
	for i := 0; i < dim; i += 2 {
		div := float32(math.Exp(float64(float32(i) * step)))
		for p := range n {
			angle := float64(float32(start+p) * div)
			out[p*dim+i] = float32(math.Sin(angle))
			if i+1 < dim {
				out[p*dim+i+1] = float32(math.Cos(angle))
			}
		}
	}
	return out
}

// addPositions is x (B, n, dim) + alpha · positions [start, start+n).
func (m *SpeechT5ForTextToSpeech) addPositions(x *core.Tensor, alpha *nn.Parameter, start int) *core.Tensor {
	if x.Err() != nil {
		return x
	}
	n, dim := x.Shape()[1], x.Shape()[2]
	pe := core.FromSlice(scaledPositions(start, n, dim), core.Shape{n, dim}, core.CPU).Cast(m.dtype).To(m.dev)
	return x.Add(alpha.Tensor().Mul(pe))
}

// Encode runs the text encoder on ids (B, T) with an optional attention
// mask (B, T), 1 or true for the tokens to attend to (nil: all), and gives
// the last hidden state (B, T, hidden_size).
func (m *SpeechT5ForTextToSpeech) Encode(ids, mask *core.Tensor) (*core.Tensor, error) {
	if err := checkIDs("SpeechT5ForTextToSpeech.Encode", ids, mask, math.MaxInt, m.dev); err != nil {
		return nil, err
	}
	if n := ids.Shape()[1]; n > m.Config.MaxTextPositions {
		return nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech.Encode: %d tokens exceed max_text_positions %d", n, m.Config.MaxTextPositions)
	}
	defer core.NoGradScope()()
	e := m.encoder
	h := m.addPositions(e.embed.Forward(ids), e.alpha, 0)
	h = e.norm.Forward(h)
	keep := keyMask(mask)
	bias := e.relativeIndex(ids.Shape()[1], m.dev)
	for _, l := range e.layers {
		if h.Err() != nil {
			break
		}
		a := l.self.relativeAttend(h, e.relPos.Weight.Tensor(), bias, keep)
		h = l.selfNorm.Forward(h.Add(a))
		h = l.finalNorm.Forward(h.Add(mlp(h, l.fc1, l.fc2, l.act)))
	}
	if err := h.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech.Encode: %w", err)
	}
	return h, nil
}

// keyMask turns an attention mask (B, T) into a bool (B, 1, 1, T) mask of
// the keys to attend to; nil stays nil.
func keyMask(mask *core.Tensor) *core.Tensor {
	if mask == nil {
		return nil
	}
	s := mask.Shape()
	if mask.DType() != core.Bool {
		mask = mask.Ne(core.Scalar(0, mask.DType(), mask.Device()))
	}
	return mask.Reshape(core.Shape{s[0], 1, 1, s[1]})
}

// relativeIndex is SpeechT5RelativePositionalEncoding's index table
// (1, 1, n, n): query i and key j use pe_k row clip(i-j, -max, max-1)+max.
func (e *speechT5Encoder) relativeIndex(n int, dev core.Device) *core.Tensor {
	maxRel := e.relPos.Num / 2
	idx := make([]int64, n*n)
	for i := range n {
		for j := range n {
			idx[i*n+j] = int64(min(max(i-j, -maxRel), maxRel-1) + maxRel)
		}
	}
	return core.FromSlice(idx, core.Shape{1, 1, n, n}, dev)
}

// relativeAttend is SpeechT5Attention with a position bias: the scaled
// query of i against key j's content plus against pe_k[index(i, j)]. The
// bias is the query's score against every pe_k row, picked per (i, j), so
// the (n, n, head dim) table transformers gathers is never built; padding
// keys get the dtype's lowest value, as transformers' additive mask.
func (a *whisperAttention) relativeAttend(x, peK, index, keep *core.Tensor) *core.Tensor {
	s := x.Shape()
	b, n := s[0], s[1]
	dt, dev := x.DType(), x.Device()
	scale := 1 / math.Sqrt(float64(a.headDim))
	q, k, v := a.split(a.q.Forward(x)), a.split(a.k.Forward(x)), a.split(a.v.Forward(x))
	rel := q.Matmul(peK.Permute(core.Attrs{"dims": []int{1, 0}})).Mul(core.Scalar(scale, dt, dev))
	bias := rel.TakeAlongAxis(index, core.Attrs{"axis": -1})
	if keep != nil {
		bias = keep.Where(bias, core.Scalar(lowest(dt), dt, dev))
	}
	o := q.ScaledDotProductAttention(k, v, bias, core.Attrs{"scale": scale})
	o = o.Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{b, n, a.heads * a.headDim})
	return a.o.Forward(o)
}

// SpeechDecoderCache holds what speech decoding has computed: every
// decoder layer's self-attention keys and values over the steps seen, its
// cross-attention keys and values (computed once from the encoder's
// states) and the encoder's key mask. A Decode call attends to the cached
// steps and appends its own, so generation feeds one frame per step and a
// mel prefix can be prefilled in chunks of any size.
type SpeechDecoderCache struct {
	self, cross [][2]*core.Tensor
	encoder     *core.Tensor
	keep        *core.Tensor // (B, 1, 1, T) bool, nil: every encoder position
	length      int
}

// NewSpeechDecoderCache starts a cache for decoding against encoder
// states (B, T, hidden) with their attention mask (B, T) (nil: all).
func (m *SpeechT5ForTextToSpeech) NewSpeechDecoderCache(encoder, mask *core.Tensor) *SpeechDecoderCache {
	n := len(m.decoder.layers)
	return &SpeechDecoderCache{self: make([][2]*core.Tensor, n), cross: make([][2]*core.Tensor, n), encoder: encoder, keep: keyMask(mask)}
}

// Len is the number of decoder steps the cache holds.
func (c *SpeechDecoderCache) Len() int { return c.length }

// Decode runs the speech decoder prenet and layers on mel frames (B, S,
// num_mel_bins) after the cache's steps, with speaker embeddings (B or 1,
// speaker_embedding_dim; nil skips the speaker layer, as transformers
// does), and gives the decoder's last hidden state (B, S, hidden). The
// prenet's dropout is off (GenerateSpeech can turn it on).
func (m *SpeechT5ForTextToSpeech) Decode(frames, speakers *core.Tensor, cache *SpeechDecoderCache) (*core.Tensor, error) {
	return m.decode(frames, speakers, cache, nil)
}

// prenetDropout draws the prenet's masks from the Philox stream at seed,
// offset advancing with every draw.
type prenetDropout struct {
	seed, offset int64
}

// decode is Decode, with the prenet's dropout drawn from drop when set.
func (m *SpeechT5ForTextToSpeech) decode(frames, speakers *core.Tensor, cache *SpeechDecoderCache, drop *prenetDropout) (*core.Tensor, error) {
	fail := func(err error) (*core.Tensor, error) {
		return nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech.Decode: %w", err)
	}
	c := m.Config
	if cache == nil || cache.encoder == nil {
		return fail(fmt.Errorf("no cache (NewSpeechDecoderCache gives one for the encoder states)"))
	}
	if err := checkFrames(frames, c.NumMelBins, m.dev, m.dtype); err != nil {
		return fail(err)
	}
	b, s := frames.Shape()[0], frames.Shape()[1]
	if eb := cache.encoder.Shape()[0]; eb != b {
		return fail(fmt.Errorf("%d frame rows for %d encoder states", b, eb))
	}
	if end := cache.length + s; end > c.MaxSpeechPositions {
		return fail(fmt.Errorf("%d cached and %d new steps exceed max_speech_positions %d", cache.length, s, c.MaxSpeechPositions))
	}
	defer core.NoGradScope()()
	x, err := m.prenet(frames, speakers, cache.length, drop)
	if err != nil {
		return fail(err)
	}
	for i, l := range m.decoder.layers {
		x = l.decode(x, cache, i)
	}
	if err := x.Err(); err != nil {
		return fail(err)
	}
	cache.length += s
	return x, nil
}

// prenet is SpeechT5SpeechDecoderPrenet on frames at decoder positions
// [start, start+S).
func (m *SpeechT5ForTextToSpeech) prenet(frames, speakers *core.Tensor, start int, drop *prenetDropout) (*core.Tensor, error) {
	c, d := m.Config, m.decoder
	b, s := frames.Shape()[0], frames.Shape()[1]
	x := frames
	for i, l := range d.prenet {
		x = l.Forward(x).ReLU()
		if drop != nil || m.dropoutMask != nil {
			x = m.consistentDropout(x, i, drop)
		}
	}
	x = m.addPositions(d.final.Forward(x), d.alpha, start)
	if speakers == nil {
		return x, x.Err()
	}
	ss := speakers.Shape()
	switch {
	case len(ss) != 2 || ss[1] != c.SpeakerEmbeddingDim || (ss[0] != 1 && ss[0] != b):
		return nil, fmt.Errorf("speaker embeddings have shape %v, want (%d or 1, %d) (speaker_embedding_dim)", ss, b, c.SpeakerEmbeddingDim)
	case speakers.Device() != m.dev || speakers.DType() != m.dtype:
		return nil, fmt.Errorf("speaker embeddings are %s on %s, the model %s on %s", speakers.DType(), speakers.Device(), m.dtype, m.dev)
	}
	// torch.nn.functional.normalize: x / max(‖x‖₂, 1e-12).
	norm := speakers.Norm(core.Attrs{"axes": []int{1}, "keepdim": true}).Maximum(core.Scalar(1e-12, m.dtype, m.dev))
	spk := speakers.Div(norm).Reshape(core.Shape{ss[0], 1, ss[1]}).Expand(core.Attrs{"shape": []int{b, s, ss[1]}})
	x = d.speaker.Forward(core.Concat([]*core.Tensor{x, spk}, core.Attrs{"axis": 2})).ReLU()
	return x, x.Err()
}

// consistentDropout is the prenet's _consistent_dropout: one mask per
// (frame, unit) shared by every row of the batch. transformers draws it
// with torch.bernoulli(x, p=p), which keeps a unit with probability p and
// then scales by 1/(1-p); the two agree only at p = 0.5, SpeechT5's
// value, and this follows transformers for every p.
func (m *SpeechT5ForTextToSpeech) consistentDropout(x *core.Tensor, layer int, drop *prenetDropout) *core.Tensor {
	s := x.Shape()
	p := m.Config.SpeechDecoderPrenetDropout
	var keep *core.Tensor
	if m.dropoutMask != nil {
		keep = m.dropoutMask(layer, s[1])
	} else {
		u := core.Rand(core.Attrs{"shape": []int{s[1], s[2]}, "dtype": core.F32, "seed": drop.seed, "offset": drop.offset})
		drop.offset += int64(s[1] * s[2])
		keep = u.Lt(core.Scalar(p, core.F32)).To(m.dev)
	}
	zero := core.Scalar(0, x.DType(), x.Device())
	return keep.Where(x, zero).Mul(core.Scalar(1/(1-p), x.DType(), x.Device()))
}

// decode is a decoder layer on x after the cache's steps (layer i).
func (l *speechT5Layer) decode(h *core.Tensor, cache *SpeechDecoderCache, i int) *core.Tensor {
	if h.Err() != nil {
		return h
	}
	k, v := l.self.split(l.self.k.Forward(h)), l.self.split(l.self.v.Forward(h))
	if past := cache.self[i]; past[0] != nil {
		k = core.Concat([]*core.Tensor{past[0], k}, core.Attrs{"axis": 2})
		v = core.Concat([]*core.Tensor{past[1], v}, core.Attrs{"axis": 2})
	}
	cache.self[i] = [2]*core.Tensor{k, v}
	h = l.selfNorm.Forward(h.Add(l.self.attend(h, k, v, cache.length)))
	if cache.cross[i][0] == nil {
		cache.cross[i] = [2]*core.Tensor{l.cross.split(l.cross.k.Forward(cache.encoder)), l.cross.split(l.cross.v.Forward(cache.encoder))}
	}
	kv := cache.cross[i]
	h = l.crossNorm.Forward(h.Add(l.cross.attendKeys(h, kv[0], kv[1], cache.keep)))
	return l.finalNorm.Forward(h.Add(mlp(h, l.fc1, l.fc2, l.act)))
}

// attendKeys is cross-attention of x's queries to keys k and values v
// (B, heads, T, head dim), keep (B, 1, 1, T) saying which keys count
// (nil: all).
func (a *whisperAttention) attendKeys(x, k, v, keep *core.Tensor) *core.Tensor {
	if keep == nil {
		return a.attend(x, k, v, -1)
	}
	s := x.Shape()
	q := a.split(a.q.Forward(x))
	o := q.ScaledDotProductAttention(k, v, keep, core.Attrs{"scale": 1 / math.Sqrt(float64(a.headDim))})
	return a.o.Forward(o.Permute(core.Attrs{"dims": []int{0, 2, 1, 3}}).Reshape(core.Shape{s[0], s[1], a.heads * a.headDim}))
}

// Postnet is SpeechT5SpeechDecoderPostnet on decoder states (B, S,
// hidden): the frames before the postnet (B, S·reduction_factor, mels),
// after it, and the stop logits (B, S·reduction_factor).
func (m *SpeechT5ForTextToSpeech) Postnet(hidden *core.Tensor) (before, after, stopLogits *core.Tensor, err error) {
	defer core.NoGradScope()()
	c := m.Config
	s := hidden.Shape()
	before = m.postnet.featOut.Forward(hidden).Reshape(core.Shape{s[0], s[1] * c.ReductionFactor, c.NumMelBins})
	after = m.refine(before)
	stopLogits = m.postnet.probOut.Forward(hidden).Reshape(core.Shape{s[0], s[1] * c.ReductionFactor})
	for _, t := range []*core.Tensor{before, after, stopLogits} {
		if err := t.Err(); err != nil {
			return nil, nil, nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech.Postnet: %w", err)
		}
	}
	return before, after, stopLogits, nil
}

// refine is the postnet's residual conv stack on frames (B, L, mels).
func (m *SpeechT5ForTextToSpeech) refine(frames *core.Tensor) *core.Tensor {
	p := m.postnet
	x := frames.Permute(core.Attrs{"dims": []int{0, 2, 1}})
	for i, conv := range p.convs {
		x = p.norms[i].Forward(conv.Forward(x))
		if i < len(p.convs)-1 {
			x = x.Tanh()
		}
	}
	return frames.Add(x.Permute(core.Attrs{"dims": []int{0, 2, 1}}))
}

// SpeechT5Output is Forward's result.
type SpeechT5Output struct {
	EncoderLastHiddenState *core.Tensor // (B, T, hidden)
	DecoderLastHiddenState *core.Tensor // (B, S, hidden)
	Spectrogram            *core.Tensor // after the postnet (B, S·reduction_factor, mels)
	BeforePostnet          *core.Tensor // (B, S·reduction_factor, mels)
	StopLogits             *core.Tensor // (B, S·reduction_factor)
}

// Forward is SpeechT5ForTextToSpeech's forward with decoder_input_values
// (teacher forcing): ids (B, T) and their mask (nil: all) through the
// encoder, frames (B, S, mels) through the decoder from the start, in
// chunks of chunk steps through the cache (0: all at once; any chunking
// gives the same states, which is what prefilling a mel prefix relies
// on). The prenet's dropout is off.
func (m *SpeechT5ForTextToSpeech) Forward(ids, mask, frames, speakers *core.Tensor, chunk int) (*SpeechT5Output, error) {
	enc, err := m.Encode(ids, mask)
	if err != nil {
		return nil, err
	}
	cache := m.NewSpeechDecoderCache(enc, mask)
	hidden, err := m.prefill(frames, speakers, cache, chunk, nil)
	if err != nil {
		return nil, err
	}
	before, after, stop, err := m.Postnet(hidden)
	if err != nil {
		return nil, err
	}
	return &SpeechT5Output{EncoderLastHiddenState: enc, DecoderLastHiddenState: hidden, Spectrogram: after,
		BeforePostnet: before, StopLogits: stop}, nil
}

// prefill decodes frames (B, S, mels) through the cache in chunks of
// chunk steps (0: one call) and joins the states.
func (m *SpeechT5ForTextToSpeech) prefill(frames, speakers *core.Tensor, cache *SpeechDecoderCache, chunk int, drop *prenetDropout) (*core.Tensor, error) {
	if frames == nil {
		return nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech: frames are nil")
	}
	if chunk < 0 {
		return nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech: prefill chunk %d must be >= 0", chunk)
	}
	s := frames.Shape()
	if len(s) != 3 {
		return nil, fmt.Errorf("multimodal: SpeechT5ForTextToSpeech: frames have shape %v, want (batch, steps, %d)", s, m.Config.NumMelBins)
	}
	if chunk == 0 {
		chunk = max(s[1], 1)
	}
	var parts []*core.Tensor
	for at := 0; at < s[1]; at += chunk {
		part := frames.Slice(core.Attrs{"axis": 1, "start": at, "stop": min(at+chunk, s[1])})
		h, err := m.decode(part, speakers, cache, drop)
		if err != nil {
			return nil, err
		}
		parts = append(parts, h)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return core.Concat(parts, core.Attrs{"axis": 1}), nil
}

// checkFrames checks mel frames (B, S, mels).
func checkFrames(x *core.Tensor, mels int, dev core.Device, dtype core.DType) error {
	if x == nil {
		return fmt.Errorf("frames are nil")
	}
	if err := x.Err(); err != nil {
		return fmt.Errorf("frames: %w", err)
	}
	s := x.Shape()
	switch {
	case len(s) != 3 || s[0] < 1 || s[1] < 1 || s[2] != mels:
		return fmt.Errorf("frames have shape %v, want (batch, steps, %d) (num_mel_bins)", s, mels)
	case x.DType() != dtype:
		return fmt.Errorf("frames have dtype %s, the model %s", x.DType(), dtype)
	case x.Device() != dev:
		return fmt.Errorf("frames are on %s, the model on %s", x.Device(), dev)
	}
	return nil
}
