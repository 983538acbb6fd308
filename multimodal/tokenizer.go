package multimodal

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Tokenizer turns text into token ids the way a Hugging Face tokenizer.json
// describes: added tokens, normalizer, pre-tokenizer, model (WordPiece or
// BPE), post-processor, then truncation and padding. A Tokenizer is
// immutable; WithTruncation, WithPadding and their Without forms return
// changed copies, so one loaded tokenizer serves callers with different
// settings.
type Tokenizer struct {
	added      *addedVocab
	normalizer normalizer // nil: none
	pre        preTokenizer
	model      tokenModel
	post       postProcessor // nil: none
	trunc      *Truncation
	pad        *Padding
	// decoder is nil when the file's decoder (decoderType) is one Decode
	// does not implement.
	decoder     tokenDecoder
	decoderType string
}

// Encoding is one tokenized input: the ids, their tokens, the segment
// (token type) ids, the attention mask (1 for a real token, 0 for
// padding) and which positions hold special tokens the post-processor
// added or padding.
type Encoding struct {
	IDs               []int
	Tokens            []string
	TypeIDs           []int
	AttentionMask     []int
	SpecialTokensMask []int
}

// Len is the number of positions, padding included.
func (e *Encoding) Len() int { return len(e.IDs) }

// LoadTokenizer reads a tokenizer.json.
func LoadTokenizer(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	return tokenizerFrom(data, err, path)
}

// tokenizerFrom is LoadTokenizer's parse of a tokenizer.json read from
// path (on disk or in an fs.FS), or its read error.
func tokenizerFrom(data []byte, err error, path string) (*Tokenizer, error) {
	if err != nil {
		return nil, fmt.Errorf("multimodal: LoadTokenizer: %w", err)
	}
	t, err := ParseTokenizer(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return t, nil
}

// tokenizerFile is tokenizer.json's top level; the components stay raw
// until their "type" picks the Go type that reads them.
type tokenizerFile struct {
	Version       string           `json:"version"`
	Truncation    *truncationJSON  `json:"truncation"`
	Padding       *paddingJSON     `json:"padding"`
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Model         json.RawMessage  `json:"model"`
}

// ParseTokenizer reads the contents of a tokenizer.json. A component type
// or option this package does not implement fails naming it, rather than
// giving ids that silently differ from the tokenizers library's.
func ParseTokenizer(data []byte) (*Tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("multimodal: tokenizer.json: %w", err)
	}
	fail := func(what string, err error) (*Tokenizer, error) {
		return nil, fmt.Errorf("multimodal: tokenizer.json: %s: %w", what, err)
	}
	t := &Tokenizer{}
	var err error
	if t.model, err = parseModel(f.Model); err != nil {
		return fail("model", err)
	}
	if t.added, err = newAddedVocab(f.AddedTokens, t.model); err != nil {
		return fail("added_tokens", err)
	}
	if t.normalizer, err = parseNormalizer(f.Normalizer); err != nil {
		return fail("normalizer", err)
	}
	t.added.normalizePatterns(t.normalizer)
	if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return fail("pre_tokenizer", err)
	}
	if t.post, err = parsePostProcessor(f.PostProcessor); err != nil {
		return fail("post_processor", err)
	}
	if t.decoder, t.decoderType, err = parseDecoder(f.Decoder); err != nil {
		return fail("decoder", err)
	}
	if f.Truncation != nil {
		tr, err := f.Truncation.parse()
		if err != nil {
			return fail("truncation", err)
		}
		t.trunc = &tr
	}
	if f.Padding != nil {
		p, err := f.Padding.parse()
		if err != nil {
			return fail("padding", err)
		}
		t.pad = &p
	}
	return t, nil
}

// TokenToID is the id of a token of the vocabulary or the added tokens.
func (t *Tokenizer) TokenToID(token string) (int, bool) {
	if id, ok := t.added.ids[token]; ok {
		return id, true
	}
	id, ok := t.model.tokenToID(token)
	return id, ok
}

// IDToToken is the token of an id.
func (t *Tokenizer) IDToToken(id int) (string, bool) {
	if tok, ok := t.added.tokens[id]; ok {
		return tok, true
	}
	return t.model.idToToken(id)
}

// VocabSize is the model's vocabulary size plus the added tokens that are
// not in it, as the tokenizers library's get_vocab_size(with_added_tokens=True).
func (t *Tokenizer) VocabSize() int {
	n := t.model.size()
	for id := range t.added.tokens {
		if _, ok := t.model.idToToken(id); !ok {
			n++
		}
	}
	return n
}

// Truncation is the truncation the tokenizer applies: nil when none.
func (t *Tokenizer) Truncation() *Truncation {
	if t.trunc == nil {
		return nil
	}
	c := *t.trunc
	return &c
}

// Padding is the padding the tokenizer applies: nil when none.
func (t *Tokenizer) Padding() *Padding {
	if t.pad == nil {
		return nil
	}
	c := *t.pad
	return &c
}

// WithTruncation returns a tokenizer that truncates as tr says.
func (t *Tokenizer) WithTruncation(tr Truncation) (*Tokenizer, error) {
	if err := tr.validate(); err != nil {
		return nil, err
	}
	c := *t
	c.trunc = &tr
	return &c, nil
}

// WithoutTruncation returns a tokenizer that never truncates.
func (t *Tokenizer) WithoutTruncation() *Tokenizer {
	c := *t
	c.trunc = nil
	return &c
}

