package multimodal

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites text before pre-tokenization.
type normalizer interface {
	normalize(s string) string
}

// componentType reads a component's "type"; null (no component) gives "".
func componentType(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return "", err
	}
	if head.Type == "" {
		return "", fmt.Errorf("component without a type: %s", describe(raw))
	}
	return head.Type, nil
}

func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	typ, err := componentType(raw)
	if err != nil || typ == "" {
		return nil, err
	}
	switch typ {
	case "BertNormalizer":
		var b struct {
			CleanText          bool  `json:"clean_text"`
			HandleChineseChars bool  `json:"handle_chinese_chars"`
			StripAccents       *bool `json:"strip_accents"`
			Lowercase          bool  `json:"lowercase"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("in BertNormalizer: %w", err)
		}
		n := bertNormalizer{clean: b.CleanText, chinese: b.HandleChineseChars, lower: b.Lowercase, strip: b.Lowercase}
		if b.StripAccents != nil {
			// null means "as lowercase", BERT's uncased convention.
			n.strip = *b.StripAccents
		}
		return n, nil
	case "Lowercase":
		return lowercase{}, nil
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFD":
		return unicodeForm{norm.NFD}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "StripAccents":
		return stripAccents{}, nil
	case "Strip":
		var s struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("in Strip: %w", err)
		}
		return strip(s), nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("in Prepend: %w", err)
		}
		return prepend(p.Prepend), nil
	case "Replace":
		var r struct {
			Pattern patternJSON `json:"pattern"`
			Content string      `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("in Replace: %w", err)
		}
		re, err := r.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("in Replace: %w", err)
		}
		return replace{re: re, with: r.Content}, nil
	case "Sequence":
		var s struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("in Sequence: %w", err)
		}
		seq, err := sequenceOf(s.Normalizers, parseNormalizer)
		if err != nil {
			return nil, err
		}
		return sequenceNormalizer(seq), nil
	}
	return nil, fmt.Errorf("normalizer type %q is not supported (supported: BertNormalizer, Lowercase, NFC, NFD, NFKC, NFKD, StripAccents, Strip, Prepend, Replace, Sequence)", typ)
}

// sequenceOf parses a Sequence's steps (normalizers, pre-tokenizers) with
// parse, naming the step that fails, and drops the steps that do nothing
// (parse gives nil).
func sequenceOf[T any](steps []json.RawMessage, parse func(json.RawMessage) (T, error)) ([]T, error) {
	var seq []T
	for i, r := range steps {
		step, err := parse(r)
		if err != nil {
			return nil, fmt.Errorf("in Sequence[%d]: %w", i, err)
		}
		if any(step) != nil {
			seq = append(seq, step)
		}
	}
	return seq, nil
}

type sequenceNormalizer []normalizer

func (s sequenceNormalizer) normalize(t string) string {
	for _, n := range s {
		t = n.normalize(t)
	}
	return t
}

type unicodeForm struct{ f norm.Form }

func (u unicodeForm) normalize(s string) string { return u.f.String(s) }

type lowercase struct{}

func (lowercase) normalize(s string) string { return toLower(s) }

// toLower is Rust's char::to_lowercase applied per character, as the
// tokenizers library lowercases: full case mapping, where Go's
// unicode.ToLower is the simple one. They differ only at U+0130 (İ, whose
// lowercase is i and a combining dot); per character, a final capital
// sigma becomes σ, not ς.
func toLower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

type stripAccents struct{}

// normalize removes nonspacing marks; like the tokenizers library's
// StripAccents it expects decomposed text (an NFD before it).
func (stripAccents) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

type strip struct{ Left, Right bool }

func (s strip) normalize(t string) string {
	if s.Left {
		t = strings.TrimLeftFunc(t, unicode.IsSpace)
	}
	if s.Right {
		t = strings.TrimRightFunc(t, unicode.IsSpace)
	}
	return t
}

type prepend string

func (p prepend) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

type replace struct {
	re   *regexp.Regexp
	with string
}

func (r replace) normalize(s string) string { return r.re.ReplaceAllLiteralString(s, r.with) }

// bertNormalizer is BERT's BasicTokenizer cleanup: drop control
// characters and turn whitespace into spaces, put spaces around CJK
// ideographs (so each is a word), strip accents, lowercase.
type bertNormalizer struct{ clean, chinese, strip, lower bool }

func (b bertNormalizer) normalize(s string) string {
	if b.clean {
		s = strings.Map(func(r rune) rune {
			switch {
			case r == 0 || r == 0xFFFD || isBertControl(r):
				return -1
			case r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r):
				return ' '
			}
			return r
		}, s)
	}
	if b.chinese {
		var sb strings.Builder
		for _, r := range s {
			if isCJK(r) {
				sb.WriteByte(' ')
				sb.WriteRune(r)
				sb.WriteByte(' ')
			} else {
				sb.WriteRune(r)
			}
		}
		s = sb.String()
	}
	if b.strip {
		s = stripAccents{}.normalize(norm.NFD.String(s))
	}
	if b.lower {
		s = toLower(s)
	}
	return s
}

// isBertControl is the tokenizers library's is_control: Unicode's "other"
// categories (Cc, Cf, Co, Cs and unassigned code points) except tab,
// newline and carriage return, which are whitespace to BERT.
func isBertControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if unicode.Is(unicode.C, r) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isCJK is the CJK Unified Ideographs blocks BERT splits into single
// characters (not Hangul, kana or CJK punctuation, which are written with
// spaces in their languages or are punctuation already).
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) || (r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}
