package multimodal

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// preTokenizer cuts text into the words the model tokenizes one by one.
// It refines a list of pieces, as each pre-tokenizer of a Sequence splits
// every piece its predecessor left; empty pieces are dropped, as the
// tokenizers library drops them.
type preTokenizer interface {
	pre(pieces []string) []string
}

// splitEach applies f to every non-empty piece.
func splitEach(pieces []string, f func(string) []string) []string {
	var out []string
	for _, p := range pieces {
		if p == "" {
			continue
		}
		for _, q := range f(p) {
			if q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

func parsePreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	typ, err := componentType(raw)
	if err != nil || typ == "" {
		return nil, err
	}
	switch typ {
	case "BertPreTokenizer":
		return bertPre{}, nil
	case "WhitespaceSplit":
		return whitespaceSplit{}, nil
	case "Whitespace":
		return regexSplit{re: regexp.MustCompile(`[\p{L}\p{M}\p{Nd}\p{Pc}]+|[^\p{L}\p{M}\p{Nd}\p{Pc}` + unicodeSpace + `]+`),
			behavior: "Removed", invert: true}, nil
	case "ByteLevel":
		b := byteLevelPre{addPrefixSpace: true, useRegex: true}
		var j struct {
			AddPrefixSpace *bool `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("in ByteLevel: %w", err)
		}
		if j.AddPrefixSpace != nil {
			b.addPrefixSpace = *j.AddPrefixSpace
		}
		if j.UseRegex != nil {
			b.useRegex = *j.UseRegex
		}
		return b, nil
	case "Split":
		var j struct {
			Pattern  patternJSON `json:"pattern"`
			Behavior string      `json:"behavior"`
			Invert   bool        `json:"invert"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("in Split: %w", err)
		}
		re, err := j.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("in Split: %w", err)
		}
		switch j.Behavior {
		case "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous":
		default:
			return nil, fmt.Errorf("in Split: behavior %q is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous", j.Behavior)
		}
		return regexSplit{re: re, behavior: j.Behavior, invert: j.Invert}, nil
	case "Sequence":
		var s struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("in Sequence: %w", err)
		}
		seq, err := sequenceOf(s.PreTokenizers, parsePreTokenizer)
		if err != nil {
			return nil, err
		}
		return sequencePre(seq), nil
	}
	return nil, fmt.Errorf("pre-tokenizer type %q is not supported (supported: BertPreTokenizer, Whitespace, WhitespaceSplit, ByteLevel, Split, Sequence)", typ)
}

type sequencePre []preTokenizer

func (s sequencePre) pre(pieces []string) []string {
	for _, p := range s {
		pieces = p.pre(pieces)
	}
	return pieces
}

type whitespaceSplit struct{}

func (whitespaceSplit) pre(pieces []string) []string {
	return splitEach(pieces, func(s string) []string { return strings.FieldsFunc(s, unicode.IsSpace) })
}

// bertPre is BERT's pre-tokenizer: words end at whitespace (dropped) and
// every punctuation character is a word of its own.
type bertPre struct{}

func (bertPre) pre(pieces []string) []string {
	return splitEach(pieces, func(s string) []string {
		var out []string
		start := -1
		for i, r := range s {
			switch {
			case unicode.IsSpace(r):
				if start >= 0 {
					out = append(out, s[start:i])
				}
				start = -1
			case isBertPunct(r):
				if start >= 0 {
					out = append(out, s[start:i])
				}
				out = append(out, string(r))
				start = -1
			default:
				if start < 0 {
					start = i
				}
			}
		}
		if start >= 0 {
			out = append(out, s[start:])
		}
		return out
	})
}

// isBertPunct counts the ASCII symbols ($, +, ^, ...) as punctuation, as
// BERT does, besides Unicode's P categories.
func isBertPunct(r rune) bool {
	if r < 128 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}

// regexSplit is the Split pre-tokenizer: the pattern's matches and the
// text between them become pieces, invert swaps which are the "matches",
// and behavior says what happens to the matches.
type regexSplit struct {
	re       *regexp.Regexp
	behavior string
	invert   bool
}

