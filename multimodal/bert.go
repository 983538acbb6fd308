package multimodal

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// BertModel is transformers' BertModel: word, position and token-type
// embeddings summed and layer-normed, then post-norm encoder layers of
// multi-head self-attention and a feed-forward block, and a pooler (a
// tanh dense layer on the first token) when the checkpoint has one. Its
// StateDict holds transformers' parameter names (embeddings.…,
// encoder.layer.N.…, pooler.dense.…).
type BertModel struct {
	nn.Base
	Config BertConfig

	dev    core.Device
	dtype  core.DType
	word   *nn.Embedding
	pos    *nn.Embedding
	types  *nn.Embedding
	embLN  *nn.LayerNorm
	layers []*bertLayer
	pooler *nn.Linear // nil when the checkpoint has no pooler
}

// LoadBertModel loads a BertModel saved by transformers' save_pretrained:
// dir holds config.json and model.safetensors. Every tensor the config
// implies must be in the file with its shape, and the file may hold no
// other; the error lists each one that is missing, misshaped or
// unexpected. WithDevice and WithDType choose where and in what dtype the
// weights live.
func LoadBertModel(dir string, opts ...LoadOption) (*BertModel, error) {
	cfg, w, path, err := readCheckpoint("LoadBertModel", dir, ParseBertConfig, opts)
	if err != nil {
		return nil, err
	}
	m := buildBert(cfg, w)
	if err := w.check(path); err != nil {
		return nil, err
	}
	m.dev, m.dtype = w.dev, w.dtype
	return m, nil
}

func buildBert(cfg BertConfig, w *weights) *BertModel {
	h := cfg.HiddenSize
	m := &BertModel{Config: cfg}
	m.word = w.embedding("embeddings.word_embeddings", cfg.VocabSize, h)
	m.pos = w.embedding("embeddings.position_embeddings", cfg.MaxPositionEmbeddings, h)
	m.types = w.embedding("embeddings.token_type_embeddings", cfg.TypeVocabSize, h)
	m.embLN = w.layerNorm("embeddings.LayerNorm", h, cfg.LayerNormEps)
	w.ignore("embeddings.position_ids")
	emb := w.group(nn.NamedModule{Name: "word_embeddings", Module: m.word},
		nn.NamedModule{Name: "position_embeddings", Module: m.pos},
		nn.NamedModule{Name: "token_type_embeddings", Module: m.types}, nn.NamedModule{Name: "LayerNorm", Module: m.embLN})
	layers := make([]nn.Module, cfg.NumHiddenLayers)
	for i := range cfg.NumHiddenLayers {
		l := w.bertLayer(fmt.Sprintf("encoder.layer.%d", i), cfg)
		m.layers, layers[i] = append(m.layers, l), l
	}
	children := []nn.NamedModule{{Name: "embeddings", Module: emb},
		{Name: "encoder", Module: w.group(nn.NamedModule{Name: "layer", Module: w.list(layers...)})}}
	if w.has("pooler.dense.weight") || w.has("pooler.dense.bias") {
		m.pooler = w.linear("pooler.dense", h, h)
		children = append(children, nn.NamedModule{Name: "pooler", Module: w.group(nn.NamedModule{Name: "dense", Module: m.pooler})})
	}
	w.register(&m.Base, nil, children...)
	return m
}

// bertLayer is BertLayer: attention (self-attention, dense, residual,
// LayerNorm) then the feed-forward block (intermediate dense, activation,
// output dense, residual, LayerNorm).
type bertLayer struct {
	nn.Base
	q, k, v, attnOut *nn.Linear
	attnLN           *nn.LayerNorm
	inter, out       *nn.Linear
	outLN            *nn.LayerNorm
	heads, headDim   int
	act              string
}

