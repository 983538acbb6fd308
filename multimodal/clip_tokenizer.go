package multimodal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/webtensor/webtensor/internal/modelfs"
)

// TokenizerConfig is what a tokenizer folder's tokenizer_config.json says
// about the ids a transformers tokenizer call gives: the special tokens
// (strings, or AddedToken objects whose "normalized" flag says whether
// they match in the normalized text), model_max_length and the padding
// and truncation sides. Other keys (decode options, bookkeeping) do not
// change ids and are not read.
type TokenizerConfig struct {
	// ModelMaxLength is model_max_length; 0 when the file sets none
	// (transformers then has no limit).
	ModelMaxLength int
	BOSToken       SpecialToken // bos_token
	EOSToken       SpecialToken // eos_token
	UNKToken       SpecialToken // unk_token
	PadToken       SpecialToken // pad_token
	PaddingSide    string       // padding_side: "right" (the default) or "left"
	TruncationSide string       // truncation_side: "right" (the default) or "left"
}

// SpecialToken is a special token's text and whether it is matched in the
// normalized (for CLIP, lowercased) text rather than the raw text.
type SpecialToken struct {
	Content    string
	Normalized bool
}

// clipTokenizerDefaults are transformers' CLIPTokenizer defaults.
func clipTokenizerDefaults() TokenizerConfig {
	eot := SpecialToken{Content: "<|endoftext|>"}
	return TokenizerConfig{BOSToken: SpecialToken{Content: "<|startoftext|>"}, EOSToken: eot, UNKToken: eot, PadToken: eot,
		PaddingSide: "right", TruncationSide: "right"}
}

// ParseTokenizerConfig reads a CLIP tokenizer_config.json, with
// CLIPTokenizer's defaults for absent keys.
func ParseTokenizerConfig(data []byte) (TokenizerConfig, error) {
	c := clipTokenizerDefaults()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return TokenizerConfig{}, fmt.Errorf("multimodal: tokenizer_config.json: %w", err)
	}
	for _, k := range []struct {
		key string
		p   *SpecialToken
	}{{"bos_token", &c.BOSToken}, {"eos_token", &c.EOSToken}, {"unk_token", &c.UNKToken}, {"pad_token", &c.PadToken}} {
		key, p := k.key, k.p
		v, ok := raw[key]
		if !ok {
			continue
		}
		var s string
		var obj struct {
			Content    *string `json:"content"`
			Normalized bool    `json:"normalized"`
		}
		switch {
		case json.Unmarshal(v, &s) == nil:
			*p = SpecialToken{Content: s}
		case json.Unmarshal(v, &obj) == nil && obj.Content != nil:
			*p = SpecialToken{Content: *obj.Content, Normalized: obj.Normalized}
		default:
			return TokenizerConfig{}, fmt.Errorf("multimodal: tokenizer_config.json: key %q is %s, want a string or an AddedToken object with \"content\"", key, describe(v))
		}
	}
	// transformers writes a huge integer for "no limit"; past int range it
	// is no limit here too.
	if v, ok := raw["model_max_length"]; ok {
		var f float64
		if err := json.Unmarshal(v, &f); err != nil || f < 1 {
			return TokenizerConfig{}, fmt.Errorf("multimodal: tokenizer_config.json: model_max_length is %s, want a positive integer", describe(v))
		}
		if f < 1<<31 {
			c.ModelMaxLength = int(f)
		}
	}
	for _, k := range []struct {
		key string
		p   *string
	}{{"padding_side", &c.PaddingSide}, {"truncation_side", &c.TruncationSide}} {
		key, p := k.key, k.p
		v, ok := raw[key]
		if !ok {
			continue
		}
		if json.Unmarshal(v, p) != nil || (*p != "right" && *p != "left") {
			return TokenizerConfig{}, fmt.Errorf("multimodal: tokenizer_config.json: %s is %s, want \"right\" or \"left\"", key, describe(v))
		}
	}
	return c, nil
}

