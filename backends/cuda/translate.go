package cuda

import (
	"embed"
	"strings"
)

//go:embed cu/*.cuh cu/*.h
var sources embed.FS

// prelude is cu/prelude.cuh, the start of every kernel's source.
var prelude = mustRead("cu/prelude.cuh")

func mustRead(name string) string {
	b, err := sources.ReadFile(name)
	if err != nil {
		panic("cuda: embedded source " + name + " missing: " + err.Error())
	}
	return string(b)
}

// builtinNames are the WGSL builtins the dialect may call that CUDA also
// defines with other overloads or rounding (round is half-to-even in WGSL):
// the prelude defines them as w_NAME.
var builtinNames = map[string]bool{
	"abs": true, "min": true, "max": true, "floor": true, "ceil": true, "round": true, "trunc": true,
	"sign": true, "sqrt": true, "exp": true, "log": true, "sin": true, "cos": true, "clamp": true,
}

// translate turns a dialect expression (backends/lower's WGSL syntax) into
// CUDA C++. Two things differ: C++ reads 1.0 as a double, so float
// literals gain an f suffix in kernels that compute in f32 (single keeps
// the arithmetic in f32, as WGSL's abstract literals would); and WGSL
// builtins map to the prelude's w_ versions. Everything else - calls,
// operators, select, bitcast<T>(v), T(v) conversions, pf/pi/pu - is
// spelled alike.
func translate(expr string, single bool) string {
	var b strings.Builder
	b.Grow(len(expr) + 16)
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case isIdentStart(c):
			j := i + 1
			for j < len(expr) && isIdentPart(expr[j]) {
				j++
			}
			word := expr[i:j]
			if builtinNames[word] && nextNonSpace(expr, j) == '(' {
				b.WriteString("w_")
			}
			b.WriteString(word)
			i = j
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			j := scanNumber(expr, i)
			b.WriteString(literal(expr[i:j], single))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// scanNumber returns the end of the numeric literal starting at i.
func scanNumber(s string, i int) int {
	j := i
	if strings.HasPrefix(s[i:], "0x") || strings.HasPrefix(s[i:], "0X") {
		j += 2
		for j < len(s) && isHex(s[j]) {
			j++
		}
	} else {
		for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
			j++
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && isDigit(s[k]) {
				for j = k; j < len(s) && isDigit(s[j]); j++ {
				}
			}
		}
	}
	if j < len(s) && strings.IndexByte("uifh", s[j]) >= 0 {
		j++
	}
	return j
}

// literal rewrites one WGSL literal: 1u stays, 1i becomes 1, and a float
// literal is single precision where the kernel computes in f32.
func literal(lit string, single bool) string {
	hex := strings.HasPrefix(lit, "0x") || strings.HasPrefix(lit, "0X")
	last := lit[len(lit)-1]
	switch {
	case last == 'i':
		return lit[:len(lit)-1]
	case last == 'u':
		return lit
	case last == 'f' || last == 'h':
		body := lit[:len(lit)-1]
		if single {
			return body + "f"
		}
		return body
	}
	isFloat := !hex && strings.ContainsAny(lit, ".eE")
	if isFloat && single {
		return lit + "f"
	}
	return lit
}

func nextNonSpace(s string, i int) byte {
	for ; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\t' {
			return s[i]
		}
	}
	return 0
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isHex(c byte) bool        { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
