package multimodal

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokenModel maps one pre-tokenized word to tokens.
type tokenModel interface {
	tokenize(word string) []token
	tokenToID(tok string) (int, bool)
	idToToken(id int) (string, bool)
	size() int
}

type token struct {
	id   int
	text string
}

// vocab is a token-to-id table and its inverse.
type vocab struct {
	ids    map[string]int
	tokens map[int]string
}

func newVocab(m map[string]int) (vocab, error) {
	v := vocab{ids: m, tokens: make(map[int]string, len(m))}
	for tok, id := range m {
		if prev, ok := v.tokens[id]; ok {
			return vocab{}, fmt.Errorf("vocab gives id %d to both %q and %q", id, prev, tok)
		}
		v.tokens[id] = tok
	}
	return v, nil
}

func (v vocab) tokenToID(tok string) (int, bool) { id, ok := v.ids[tok]; return id, ok }
func (v vocab) idToToken(id int) (string, bool)  { tok, ok := v.tokens[id]; return tok, ok }
func (v vocab) size() int                        { return len(v.ids) }

func parseModel(raw json.RawMessage) (tokenModel, error) {
	typ, err := componentType(raw)
	if err != nil {
		return nil, err
	}
	switch typ {
	case "WordPiece":
		return parseWordPiece(raw)
	case "BPE":
		return parseBPE(raw)
	case "":
		return nil, fmt.Errorf("the model is missing")
	}
	return nil, fmt.Errorf("model type %q is not supported (supported: WordPiece, BPE)", typ)
}

// wordPiece is BERT's model: each word is split greedily into the longest
// vocabulary entries from the left, pieces after the first spelt with the
// continuing-subword prefix (##); a word that cannot be split, or is
// longer than maxChars characters, is the unknown token.
type wordPiece struct {
	vocab
	unk      string
	unkID    int
	prefix   string
	maxChars int
}

