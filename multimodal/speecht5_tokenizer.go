package multimodal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"unicode"

	"github.com/webtensor/webtensor/core"
)

// SpeechT5Tokenizer is transformers' SpeechT5Tokenizer from a model folder:
// spm_char.model (a character sentencepiece model, read here without the
// sentencepiece library: its normalizer's precompiled charsmap, whitespace
// rules and pieces) and tokenizer_config.json's added tokens. Encode gives
// the ids tokenizer(text)["input_ids"] gives: the text split at added
// tokens (honouring their lstrip and rstrip), each piece through
// sentencepiece, and </s> at the end.
type SpeechT5Tokenizer struct {
	sp         *sentencePiece
	added      []addedSpecial // longest first
	EOSTokenID int
	PadTokenID int
}

type addedSpecial struct {
	content        string
	id             int
	lstrip, rstrip bool
}

// LoadSpeechT5Tokenizer reads dir/spm_char.model and, when present,
// dir/tokenizer_config.json (FromFS reads them from a file system; other
// options are ignored). A setting that changes the ids and is not
// implemented (normalize, the English number normaliser; legacy false;
// single_word added tokens) fails naming it.
func LoadSpeechT5Tokenizer(dir string, opts ...LoadOption) (*SpeechT5Tokenizer, error) {
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	d, err := o.folder("LoadSpeechT5Tokenizer", dir)
	if err != nil {
		return nil, err
	}
	model, err := d.ReadFile("spm_char.model")
	if err != nil {
		return nil, fmt.Errorf("multimodal: LoadSpeechT5Tokenizer: %w", err)
	}
	sp, err := parseSentencePiece(model, d.Path("spm_char.model"))
	if err != nil {
		return nil, err
	}
	t := &SpeechT5Tokenizer{sp: sp}
	tokens := map[string]string{"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>", "bos_token": "<s>"}
	path := d.Path("tokenizer_config.json")
	data, err := d.ReadFile("tokenizer_config.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("multimodal: LoadSpeechT5Tokenizer: %w", err)
	default:
		var cfg struct {
			Added map[string]struct {
				Content    string `json:"content"`
				LStrip     bool   `json:"lstrip"`
				RStrip     bool   `json:"rstrip"`
				SingleWord bool   `json:"single_word"`
			} `json:"added_tokens_decoder"`
			Normalize          *bool `json:"normalize"`
			Legacy             *bool `json:"legacy"`
			SplitSpecialTokens *bool `json:"split_special_tokens"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("multimodal: %s: %w", path, err)
		}
		for key, v := range map[string]*bool{"normalize": cfg.Normalize, "split_special_tokens": cfg.SplitSpecialTokens} {
			if v != nil && *v {
				return nil, fmt.Errorf("multimodal: %s: key %q: value true is not supported (supported: false)", path, key)
			}
		}
		if cfg.Legacy != nil && !*cfg.Legacy {
			return nil, fmt.Errorf("multimodal: %s: key \"legacy\": value false is not supported (supported: true)", path)
		}
		var named map[string]any
		if err := json.Unmarshal(data, &named); err != nil {
			return nil, fmt.Errorf("multimodal: %s: %w", path, err)
		}
		for key := range tokens {
			if s, ok := named[key].(string); ok {
				tokens[key] = s
			}
		}
		for idText, a := range cfg.Added {
			var id int
			if _, err := fmt.Sscan(idText, &id); err != nil {
				return nil, fmt.Errorf("multimodal: %s: added_tokens_decoder key %q is not an id", path, idText)
			}
			if a.SingleWord {
				return nil, fmt.Errorf("multimodal: %s: added token %q has single_word true, which is not supported", path, a.Content)
			}
			t.added = append(t.added, addedSpecial{content: a.Content, id: id, lstrip: a.LStrip, rstrip: a.RStrip})
		}
	}
	// The special tokens are split out even when they are plain pieces.
	for _, key := range []string{"bos_token", "eos_token", "unk_token", "pad_token"} {
		if !t.isAdded(tokens[key]) {
			id, ok := sp.ids[tokens[key]]
			if !ok {
				return nil, fmt.Errorf("multimodal: SpeechT5 tokenizer in %s: %s %q is neither a piece nor an added token", dir, key, tokens[key])
			}
			t.added = append(t.added, addedSpecial{content: tokens[key], id: id})
		}
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	t.EOSTokenID, _ = t.id(tokens["eos_token"])
	t.PadTokenID, _ = t.id(tokens["pad_token"])
	return t, nil
}

func (t *SpeechT5Tokenizer) isAdded(s string) bool {
	_, ok := t.id(s)
	return ok
}

func (t *SpeechT5Tokenizer) id(s string) (int, bool) {
	for _, a := range t.added {
		if a.content == s {
			return a.id, true
		}
	}
	return 0, false
}

// VocabSize is the pieces and added tokens together, as len(tokenizer).
func (t *SpeechT5Tokenizer) VocabSize() int {
	n := len(t.sp.pieces)
	for _, a := range t.added {
		n = max(n, a.id+1)
	}
	return n
}

// Encode gives text's ids with </s> appended.
func (t *SpeechT5Tokenizer) Encode(text string) []int {
	type part struct {
		text  string
		added *addedSpecial
	}
	var parts []part
	for rest := text; rest != ""; {
		at, which := -1, -1
		for i := 0; i < len(rest) && at < 0; i++ {
			for j, a := range t.added {
				if a.content != "" && strings.HasPrefix(rest[i:], a.content) {
					at, which = i, j
					break
				}
			}
		}
		if at < 0 {
			parts = append(parts, part{text: rest})
			break
		}
		if at > 0 {
			parts = append(parts, part{text: rest[:at]})
		}
		parts = append(parts, part{added: &t.added[which]})
		rest = rest[at+len(t.added[which].content):]
	}
	for i, p := range parts {
		if p.added == nil {
			continue
		}
		if p.added.rstrip && i+1 < len(parts) && parts[i+1].added == nil {
			parts[i+1].text = strings.TrimLeftFunc(parts[i+1].text, unicode.IsSpace)
		}
		if p.added.lstrip && i > 0 && parts[i-1].added == nil {
			parts[i-1].text = strings.TrimRightFunc(parts[i-1].text, unicode.IsSpace)
		}
	}
	var ids []int
	for _, p := range parts {
		switch {
		case p.added != nil:
			ids = append(ids, p.added.id)
		case p.text != "":
			ids = append(ids, t.sp.encode(p.text)...)
		}
	}
	return append(ids, t.EOSTokenID)
}

// EncodeBatch is tokenizer(texts, padding=True): ids (B, longest) padded
// on the right with pad_token_id and the attention mask, int64 on dev.
func (t *SpeechT5Tokenizer) EncodeBatch(texts []string, dev core.Device) (ids, mask *core.Tensor, err error) {
	if len(texts) == 0 {
		return nil, nil, fmt.Errorf("multimodal: SpeechT5Tokenizer.EncodeBatch: no texts")
	}
	rows := make([][]int, len(texts))
	n := 0
	for i, s := range texts {
		rows[i] = t.Encode(s)
		n = max(n, len(rows[i]))
	}
	flat, keep := make([]int64, len(rows)*n), make([]int64, len(rows)*n)
	for i, r := range rows {
		for j := range n {
			flat[i*n+j] = int64(t.PadTokenID)
			if j < len(r) {
				flat[i*n+j], keep[i*n+j] = int64(r[j]), 1
			}
		}
	}
	return core.FromSlice(flat, core.Shape{len(rows), n}, dev), core.FromSlice(keep, core.Shape{len(rows), n}, dev), nil
}

// Decode turns ids back into text as convert_tokens_to_string does:
// pieces joined, "▁" as spaces, the ends trimmed; special tokens are
// skipped when skipSpecial.
func (t *SpeechT5Tokenizer) Decode(ids []int, skipSpecial bool) string {
	var b strings.Builder
	for _, id := range ids {
		if a := t.addedByID(id); a != nil {
			if !skipSpecial {
				b.WriteString(a.content)
			}
			continue
		}
		b.WriteString(t.sp.piece(id))
	}
	return strings.TrimSpace(strings.ReplaceAll(b.String(), spaceSymbol, " "))
}

func (t *SpeechT5Tokenizer) addedByID(id int) *addedSpecial {
	for i := range t.added {
		if t.added[i].id == id {
			return &t.added[i]
		}
	}
	return nil
}