func (w *weights) bertLayer(name string, cfg BertConfig) *bertLayer {
	h := cfg.HiddenSize
	l := &bertLayer{heads: cfg.NumAttentionHeads, headDim: h / cfg.NumAttentionHeads, act: cfg.HiddenAct}
	l.q = w.linear(name+".attention.self.query", h, h)
	l.k = w.linear(name+".attention.self.key", h, h)
	l.v = w.linear(name+".attention.self.value", h, h)
	l.attnOut = w.linear(name+".attention.output.dense", h, h)
	l.attnLN = w.layerNorm(name+".attention.output.LayerNorm", h, cfg.LayerNormEps)
	l.inter = w.linear(name+".intermediate.dense", h, cfg.IntermediateSize)
	l.out = w.linear(name+".output.dense", cfg.IntermediateSize, h)
	l.outLN = w.layerNorm(name+".output.LayerNorm", h, cfg.LayerNormEps)
	self := w.group(nn.NamedModule{Name: "query", Module: l.q}, nn.NamedModule{Name: "key", Module: l.k},
		nn.NamedModule{Name: "value", Module: l.v})
	attnOut := w.group(nn.NamedModule{Name: "dense", Module: l.attnOut}, nn.NamedModule{Name: "LayerNorm", Module: l.attnLN})
	w.register(&l.Base, nil,
		nn.NamedModule{Name: "attention", Module: w.group(nn.NamedModule{Name: "self", Module: self}, nn.NamedModule{Name: "output", Module: attnOut})},
		nn.NamedModule{Name: "intermediate", Module: w.group(nn.NamedModule{Name: "dense", Module: l.inter})},
		nn.NamedModule{Name: "output", Module: w.group(nn.NamedModule{Name: "dense", Module: l.out}, nn.NamedModule{Name: "LayerNorm", Module: l.outLN})})
	return l
}

// forward maps h (B, S, H) to (B, S, H); keep (B, 1, 1, S), bool, says
// which keys each query may attend to (padding is masked out).
func (l *bertLayer) forward(h, keep *core.Tensor) *core.Tensor {
	if h.Err() != nil {
		return h
	}
	s := h.Shape()
	b, n := s[0], s[1]
	split := func(t *core.Tensor) *core.Tensor {
		return t.Reshape(core.Shape{b, n, l.heads, l.headDim}).Permute(core.Attrs{"dims": []int{0, 2, 1, 3}})
	}
	q, k, v := l.q.Forward(h), l.k.Forward(h), l.v.Forward(h)
	o := nn.MergedHeadsAttention(split(q), split(k), split(v), keep, core.Attrs{"scale": 1 / math.Sqrt(float64(l.headDim))})
	nn.ReleaseDead(nil, q, k, v)
	a := l.attnOut.ForwardAdd(o, h)
	nn.ReleaseDead(nil, o)
	h = l.attnLN.Forward(a)
	nn.ReleaseDead(nil, a)
	inter := linearActivated(l.inter, h, l.act)
	r := l.out.ForwardAdd(inter, h)
	nn.ReleaseDead(nil, inter, h)
	out := l.outLN.Forward(r)
	nn.ReleaseDead(nil, r)
	return out
}

// Device is where the weights live; Forward takes tensors there.
func (m *BertModel) Device() core.Device { return m.dev }

// DType is the weights' dtype.
func (m *BertModel) DType() core.DType { return m.dtype }

// BertInput is a batch for BertModel.Forward, tensors of shape (B, S) on
// the model's device: integer token ids, and optionally token type ids
// (nil: all 0) and an attention mask (nil: all 1; 0 marks padding).
// BatchTensors makes them from a tokenizer's encodings.
type BertInput struct {
	IDs, TypeIDs, AttentionMask *core.Tensor
	// HiddenStates asks for the output of the embeddings and of every
	// layer, as transformers' output_hidden_states.
	HiddenStates bool
}

// BertOutput is BertModel.Forward's result.
type BertOutput struct {
	LastHiddenState *core.Tensor   // (B, S, hidden_size)
	PoolerOutput    *core.Tensor   // (B, hidden_size); nil without a pooler
	HiddenStates    []*core.Tensor // num_hidden_layers+1 tensors when asked for
}

