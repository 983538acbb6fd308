package multimodal

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/modelfs"
)

// SentenceEncoder is a sentence-transformers model whose modules.json
// lists a Transformer (a BERT encoder and its tokenizer), a Pooling and
// optionally a Normalize, as all-MiniLM-L6-v2 and most BERT-based
// sentence embedders ship.
type SentenceEncoder struct {
	Model     *BertModel
	Tokenizer *Tokenizer // truncates to MaxSeqLength and pads each batch to its longest
	// MaxSeqLength is sentence_bert_config.json's max_seq_length: longer
	// inputs are truncated, as sentence-transformers truncates them.
	MaxSeqLength int
	Pooling      PoolingConfig
	Normalize    bool // a Normalize module follows the pooling: embeddings have unit L2 norm
}

// PoolingConfig is a sentence-transformers Pooling module's config.json.
type PoolingConfig struct {
	Dim           int   `json:"word_embedding_dimension"`
	CLSToken      bool  `json:"pooling_mode_cls_token"`
	MeanTokens    bool  `json:"pooling_mode_mean_tokens"`
	MaxTokens     bool  `json:"pooling_mode_max_tokens"`
	MeanSqrtLen   bool  `json:"pooling_mode_mean_sqrt_len_tokens"`
	WeightedMean  bool  `json:"pooling_mode_weightedmean_tokens"`
	LastToken     bool  `json:"pooling_mode_lasttoken"`
	IncludePrompt *bool `json:"include_prompt"`
}

// modes lists the pooled vectors in sentence-transformers' order (they
// are concatenated when more than one is on).
func (p PoolingConfig) modes() []string {
	var m []string
	if p.CLSToken {
		m = append(m, "cls")
	}
	if p.MaxTokens {
		m = append(m, "max")
	}
	if p.MeanTokens {
		m = append(m, "mean")
	}
	if p.MeanSqrtLen {
		m = append(m, "mean_sqrt_len")
	}
	return m
}

type moduleEntry struct {
	Idx  int    `json:"idx"`
	Name string `json:"name"`
	Path string `json:"path"`
	Type string `json:"type"`
}

// LoadSentenceEncoder loads a sentence-transformers model folder:
// modules.json, the Transformer's config.json, model.safetensors,
// tokenizer.json and sentence_bert_config.json, and the Pooling module's
// config.json. A module type other than Transformer, Pooling and
// Normalize, or a pooling mode other than cls, mean, max and
// mean_sqrt_len, fails naming it.
func LoadSentenceEncoder(dir string, opts ...LoadOption) (*SentenceEncoder, error) {
	o, err := buildLoadOptions("LoadSentenceEncoder", opts)
	if err != nil {
		return nil, err
	}
	d, err := o.folder("LoadSentenceEncoder", dir)
	if err != nil {
		return nil, err
	}
	raw, err := d.ReadFile("modules.json")
	if err != nil {
		return nil, fmt.Errorf("multimodal: LoadSentenceEncoder: %w", err)
	}
	var mods []moduleEntry
	if err := json.Unmarshal(raw, &mods); err != nil {
		return nil, fmt.Errorf("multimodal: LoadSentenceEncoder: modules.json: %w", err)
	}
	e := &SentenceEncoder{}
	for i, m := range mods {
		sub := d.Sub(m.Path)
		want := []string{"sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling", "sentence_transformers.models.Normalize"}
		if i >= len(want) || m.Type != want[i] {
			return nil, fmt.Errorf("multimodal: LoadSentenceEncoder: modules.json: module %d is %s; supported: a Transformer, a Pooling and an optional Normalize, in that order", i, m.Type)
		}
		switch i {
		case 0:
			if err := e.loadTransformer(sub, opts); err != nil {
				return nil, err
			}
		case 1:
			if err := e.loadPooling(sub); err != nil {
				return nil, err
			}
		case 2:
			e.Normalize = true
		}
	}
	if len(mods) < 2 {
		return nil, fmt.Errorf("multimodal: LoadSentenceEncoder: modules.json lists %d modules; want a Transformer and a Pooling", len(mods))
	}
	if e.Pooling.Dim != e.Model.Config.HiddenSize {
		return nil, fmt.Errorf("multimodal: LoadSentenceEncoder: pooling word_embedding_dimension %d differs from the model's hidden_size %d",
			e.Pooling.Dim, e.Model.Config.HiddenSize)
	}
	return e, nil
}