func parseWordPiece(raw json.RawMessage) (*wordPiece, error) {
	var j struct {
		Vocab    map[string]int `json:"vocab"`
		Unk      string         `json:"unk_token"`
		Prefix   *string        `json:"continuing_subword_prefix"`
		MaxChars *int           `json:"max_input_chars_per_word"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("in WordPiece: %w", err)
	}
	v, err := newVocab(j.Vocab)
	if err != nil {
		return nil, fmt.Errorf("in WordPiece: %w", err)
	}
	w := &wordPiece{vocab: v, unk: j.Unk, prefix: "##", maxChars: 100}
	if j.Prefix != nil {
		w.prefix = *j.Prefix
	}
	if j.MaxChars != nil {
		w.maxChars = *j.MaxChars
	}
	id, ok := v.ids[j.Unk]
	if !ok {
		return nil, fmt.Errorf("in WordPiece: unk_token %q is not in the vocab", j.Unk)
	}
	w.unkID = id
	return w, nil
}

func (w *wordPiece) tokenize(word string) []token {
	if utf8.RuneCountInString(word) > w.maxChars {
		return []token{{w.unkID, w.unk}}
	}
	var out []token
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			sub := word[start:end]
			if start > 0 {
				sub = w.prefix + sub
			}
			if id, ok := w.ids[sub]; ok {
				out = append(out, token{id, sub})
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return []token{{w.unkID, w.unk}}
		}
		start = end
	}
	return out
}

// bpe is byte-pair encoding as GPT-2, CLIP and Whisper use it: a word
// starts as its characters (the last with end_of_word_suffix, CLIP's
// "</w>") and the pair of adjacent symbols whose merge ranks first is
// merged until no mergeable pair is left.
type bpe struct {
	vocab
	merges       map[[2]int]merge
	unk          string
	unkID        int // -1 without an unknown token: unknown characters are dropped, as the tokenizers library drops them
	prefix       string
	suffix       string
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
}

type merge struct{ rank, id int }

func parseBPE(raw json.RawMessage) (*bpe, error) {
	var j struct {
		Vocab        map[string]int    `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		Unk          *string           `json:"unk_token"`
		Prefix       *string           `json:"continuing_subword_prefix"`
		Suffix       *string           `json:"end_of_word_suffix"`
		Dropout      *float64          `json:"dropout"`
		FuseUnk      bool              `json:"fuse_unk"`
		ByteFallback bool              `json:"byte_fallback"`
		IgnoreMerges bool              `json:"ignore_merges"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("in BPE: %w", err)
	}
	if j.Dropout != nil && *j.Dropout != 0 {
		// Dropout makes encoding random; it is a training-time option.
		return nil, fmt.Errorf("in BPE: dropout %g is not supported (only null or 0)", *j.Dropout)
	}
	v, err := newVocab(j.Vocab)
	if err != nil {
		return nil, fmt.Errorf("in BPE: %w", err)
	}
	b := &bpe{vocab: v, merges: make(map[[2]int]merge, len(j.Merges)), unkID: -1,
		fuseUnk: j.FuseUnk, byteFallback: j.ByteFallback, ignoreMerges: j.IgnoreMerges}
	if j.Prefix != nil {
		b.prefix = *j.Prefix
	}
	if j.Suffix != nil {
		b.suffix = *j.Suffix
	}
	if j.Unk != nil {
		id, ok := v.ids[*j.Unk]
		if !ok {
			return nil, fmt.Errorf("in BPE: unk_token %q is not in the vocab", *j.Unk)
		}
		b.unk, b.unkID = *j.Unk, id
	}
	for rank, m := range j.Merges {
		l, r, err := parseMerge(m)
		if err != nil {
			return nil, fmt.Errorf("in BPE: merges[%d]: %w", rank, err)
		}
		lid, lok := v.ids[l]
		rid, rok := v.ids[r]
		merged := l + strings.TrimPrefix(r, b.prefix)
		mid, mok := v.ids[merged]
		if !lok || !rok || !mok {
			return nil, fmt.Errorf("in BPE: merges[%d] %q + %q: a token of the merge or its result %q is not in the vocab", rank, l, r, merged)
		}
		if _, dup := b.merges[[2]int{lid, rid}]; !dup {
			b.merges[[2]int{lid, rid}] = merge{rank, mid}
		}
	}
	return b, nil
}

// parseMerge reads a merge written as "a b" (older files) or ["a", "b"].
func parseMerge(raw json.RawMessage) (string, string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		l, r, ok := strings.Cut(s, " ")
		if !ok {
			return "", "", fmt.Errorf("merge %q has no space", s)
		}
		return l, r, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return "", "", fmt.Errorf("merge %s is neither \"a b\" nor a pair of strings", raw)
	}
	return pair[0], pair[1], nil
}

func (b *bpe) tokenize(word string) []token {
	if b.ignoreMerges {
		if id, ok := b.ids[word]; ok {
			return []token{{id, word}}
		}
	}
	syms := b.symbols(word)
	for len(syms) > 1 {
		best, bestRank := -1, 0
		for i := 0; i+1 < len(syms); i++ {
			if m, ok := b.merges[[2]int{syms[i].id, syms[i+1].id}]; ok && (best < 0 || m.rank < bestRank) {
				best, bestRank = i, m.rank
			}
		}
		if best < 0 {
			break
		}
		m := b.merges[[2]int{syms[best].id, syms[best+1].id}]
		syms[best] = token{m.id, b.tokens[m.id]}
		syms = append(syms[:best+1], syms[best+2:]...)
	}
	return syms
}

// symbols is a word's characters as vocabulary ids, before any merge.
func (b *bpe) symbols(word string) []token {
	var syms []token
	n := utf8.RuneCountInString(word)
	i := 0
	for _, r := range word {
		s := string(r)
		if i > 0 {
			s = b.prefix + s
		}
		if i == n-1 {
			s += b.suffix
		}
		i++
		if id, ok := b.ids[s]; ok {
			syms = append(syms, token{id, s})
			continue
		}
		if b.byteFallback {
			if fb, ok := b.bytes(string(r)); ok {
				syms = append(syms, fb...)
				continue
			}
		}
		if b.unkID < 0 {
			continue
		}
		if b.fuseUnk && len(syms) > 0 && syms[len(syms)-1].id == b.unkID {
			continue
		}
		syms = append(syms, token{b.unkID, b.unk})
	}
	return syms
}

// bytes spells a character as <0xXX> byte tokens (byte_fallback); all of
// them must be in the vocabulary.
func (b *bpe) bytes(s string) ([]token, bool) {
	var out []token
	for i := 0; i < len(s); i++ {
		name := fmt.Sprintf("<0x%02X>", s[i])
		id, ok := b.ids[name]
		if !ok {
			return nil, false
		}
		out = append(out, token{id, name})
	}
	return out, true
}

// byteToRune is GPT-2's bytes_to_unicode: the printable Latin-1 bytes map
// to themselves, the other 68 bytes to U+0100 onward, so every byte
// sequence is a string of printable characters BPE can merge.
var byteToRune = func() [256]rune {
	var m [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

func byteLevelEncode(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		sb.WriteRune(byteToRune[s[i]])
	}
	return sb.String()
}
