package onnx

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/webtensor/webtensor/core"
)

// String operators. String tensors live on the host (Strings), so these
// run there, element by element; what they give that is not strings (a
// comparison's booleans, StringSplit's counts) is a tensor on the model's
// device, as any operator's output. Binary operators broadcast as the
// tensor operators do (broadcastStrings).

func init() {
	def([]string{"case_change_action", "is_case_sensitive", "locale", "stopwords"}, nil, "StringNormalizer")
	def(nil, nil, "StringConcat")
	def([]string{"delimiter", "maxsplit"}, nil, "StringSplit")
	def([]string{"pattern"}, nil, "RegexFullMatch")
	operators["RegexFullMatch"].prepare = compilePattern
}

// equalStrings is Equal on two string tensors: byte-wise equality,
// broadcast, as a bool tensor on the model's device.
func equalStrings(c *ctx) ([]Value, error) {
	a, b, ia, ib, shape, ok := c.broadcastPair()
	if !ok {
		return nil, nil
	}
	eq := make([]bool, len(ia))
	for i := range ia {
		eq[i] = a.Data[ia[i]] == b.Data[ib[i]]
	}
	return []Value{core.FromSlice(eq, shape, c.m.dev)}, nil
}

// stringConcat is StringConcat: each pair of elements joined, broadcast.
func stringConcat(c *ctx) ([]Value, error) {
	a, b, ia, ib, shape, ok := c.broadcastPair()
	if !ok {
		return nil, nil
	}
	out := make([]string, len(ia))
	for i := range ia {
		out[i] = a.Data[ia[i]] + b.Data[ib[i]]
	}
	return []Value{&Strings{Shape: shape, Data: out}}, nil
}

// broadcastPair is the node's two string inputs and, for each element of
// their broadcast shape, the element of each it reads; ok is false when
// the node has failed (recorded on c).
func (c *ctx) broadcastPair() (a, b *Strings, ia, ib []int64, shape core.Shape, ok bool) {
	if a, b, ok = c.stringPair(); !ok {
		return
	}
	ia, ib, shape, err := broadcastStrings(a, b)
	if err != nil {
		c.fail("inputs %q %v and %q %v: %v", c.n.inputs[0], a.Shape, c.n.inputs[1], b.Shape, err)
		return a, b, nil, nil, nil, false
	}
	return a, b, ia, ib, shape, true
}

// stringPair reads inputs 0 and 1, both string tensors: a string compared
// with or joined to a number is an error naming the number.
func (c *ctx) stringPair() (a, b *Strings, ok bool) {
	a, b = c.str(0), c.str(1)
	if c.err != nil {
		return nil, nil, false
	}
	return a, b, true
}

// stringSplit is StringSplit: each element split at the delimiter (or,
// without one, at runs of white space, ignoring white space at either
// end, as Python's str.split does), at most maxsplit times. Y pads every
// element's pieces with empty strings to the longest list; Z counts them.
func stringSplit(c *ctx) ([]Value, error) {
	x := c.str(0)
	if c.err != nil {
		return nil, nil
	}
	delim := c.attrString("delimiter", "")
	maxsplit := int(c.attrInt("maxsplit", -1))
	if maxsplit < 0 {
		maxsplit = -1 // every split, as Python's -1
	}
	pieces := make([][]string, len(x.Data))
	counts := make([]int64, len(x.Data))
	longest := 0
	for i, s := range x.Data {
		if delim == "" {
			pieces[i] = splitFields(s, maxsplit)
		} else {
			n := -1
			if maxsplit >= 0 {
				n = maxsplit + 1
			}
			pieces[i] = strings.SplitN(s, delim, n)
		}
		counts[i] = int64(len(pieces[i]))
		longest = max(longest, len(pieces[i]))
	}
	out := make([]string, 0, len(x.Data)*longest)
	for _, p := range pieces {
		out = append(out, p...)
		for range longest - len(p) {
			out = append(out, "")
		}
	}
	shape := append(slices.Clone(x.Shape), longest)
	z := core.FromSlice(counts, slices.Clone(x.Shape), c.m.dev)
	return []Value{&Strings{Shape: shape, Data: out}, z}, nil
}