func (e *SentenceEncoder) loadTransformer(d modelfs.Dir, opts []LoadOption) error {
	var err error
	if e.Model, err = LoadBertModel(d.String(), opts...); err != nil {
		return err
	}
	data, err := d.ReadFile("tokenizer.json")
	tok, err := tokenizerFrom(data, err, d.Path("tokenizer.json"))
	if err != nil {
		return err
	}
	var st struct {
		MaxSeqLength *int `json:"max_seq_length"`
		DoLowerCase  bool `json:"do_lower_case"`
	}
	raw, err := d.ReadFile("sentence_bert_config.json")
	if err != nil {
		return fmt.Errorf("multimodal: LoadSentenceEncoder: %w", err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("multimodal: LoadSentenceEncoder: sentence_bert_config.json: %w", err)
	}
	if st.DoLowerCase {
		// sentence-transformers lowercases before the tokenizer; the
		// tokenizer.json of such models lowercases already or not at all,
		// and guessing which would give silently different ids.
		return fmt.Errorf("multimodal: LoadSentenceEncoder: sentence_bert_config.json: do_lower_case true is not supported")
	}
	if n := tok.VocabSize(); n > e.Model.Config.VocabSize {
		// An id past the embedding table would fail at the first Encode.
		return fmt.Errorf("multimodal: LoadSentenceEncoder: tokenizer.json has %d tokens, more than the model's vocab_size %d", n, e.Model.Config.VocabSize)
	}
	e.MaxSeqLength = e.Model.Config.MaxPositionEmbeddings
	if st.MaxSeqLength != nil {
		e.MaxSeqLength = min(*st.MaxSeqLength, e.MaxSeqLength)
	}
	// The call sentence-transformers makes: tokenizer(texts, padding=True,
	// truncation="longest_first", max_length=max_seq_length), which
	// overrides the file's own truncation and padding.
	pad := Padding{PadToken: "[PAD]"}
	if p := tok.Padding(); p != nil {
		pad.PadID, pad.PadTypeID, pad.PadToken = p.PadID, p.PadTypeID, p.PadToken
	} else if id, ok := tok.TokenToID("[PAD]"); ok {
		pad.PadID = id
	} else {
		return fmt.Errorf("multimodal: LoadSentenceEncoder: tokenizer.json has neither padding settings nor a [PAD] token")
	}
	if tok, err = tok.WithTruncation(Truncation{MaxLength: e.MaxSeqLength}); err != nil {
		return err
	}
	if e.Tokenizer, err = tok.WithPadding(pad); err != nil {
		return err
	}
	return nil
}

func (e *SentenceEncoder) loadPooling(d modelfs.Dir) error {
	raw, err := d.ReadFile("config.json")
	if err != nil {
		return fmt.Errorf("multimodal: LoadSentenceEncoder: pooling: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e.Pooling); err != nil {
		return fmt.Errorf("multimodal: LoadSentenceEncoder: %s: %w", d.Path("config.json"), err)
	}
	p := e.Pooling
	switch {
	case p.WeightedMean || p.LastToken:
		return fmt.Errorf("multimodal: LoadSentenceEncoder: pooling modes weightedmean and lasttoken are not supported")
	case len(p.modes()) == 0:
		return fmt.Errorf("multimodal: LoadSentenceEncoder: pooling config turns on no pooling mode")
	case p.IncludePrompt != nil && !*p.IncludePrompt:
		return fmt.Errorf("multimodal: LoadSentenceEncoder: pooling include_prompt false is not supported")
	}
	return nil
}

// Encode embeds sentences in batches of batchSize (each padded to its
// longest): a (len(sentences), dim·modes) tensor on the model's device,
// L2-normalized when the model has a Normalize module.
func (e *SentenceEncoder) Encode(sentences []string, batchSize int) (*core.Tensor, error) {
	if len(sentences) == 0 {
		return nil, fmt.Errorf("multimodal: SentenceEncoder.Encode: no sentences")
	}
	if batchSize < 1 {
		return nil, fmt.Errorf("multimodal: SentenceEncoder.Encode: batch size %d must be >= 1", batchSize)
	}
	var parts []*core.Tensor
	for lo := 0; lo < len(sentences); lo += batchSize {
		encs, err := e.Tokenizer.EncodeBatch(sentences[lo:min(lo+batchSize, len(sentences))], true)
		if err != nil {
			return nil, fmt.Errorf("multimodal: SentenceEncoder.Encode: %w", err)
		}
		in, err := BatchTensors(encs, e.Model.Device())
		if err != nil {
			return nil, fmt.Errorf("multimodal: SentenceEncoder.Encode: %w", err)
		}
		out, err := e.Model.Forward(in)
		if err != nil {
			return nil, fmt.Errorf("multimodal: SentenceEncoder.Encode: %w", err)
		}
		parts = append(parts, e.pool(out.LastHiddenState, in.AttentionMask))
	}
	defer core.NoGradScope()()
	emb := parts[0]
	if len(parts) > 1 {
		emb = core.Concat(parts, core.Attrs{"axis": 0})
	}
	if err := emb.Err(); err != nil {
		return nil, fmt.Errorf("multimodal: SentenceEncoder.Encode: %w", err)
	}
	return emb, nil
}

// pool is sentence-transformers' Pooling over h (B, S, H) with the
// attention mask (B, S), then Normalize.
func (e *SentenceEncoder) pool(h, mask *core.Tensor) *core.Tensor {
	defer core.NoGradScope()()
	s := h.Shape()
	b, n, dim := s[0], s[1], s[2]
	m := mask.Cast(h.DType()).Reshape(core.Shape{b, n, 1})
	var vecs []*core.Tensor
	for _, mode := range e.Pooling.modes() {
		switch mode {
		case "cls":
			vecs = append(vecs, h.Slice(core.Attrs{"axis": 1, "start": 0, "stop": 1}).Reshape(core.Shape{b, dim}))
		case "max":
			// Padding is set to -1e9 first, as sentence-transformers does,
			// so it never wins.
			pad := mask.Eq(core.Scalar(0, mask.DType(), mask.Device())).Reshape(core.Shape{b, n, 1})
			vecs = append(vecs, h.MaskedFill(pad, core.Attrs{"value": -1e9}).Max(core.Attrs{"axes": []int{1}}))
		default:
			sum := h.Mul(m).Sum(core.Attrs{"axes": []int{1}})
			count := m.Sum(core.Attrs{"axes": []int{1}}).Clamp(core.Attrs{"min": 1e-9})
			if mode == "mean" {
				vecs = append(vecs, sum.Div(count))
			} else {
				vecs = append(vecs, sum.Div(count.Sqrt()))
			}
		}
	}
	out := vecs[0]
	if len(vecs) > 1 {
		out = core.Concat(vecs, core.Attrs{"axis": 1})
	}
	if e.Normalize {
		out = out.Normalize() // torch.nn.functional.normalize: x / max(‖x‖₂, 1e-12) along axis 1
	}
	return out
}