// WithPadding returns a tokenizer that pads as p says.
func (t *Tokenizer) WithPadding(p Padding) (*Tokenizer, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	c := *t
	c.pad = &p
	return &c, nil
}

// WithoutPadding returns a tokenizer that never pads.
func (t *Tokenizer) WithoutPadding() *Tokenizer {
	c := *t
	c.pad = nil
	return &c
}

// Encode tokenizes one text, adding the post-processor's special tokens
// when addSpecial is true, then truncates and pads it.
func (t *Tokenizer) Encode(text string, addSpecial bool) (*Encoding, error) {
	encs, err := t.EncodeBatch([]string{text}, addSpecial)
	if err != nil {
		return nil, err
	}
	return encs[0], nil
}

// EncodePair tokenizes a pair of texts (a question and a passage, two
// sentences), joined by the post-processor's pair template.
func (t *Tokenizer) EncodePair(a, b string, addSpecial bool) (*Encoding, error) {
	encs, err := t.EncodePairBatch([][2]string{{a, b}}, addSpecial)
	if err != nil {
		return nil, err
	}
	return encs[0], nil
}

// EncodeBatch tokenizes texts; BatchLongest padding pads them to the
// longest of the batch.
func (t *Tokenizer) EncodeBatch(texts []string, addSpecial bool) ([]*Encoding, error) {
	encs := make([]*Encoding, len(texts))
	for i, s := range texts {
		e, err := t.encodeOne(s, nil, addSpecial)
		if err != nil {
			return nil, err
		}
		encs[i] = e
	}
	t.padBatch(encs)
	return encs, nil
}

// EncodePairBatch is EncodeBatch for pairs of texts.
func (t *Tokenizer) EncodePairBatch(pairs [][2]string, addSpecial bool) ([]*Encoding, error) {
	encs := make([]*Encoding, len(pairs))
	for i, p := range pairs {
		b := p[1]
		e, err := t.encodeOne(p[0], &b, addSpecial)
		if err != nil {
			return nil, err
		}
		encs[i] = e
	}
	t.padBatch(encs)
	return encs, nil
}

// encodeOne tokenizes a text or pair, truncates and post-processes it.
func (t *Tokenizer) encodeOne(a string, b *string, addSpecial bool) (*Encoding, error) {
	first := t.tokenize(a)
	var second *Encoding
	if b != nil {
		second = t.tokenize(*b)
	}
	if t.trunc != nil {
		added := 0
		if addSpecial && t.post != nil {
			added = t.post.added(second != nil)
		}
		if err := t.trunc.apply(first, second, added); err != nil {
			return nil, err
		}
	}
	if addSpecial && t.post != nil {
		return t.post.process(first, second), nil
	}
	return concat(joinPlain(first, second)), nil
}

// tokenize runs the added-token split, normalizer, pre-tokenizer and model
// over one text. Type ids are filled in by the post-processor.
func (t *Tokenizer) tokenize(text string) *Encoding {
	e := &Encoding{}
	for _, piece := range t.added.split(text, false) {
		if piece.id >= 0 {
			e.push(piece.id, piece.text)
			continue
		}
		norm := piece.text
		if t.normalizer != nil {
			norm = t.normalizer.normalize(norm)
		}
		for _, sub := range t.added.split(norm, true) {
			if sub.id >= 0 {
				e.push(sub.id, sub.text)
				continue
			}
			words := []string{sub.text}
			if t.pre != nil {
				words = t.pre.pre(words)
			}
			for _, w := range words {
				for _, tok := range t.model.tokenize(w) {
					e.push(tok.id, tok.text)
				}
			}
		}
	}
	return e
}

// push appends a token of the input. The tokenizers library's
// special_tokens_mask marks only what the post-processor adds, so even an
// added token written in the text is not marked here.
func (e *Encoding) push(id int, tok string) {
	e.IDs = append(e.IDs, id)
	e.Tokens = append(e.Tokens, tok)
	e.TypeIDs = append(e.TypeIDs, 0)
	e.AttentionMask = append(e.AttentionMask, 1)
	e.SpecialTokensMask = append(e.SpecialTokensMask, 0)
}

// joinPlain concatenates a pair without special tokens; the second text's
// type id is 1, as the tokenizers library's default for pairs.
func joinPlain(a, b *Encoding) *Encoding {
	if b == nil {
		return a
	}
	for i := range b.TypeIDs {
		b.TypeIDs[i] = 1
	}
	return concat(a, b)
}

// concat joins encodings. Its result's slices are never nil, so an empty
// text's encoding is empty lists (as JSON, [] rather than null).
func concat(encs ...*Encoding) *Encoding {
	out := &Encoding{IDs: []int{}, Tokens: []string{}, TypeIDs: []int{}, AttentionMask: []int{}, SpecialTokensMask: []int{}}
	for _, e := range encs {
		out.IDs = append(out.IDs, e.IDs...)
		out.Tokens = append(out.Tokens, e.Tokens...)
		out.TypeIDs = append(out.TypeIDs, e.TypeIDs...)
		out.AttentionMask = append(out.AttentionMask, e.AttentionMask...)
		out.SpecialTokensMask = append(out.SpecialTokensMask, e.SpecialTokensMask...)
	}
	return out
}

// describe names a JSON component's "type" for error messages.
func describe(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}