// splitFields splits s at runs of white space, at most maxsplit times
// (-1: no limit); the last piece keeps what follows the last split.
func splitFields(s string, maxsplit int) []string {
	var out []string
	rest := strings.TrimLeftFunc(s, unicode.IsSpace)
	for rest != "" {
		if len(out) == maxsplit {
			return append(out, rest)
		}
		end := strings.IndexFunc(rest, unicode.IsSpace)
		if end < 0 {
			return append(out, rest)
		}
		out = append(out, rest[:end])
		rest = strings.TrimLeftFunc(rest[end:], unicode.IsSpace)
	}
	return out
}

// stringNormalizer is StringNormalizer as ONNX's text defines it (and
// ONNX Runtime implements it): elements equal to a stop word are
// dropped (compared case-insensitively unless is_case_sensitive), then
// the rest are lowercased, uppercased or kept. Input and output are [C]
// or [1, C]; when nothing is left the output is one empty string. (The
// reference implementation instead removes stop words inside each
// element and strips accents; the node tests agree with the text.)
func stringNormalizer(c *ctx) ([]Value, error) {
	x := c.str(0)
	if c.err != nil {
		return nil, nil
	}
	if !(len(x.Shape) == 1 || (len(x.Shape) == 2 && x.Shape[0] == 1)) {
		c.fail("input 0 (%q) has shape %v, want [C] or [1, C]", c.n.inputs[0], x.Shape)
		return nil, nil
	}
	lower, upper := strings.ToLower, strings.ToUpper
	if lang := strings.ToLower(c.attrString("locale", "")); strings.HasPrefix(lang, "tr") || strings.HasPrefix(lang, "az") {
		lower = func(s string) string { return strings.ToLowerSpecial(unicode.TurkishCase, s) }
		upper = func(s string) string { return strings.ToUpperSpecial(unicode.TurkishCase, s) }
	}
	change := func(s string) string { return s }
	switch action := c.attrString("case_change_action", "NONE"); action {
	case "LOWER":
		change = lower
	case "UPPER":
		change = upper
	case "NONE":
	default:
		c.fail("case_change_action %q: want LOWER, UPPER or NONE", action)
		return nil, nil
	}
	sensitive := c.attrInt("is_case_sensitive", 0) != 0
	var stops []string
	if a := c.n.attrs["stopwords"]; a != nil {
		for _, w := range a.GetStrings() {
			stops = append(stops, string(w))
		}
	}
	isStop := func(s string) bool {
		return slices.ContainsFunc(stops, func(w string) bool { return w == s || (!sensitive && strings.EqualFold(w, s)) })
	}
	var kept []string
	for _, s := range x.Data {
		if !isStop(s) {
			kept = append(kept, change(s))
		}
	}
	if len(kept) == 0 {
		kept = []string{""}
	}
	shape := core.Shape{len(kept)}
	if len(x.Shape) == 2 {
		shape = core.Shape{1, len(kept)}
	}
	return []Value{&Strings{Shape: shape, Data: kept}}, nil
}

// compilePattern compiles RegexFullMatch's pattern at load. Go's regexp
// is RE2, the syntax ONNX specifies; the pattern is anchored at both ends
// so that only a match of the whole element counts.
func compilePattern(n *node) error {
	a := n.attrs["pattern"]
	if a == nil {
		return fmt.Errorf("attribute \"pattern\" is required")
	}
	re, err := regexp.Compile(`^(?:` + string(a.GetS()) + `)$`)
	if err != nil {
		return fmt.Errorf("attribute \"pattern\" %q is not a valid RE2 expression: %v", a.GetS(), err)
	}
	n.prepared = re
	return nil
}

// regexFullMatch is RegexFullMatch: whether each element matches the
// pattern in full, as a bool tensor on the model's device.
func regexFullMatch(c *ctx) ([]Value, error) {
	x := c.str(0)
	if c.err != nil {
		return nil, nil
	}
	re := c.n.prepared.(*regexp.Regexp)
	match := make([]bool, len(x.Data))
	for i, s := range x.Data {
		match[i] = re.MatchString(s)
	}
	return []Value{core.FromSlice(match, slices.Clone(x.Shape), c.m.dev)}, nil
}