type span struct {
	start, end int
	match      bool
}

func (r regexSplit) pre(pieces []string) []string {
	return splitEach(pieces, r.split)
}

func (r regexSplit) split(s string) []string {
	var spans []span
	last := 0
	for _, m := range r.re.FindAllStringIndex(s, -1) {
		if m[0] == m[1] {
			continue
		}
		if m[0] > last {
			spans = append(spans, span{last, m[0], r.invert})
		}
		spans = append(spans, span{m[0], m[1], !r.invert})
		last = m[1]
	}
	if last < len(s) {
		spans = append(spans, span{last, len(s), r.invert})
	}
	spans = applyBehavior(spans, r.behavior)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = s[sp.start:sp.end]
	}
	return out
}

// applyBehavior is the tokenizers library's SplitDelimiterBehavior.
func applyBehavior(spans []span, behavior string) []span {
	var out []span
	prevMatch := false
	switch behavior {
	case "Removed":
		for _, sp := range spans {
			if !sp.match {
				out = append(out, sp)
			}
		}
		return out
	case "Isolated":
		return spans
	case "MergedWithPrevious":
		for _, sp := range spans {
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
		return out
	case "MergedWithNext":
		for i := len(spans) - 1; i >= 0; i-- {
			sp := spans[i]
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = sp.start
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	default: // Contiguous
		for i, sp := range spans {
			if i > 0 && sp.match == prevMatch {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
		return out
	}
}

// byteLevelPre is GPT-2's pre-tokenizer: an optional leading space (so a
// first word is spelt like one after a space), GPT-2's word regex, and
// every byte written as the printable character bytesToUnicode gives it.
type byteLevelPre struct{ addPrefixSpace, useRegex bool }

func (b byteLevelPre) pre(pieces []string) []string {
	return splitEach(pieces, func(s string) []string {
		if b.addPrefixSpace && !strings.HasPrefix(s, " ") {
			s = " " + s
		}
		words := []string{s}
		if b.useRegex {
			words = gpt2Split(s)
		}
		for i, w := range words {
			words[i] = byteLevelEncode(w)
		}
		return words
	})
}

// gpt2Split is GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// written out by hand: Go's regexp has no lookahead, and (?!\S) is what
// leaves a run of spaces' last space to the word after it.
func gpt2Split(s string) []string {
	rs := []rune(s)
	var out []string
	for i := 0; i < len(rs); {
		n := gpt2Match(rs[i:])
		out = append(out, string(rs[i:i+n]))
		i += n
	}
	return out
}

// gpt2Match is the length of the pattern's match at the start of rs
// (never 0: every character matches some alternative).
func gpt2Match(rs []rune) int {
	if rs[0] == '\'' && len(rs) > 1 {
		for _, c := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
			if strings.HasPrefix(string(rs[1:min(len(rs), 3)]), c) {
				return 1 + len(c)
			}
		}
	}
	isSpace := func(r rune) bool { return strings.ContainsRune(spaceRunes, r) }
	isLetter := unicode.IsLetter
	isNumber := unicode.IsNumber
	isOther := func(r rune) bool { return !isSpace(r) && !isLetter(r) && !isNumber(r) }
	for _, class := range []func(rune) bool{isLetter, isNumber, isOther} {
		i := 0
		if rs[0] == ' ' {
			i = 1
		}
		j := i
		for j < len(rs) && class(rs[j]) {
			j++
		}
		if j > i {
			return j
		}
	}
	// \s+(?!\S): the whole run at the end of the text, else all of it
	// but the last space (when that leaves at least one); then \s+.
	j := 0
	for j < len(rs) && isSpace(rs[j]) {
		j++
	}
	if j == len(rs) || j == 1 {
		return j
	}
	return j - 1
}

// spaceRunes lists unicodeSpace's characters, the \s of the pattern.
const spaceRunes = "\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