// LoadCLIPTokenizer loads a CLIPTokenizer folder: tokenizer.json when the
// folder has one, else vocab.json and merges.txt (Stable Diffusion's
// repositories ship only these) built into the tokenizer transformers'
// CLIPTokenizer builds from them, with tokenizer_config.json's special
// tokens (CLIPTokenizer's defaults without the file). Of the options only
// FromFS applies (the folder is then in that file system).
func LoadCLIPTokenizer(dir string, opts ...LoadOption) (*Tokenizer, TokenizerConfig, error) {
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	d, err := o.folder("LoadCLIPTokenizer", dir)
	if err != nil {
		return nil, TokenizerConfig{}, err
	}
	cfg := clipTokenizerDefaults()
	path := d.Path("tokenizer_config.json")
	data, err := d.ReadFile("tokenizer_config.json")
	switch {
	case err == nil:
		if cfg, err = ParseTokenizerConfig(data); err != nil {
			return nil, TokenizerConfig{}, fmt.Errorf("%w (in %s)", err, path)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, TokenizerConfig{}, fmt.Errorf("multimodal: LoadCLIPTokenizer: %w", err)
	}
	if ok, _ := d.Exists("tokenizer.json"); ok {
		data, err := d.ReadFile("tokenizer.json")
		t, err := tokenizerFrom(data, err, d.Path("tokenizer.json"))
		return t, cfg, err
	}
	t, err := clipFromVocab(d, cfg)
	if err != nil {
		return nil, TokenizerConfig{}, err
	}
	return t, cfg, nil
}

// clipFromVocab is transformers' CLIPTokenizer built from vocab.json and
// merges.txt: BPE with the </w> suffix, NFC, whitespace runs to one space
// and lowercase, CLIP's split regex then byte-level, <|startoftext|> …
// <|endoftext|> around the text, and the special tokens added (a token
// named twice takes its last definition, as transformers adds them in the
// order bos, eos, unk, pad).
func clipFromVocab(d modelfs.Dir, cfg TokenizerConfig) (*Tokenizer, error) {
	const op = "multimodal: LoadCLIPTokenizer"
	vocabPath, mergesPath := d.Path("vocab.json"), d.Path("merges.txt")
	raw, err := d.ReadFile("vocab.json")
	if err != nil {
		return nil, fmt.Errorf("%s: %s has neither tokenizer.json nor vocab.json and merges.txt: %w", op, d, err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(raw, &vocab); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", op, vocabPath, err)
	}
	text, err := d.ReadFile("merges.txt")
	if err != nil {
		return nil, fmt.Errorf("%s: %s has vocab.json but no merges.txt: %w", op, d, err)
	}
	var merges [][2]string
	for i, line := range strings.Split(strings.TrimRight(string(text), "\n"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if (i == 0 && strings.HasPrefix(line, "#version")) || line == "" {
			continue
		}
		a, b, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(b, " ") {
			return nil, fmt.Errorf("%s: %s line %d is %q, want two tokens separated by one space", op, mergesPath, i+1, line)
		}
		merges = append(merges, [2]string{a, b})
	}
	type added struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	}
	var specials []added
	index := map[string]int{}
	for _, s := range []struct {
		key string
		tok SpecialToken
	}{{"bos_token", cfg.BOSToken}, {"eos_token", cfg.EOSToken}, {"unk_token", cfg.UNKToken}, {"pad_token", cfg.PadToken}} {
		id, ok := vocab[s.tok.Content]
		if !ok {
			return nil, fmt.Errorf("%s: %s %q is not in %s", op, s.key, s.tok.Content, vocabPath)
		}
		a := added{ID: id, Content: s.tok.Content, Normalized: s.tok.Normalized, Special: true}
		if i, ok := index[a.Content]; ok {
			specials[i] = a
			continue
		}
		index[a.Content] = len(specials)
		specials = append(specials, a)
	}
	bos, eos := cfg.BOSToken.Content, cfg.EOSToken.Content
	doc := map[string]any{
		"version": "1.0", "added_tokens": specials,
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "NFC"},
			map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": `\s+`}, "content": " "},
			map[string]any{"type": "Lowercase"}}},
		"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]any{"Regex": clipSplitPattern}, "behavior": "Removed", "invert": true},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}}},
		"post_processor": map[string]any{"type": "RobertaProcessing", "sep": []any{eos, vocab[eos]}, "cls": []any{bos, vocab[bos]},
			"trim_offsets": false, "add_prefix_space": false},
		"decoder": map[string]any{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": cfg.UNKToken.Content, "continuing_subword_prefix": "",
			"end_of_word_suffix": "</w>", "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
			"vocab": vocab, "merges": merges},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	t, err := ParseTokenizer(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w (built from %s and %s)", err, vocabPath, mergesPath)
	}
	return t, nil
}

// clipSplitPattern is CLIPTokenizer's pre-tokenizing regex (Oniguruma's,
// as tokenizer.json holds it).
const clipSplitPattern = `<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+`

// MaxLengthPadded is t set up as transformers' call tokenizer(texts,
// padding="max_length", max_length=n, truncation=True) with this config:
// every text truncated to n ids (special tokens included) on the
// truncation side and padded to n with the pad token on the padding side.
func (c TokenizerConfig) MaxLengthPadded(t *Tokenizer, n int) (*Tokenizer, error) {
	pad, ok := t.TokenToID(c.PadToken.Content)
	if !ok {
		return nil, fmt.Errorf("multimodal: pad token %q is not in the tokenizer's vocabulary", c.PadToken.Content)
	}
	side := map[string]string{"": "Right", "right": "Right", "left": "Left"}
	t, err := t.WithTruncation(Truncation{MaxLength: n, Direction: side[c.TruncationSide]})
	if err != nil {
		return nil, err
	}
	return t.WithPadding(Padding{Length: n, PadID: pad, PadToken: c.PadToken.Content, Direction: side[c.PaddingSide]})
}
