package multimodal

import (
	"fmt"
	"regexp"
	"strings"
)

// patternJSON is a Replace or Split pattern: a literal string or a regex.
type patternJSON struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func (p patternJSON) compile() (*regexp.Regexp, error) {
	switch {
	case p.String != nil && p.Regex == nil:
		return regexp.Compile(regexp.QuoteMeta(*p.String))
	case p.Regex != nil && p.String == nil:
		return compileOniguruma(*p.Regex)
	}
	return nil, fmt.Errorf("pattern must have exactly one of String and Regex")
}

// unicodeSpace is the White_Space property, what \s means to Oniguruma
// (the tokenizers library's regex engine) on UTF-8; Go's \s is ASCII only.
const unicodeSpace = `\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`

// compileOniguruma compiles a tokenizer.json regex with Oniguruma's
// meaning of the Perl classes: \s, \d and \w are Unicode classes there and
// ASCII in Go, so they are rewritten. Lookaround and backreferences do not
// exist in Go's RE2 syntax; such a pattern fails to compile and the error
// names it.
func compileOniguruma(pat string) (*regexp.Regexp, error) {
	classes := map[byte][2]string{ // inside a bracket, outside
		's': {unicodeSpace, "[" + unicodeSpace + "]"},
		'd': {`\p{Nd}`, `\p{Nd}`},
		'w': {`\p{L}\p{M}\p{Nd}\p{Pc}`, `[\p{L}\p{M}\p{Nd}\p{Pc}]`},
		'S': {"", "[^" + unicodeSpace + "]"},
		'D': {"", `\P{Nd}`},
		'W': {"", `[^\p{L}\p{M}\p{Nd}\p{Pc}]`},
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			n := pat[i+1]
			if rep, ok := classes[n]; ok {
				if inClass && rep[0] == "" {
					return nil, fmt.Errorf("regex %q: \\%c inside a bracket expression is not supported", pat, n)
				}
				if inClass {
					b.WriteString(rep[0])
				} else {
					b.WriteString(rep[1])
				}
			} else {
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' right after '[' or '[^' is a literal member.
			if i+1 < len(pat) && pat[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(pat) && pat[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == '[' && inClass && i+1 < len(pat) && pat[i+1] == ':':
			// A POSIX class such as [:alpha:] passes through whole.
			end := strings.Index(pat[i:], ":]")
			if end < 0 {
				return nil, fmt.Errorf("regex %q: unterminated POSIX class", pat)
			}
			b.WriteString(pat[i : i+end+2])
			i += end + 1
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("regex %q is not supported by Go's regexp (lookaround and backreferences are not): %w", pat, err)
	}
	return re, nil
}
