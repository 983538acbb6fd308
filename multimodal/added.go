package multimodal

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedTokenJSON is one entry of tokenizer.json's added_tokens.
type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedVocab finds added tokens ([CLS], <|endoftext|>, ...) written in the
// text before the model sees it, as the tokenizers library's
// AddedVocabulary does: tokens with normalized false are matched in the
// raw text, the others in the normalized text (against their own
// normalized content), leftmost-longest, and the text between matches is
// what the normalizer, pre-tokenizer and model tokenize.
type addedVocab struct {
	ids     map[string]int
	tokens  map[int]string
	special map[int]bool // the ids Decode leaves out when asked to skip special tokens
	raw     []addedToken
	norm    []addedToken
}

type addedToken struct {
	addedTokenJSON
	pattern string
}

// piece is a run of text, or an added token (id >= 0).
type piece struct {
	text string
	id   int
}

func newAddedVocab(list []addedTokenJSON, m tokenModel) (*addedVocab, error) {
	a := &addedVocab{ids: map[string]int{}, tokens: map[int]string{}, special: map[int]bool{}}
	for _, t := range list {
		if t.Content == "" {
			return nil, fmt.Errorf("added token %d has empty content", t.ID)
		}
		if prev, ok := a.tokens[t.ID]; ok && prev != t.Content {
			return nil, fmt.Errorf("id %d is given to both %q and %q", t.ID, prev, t.Content)
		}
		if id, ok := m.tokenToID(t.Content); ok && id != t.ID {
			return nil, fmt.Errorf("added token %q has id %d but the vocabulary gives it %d", t.Content, t.ID, id)
		}
		a.ids[t.Content], a.tokens[t.ID] = t.ID, t.Content
		if t.Special {
			a.special[t.ID] = true
		}
		tok := addedToken{addedTokenJSON: t, pattern: t.Content}
		if t.Normalized {
			a.norm = append(a.norm, tok)
		} else {
			a.raw = append(a.raw, tok)
		}
	}
	return a, nil
}

// normalizePatterns matches the normalized tokens as the normalizer
// writes them ("<|StartOfText|>" under Lowercase is found as
// "<|startoftext|>").
func (a *addedVocab) normalizePatterns(n normalizer) {
	if n == nil {
		return
	}
	for i := range a.norm {
		a.norm[i].pattern = n.normalize(a.norm[i].Content)
	}
}

// split cuts text at the added tokens of one kind: raw ones when
// normalized is false, the normalized ones when true.
func (a *addedVocab) split(text string, normalized bool) []piece {
	toks := a.raw
	if normalized {
		toks = a.norm
	}
	if len(toks) == 0 || text == "" {
		return []piece{{text: text, id: -1}}
	}
	var out []piece
	last := 0 // end of the previous match
	for pos := 0; pos < len(text); {
		best, bestLen := -1, 0
		for i, t := range toks {
			if len(t.pattern) > bestLen && strings.HasPrefix(text[pos:], t.pattern) {
				best, bestLen = i, len(t.pattern)
			}
		}
		if best < 0 || !a.wordOK(toks[best], text, pos, pos+bestLen) {
			_, size := utf8.DecodeRuneInString(text[pos:])
			pos += size
			continue
		}
		t := toks[best]
		start, end := pos, pos+bestLen
		if t.LStrip {
			for start > last {
				r, size := utf8.DecodeLastRuneInString(text[last:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= size
			}
		}
		if t.RStrip {
			for end < len(text) {
				r, size := utf8.DecodeRuneInString(text[end:])
				if !unicode.IsSpace(r) {
					break
				}
				end += size
			}
		}
		if start > last {
			out = append(out, piece{text: text[last:start], id: -1})
		}
		out = append(out, piece{text: t.Content, id: t.ID})
		last, pos = end, end
	}
	if last < len(text) {
		out = append(out, piece{text: text[last:], id: -1})
	}
	return out
}

// wordOK applies single_word: such a token counts only where it is not
// part of a longer word.
func (a *addedVocab) wordOK(t addedToken, text string, start, end int) bool {
	if !t.SingleWord {
		return true
	}
	isWord := func(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(text[:start]); isWord(r) {
			return false
		}
	}
	if end < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[end:]); isWord(r) {
			return false
		}
	}
	return true
}
