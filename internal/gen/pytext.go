package main

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python's spellings of values and text, so the generated modules read as
// a Python programmer (and ruff) would write them.

// pyRepr is repr(v) for a value decoded from the manifest's JSON as Python's
// json module would decode it (json.Number: int unless it has a fraction
// or an exponent).
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return pyString(x)
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, _ := x.Float64()
			return pyFloat(f)
		}
		return string(x)
	case []any:
		return pyTuple(x)
	}
	return pyString(jsonText(v))
}

// pyTuple is repr(tuple(xs)).
func pyTuple(xs []any) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = pyRepr(x)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// pyAsFloat is repr(float(v)): a float attribute's default, which the JSON
// may write as an integer or as "inf", "-inf" or "nan".
func pyAsFloat(v any) string {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return pyFloat(f)
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err == nil {
			return pyFloat(f)
		}
	}
	return pyRepr(v)
}

// pyFloat is Python's repr of a float: the shortest digits that read back
// the same, positional from 1e-4 to below 1e16, scientific outside.
func pyFloat(f float64) string {
	switch {
	case f != f:
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	if decpt := exp + 1; decpt > -4 && decpt <= 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	e := strconv.Itoa(exp)
	if len(e) < 2 {
		e = "0" + e
	}
	return mant + "e" + sign + e
}

// pyString is repr(s): single quotes unless s holds one and no double quote.
func pyString(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, c := range s {
		switch {
		case c == '\\' || c == rune(q):
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case !unicode.IsPrint(c):
			b.WriteString(strconv.QuoteRuneToASCII(c)[1 : len(strconv.QuoteRuneToASCII(c))-1])
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyWrap is Python's textwrap.wrap(text, width, initial_indent=first,
// subsequent_indent=rest) with its defaults: whitespace becomes spaces,
// lines break between words or after a hyphen inside a word, and a word
// longer than a line is cut.
func pyWrap(text string, width int, first, rest string) []string {
	chunks := pyChunks(text)
	var lines []string
	for len(chunks) > 0 {
		indent := first
		if len(lines) > 0 {
			indent = rest
			if strings.TrimSpace(chunks[0]) == "" {
				chunks = chunks[1:]
				continue
			}
		}
		room := width - utf8.RuneCountInString(indent)
		var line []string
		n := 0
		for len(chunks) > 0 {
			l := utf8.RuneCountInString(chunks[0])
			if n+l > room {
				break
			}
			line = append(line, chunks[0])
			n += l
			chunks = chunks[1:]
		}
		if len(chunks) > 0 && utf8.RuneCountInString(chunks[0]) > room {
			left := room - n
			if room < 1 {
				left = 1
			}
			c := []rune(chunks[0])
			end := left
			if h := lastHyphen(c[:left]); h > 0 && strings.Trim(string(c[:h]), "-") != "" {
				end = h + 1
			}
			line = append(line, string(c[:end]))
			chunks[0] = string(c[end:])
		}
		if len(line) > 0 && strings.TrimSpace(line[len(line)-1]) == "" {
			line = line[:len(line)-1]
		}
		if len(line) > 0 {
			lines = append(lines, indent+strings.Join(line, ""))
		}
	}
	return lines
}

// pyChunks splits text as textwrap does: runs of spaces, and words, a word
// split after each hyphen that has two letters (or letter-hyphen-letter)
// before it and a letter, maybe a hyphen, and a letter after it.
func pyChunks(text string) []string {
	var expanded strings.Builder // str.expandtabs(8), then whitespace to spaces
	col := 0
	for _, c := range text {
		switch {
		case c == '\t':
			n := 8 - col%8
			expanded.WriteString(strings.Repeat(" ", n))
			col += n
		case c == '\n' || c == '\r':
			expanded.WriteByte(' ')
			col = 0
		case c == '\v' || c == '\f':
			expanded.WriteByte(' ')
			col++
		default:
			expanded.WriteRune(c)
			col++
		}
	}
	text = expanded.String()
	var chunks []string
	rs := []rune(text)
	for i := 0; i < len(rs); {
		j := i
		if rs[i] == ' ' {
			for j < len(rs) && rs[j] == ' ' {
				j++
			}
			chunks = append(chunks, string(rs[i:j]))
			i = j
			continue
		}
		for j < len(rs) && rs[j] != ' ' {
			if rs[j] == '-' && j > i && hyphenBreak(rs, j) {
				j++
				break
			}
			j++
		}
		chunks = append(chunks, string(rs[i:j]))
		i = j
	}
	return chunks
}

// lastHyphen is the index of the last '-' in c, or -1.
func lastHyphen(c []rune) int {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] == '-' {
			return i
		}
	}
	return -1
}

// hyphenBreak reports whether textwrap breaks after the hyphen at rs[j] of
// a word (textwrap's lookbehind may look before the word).
func hyphenBreak(rs []rune, j int) bool {
	letter := func(k int) bool {
		return k >= 0 && k < len(rs) && (unicode.IsLetter(rs[k]) || rs[k] == '_')
	}
	before := (letter(j-1) && letter(j-2)) || (letter(j-1) && j >= 2 && rs[j-2] == '-' && letter(j-3))
	if !before {
		return false
	}
	if letter(j+1) && letter(j+2) {
		return true
	}
	return letter(j+1) && j+2 < len(rs) && rs[j+2] == '-' && letter(j+3)
}