// Forward runs the encoder without recording for autograd.
func (m *BertModel) Forward(in BertInput) (*BertOutput, error) {
	if err := m.checkInput(in); err != nil {
		return nil, err
	}
	defer core.NoGradScope()()
	s := in.IDs.Shape()
	b, n := s[0], s[1]
	h := m.word.Forward(in.IDs)
	pos := m.pos.Weight.Tensor().Slice(core.Attrs{"axis": 0, "start": 0, "stop": n})
	h = h.Add(pos)
	if in.TypeIDs != nil {
		h = h.Add(m.types.Forward(in.TypeIDs))
	} else {
		h = h.Add(m.types.Weight.Tensor().Slice(core.Attrs{"axis": 0, "start": 0, "stop": 1}))
	}
	h = m.embLN.Forward(h)
	var keep *core.Tensor
	if in.AttentionMask != nil {
		keep = in.AttentionMask.Ne(core.Scalar(0, in.AttentionMask.DType(), m.dev)).Reshape(core.Shape{b, 1, 1, n})
	}
	out := &BertOutput{}
	if in.HiddenStates {
		out.HiddenStates = append(out.HiddenStates, h)
	}
	for _, l := range m.layers {
		next := l.forward(h, keep)
		if in.HiddenStates {
			out.HiddenStates = append(out.HiddenStates, next)
		} else if next != h {
			nn.ReleaseDead(nil, h) // the previous layer's output, made here and read by no one else
		}
		h = next
	}
	out.LastHiddenState = h
	if m.pooler != nil {
		first := h.Slice(core.Attrs{"axis": 1, "start": 0, "stop": 1}).Reshape(core.Shape{b, m.Config.HiddenSize})
		out.PoolerOutput = m.pooler.Forward(first).Tanh()
	}
	if err := h.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: BertModel.Forward: %w", err)
	}
	if out.PoolerOutput != nil {
		if err := out.PoolerOutput.Err(); err != nil {
			return nil, fmt.Errorf("multimodal: BertModel.Forward: pooler: %w", err)
		}
	}
	return out, nil
}

func (m *BertModel) checkInput(in BertInput) error {
	if in.IDs == nil {
		return fmt.Errorf("multimodal: BertModel.Forward: IDs is nil")
	}
	if err := in.IDs.Err(); err != nil {
		return fmt.Errorf("multimodal: BertModel.Forward: IDs: %w", err)
	}
	s := in.IDs.Shape()
	if len(s) != 2 || s[0] < 1 || s[1] < 1 {
		return fmt.Errorf("multimodal: BertModel.Forward: IDs have shape %v, want (batch, sequence) with both >= 1", s)
	}
	if s[1] > m.Config.MaxPositionEmbeddings {
		return fmt.Errorf("multimodal: BertModel.Forward: sequence length %d is longer than max_position_embeddings %d", s[1], m.Config.MaxPositionEmbeddings)
	}
	for _, t := range []struct {
		name string
		t    *core.Tensor
	}{{"IDs", in.IDs}, {"TypeIDs", in.TypeIDs}, {"AttentionMask", in.AttentionMask}} {
		if t.t == nil {
			continue
		}
		switch {
		case t.t.Err() != nil:
			return fmt.Errorf("multimodal: BertModel.Forward: %s: %w", t.name, t.t.Err())
		case !t.t.Shape().Equal(s):
			return fmt.Errorf("multimodal: BertModel.Forward: %s has shape %v, IDs %v", t.name, t.t.Shape(), s)
		case t.t.DType().IsFloat() || t.t.DType() == core.Bool:
			return fmt.Errorf("multimodal: BertModel.Forward: %s has dtype %s, want an integer dtype", t.name, t.t.DType())
		case t.t.Device() != m.dev:
			return fmt.Errorf("multimodal: BertModel.Forward: %s is on %s, the model on %s", t.name, t.t.Device(), m.dev)
		}
	}
	return nil
}

// BatchTensors stacks encodings of one length (pad them: a tokenizer
// WithPadding does) into (B, S) int64 ids, type ids and attention mask on
// dev.
func BatchTensors(encs []*Encoding, dev core.Device) (BertInput, error) {
	if len(encs) == 0 {
		return BertInput{}, fmt.Errorf("multimodal: BatchTensors: no encodings")
	}
	n := encs[0].Len()
	ids := make([]int64, 0, len(encs)*n)
	types := make([]int64, 0, len(encs)*n)
	mask := make([]int64, 0, len(encs)*n)
	for i, e := range encs {
		if e.Len() != n {
			return BertInput{}, fmt.Errorf("multimodal: BatchTensors: encoding %d has length %d, encoding 0 %d (pad the batch)", i, e.Len(), n)
		}
		for j := range n {
			ids = append(ids, int64(e.IDs[j]))
			types = append(types, int64(e.TypeIDs[j]))
			mask = append(mask, int64(e.AttentionMask[j]))
		}
	}
	shape := core.Shape{len(encs), n}
	return BertInput{IDs: core.FromSlice(ids, shape, dev), TypeIDs: core.FromSlice(types, shape, dev),
		AttentionMask: core.FromSlice(mask, shape, dev)}, nil
}
