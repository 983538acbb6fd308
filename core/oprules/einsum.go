package oprules

import (
	"fmt"
	"strings"
)

// Einsum: Einstein summation over up to four operands, with torch.einsum's
// rules: letters name dims, "..." stands for the dims no letter names (they
// broadcast, right-aligned), a letter repeated within an operand takes a
// diagonal, size-1 dims broadcast against their letter's size, and without
// "->" the output is the ellipsis dims followed by the letters that occur
// exactly once, in ASCII order. Explicit outputs may leave out "..." (those
// dims are summed) but may not repeat a letter.

// maxEinsumOperands bounds the operand count so one kernel dispatch stays
// within WebGPU's default of 8 storage buffers per stage.
const maxEinsumOperands = 4

// einsumLetters is the label alphabet in ASCII order (implicit outputs are
// sorted by it).
const einsumLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// EinsumPlan is an equation resolved against concrete operand shapes.
// Labels are small integers: 0..Ellipsis-1 are the ellipsis dims (leftmost
// first), Ellipsis+i is letter einsumLetters[i].
type EinsumPlan struct {
	Operands [][]int // the label of every dim of every operand
	Output   []int   // the labels of the output dims
	Sizes    []int   // the (broadcast) size of every label; -1 if unused
	Ellipsis int     // how many dims "..." stands for
}

// NumLabels is the size of the label space (used or not).
func (p *EinsumPlan) NumLabels() int { return len(p.Sizes) }

// OutputShape is the shape of the result.
func (p *EinsumPlan) OutputShape() Shape {
	s := make(Shape, len(p.Output))
	for i, l := range p.Output {
		s[i] = p.Sizes[l]
	}
	return s
}

// ParseEinsum checks an equation against the operand shapes and resolves it.
func ParseEinsum(equation string, shapes []Shape) (*EinsumPlan, error) {
	if len(shapes) == 0 || len(shapes) > maxEinsumOperands {
		return nil, fmt.Errorf("takes 1 to %d operands, got %d", maxEinsumOperands, len(shapes))
	}
	eq := strings.ReplaceAll(equation, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(shapes) {
		return nil, fmt.Errorf("equation %q has %d operand terms, got %d operands", equation, len(terms), len(shapes))
	}
	parsed := make([]einsumTerm, len(terms))
	ellipsis := 0
	for i, t := range terms {
		pt, err := parseEinsumTerm(t, equation)
		if err != nil {
			return nil, err
		}
		rank := len(shapes[i])
		switch {
		case pt.hasEllipsis && len(pt.letters) > rank:
			return nil, fmt.Errorf("operand %d has %d dims, fewer than the %d letters of %q", i, rank, len(pt.letters), t)
		case !pt.hasEllipsis && len(pt.letters) != rank:
			return nil, fmt.Errorf("operand %d has %d dims (shape %v) but term %q names %d", i, rank, shapes[i], t, len(pt.letters))
		}
		pt.ellipsisDims = rank - len(pt.letters)
		ellipsis = max(ellipsis, pt.ellipsisDims)
		parsed[i] = pt
	}
	p := &EinsumPlan{Operands: make([][]int, len(shapes)), Sizes: make([]int, ellipsis+len(einsumLetters)), Ellipsis: ellipsis}
	for i := range p.Sizes {
		p.Sizes[i] = -1
	}
	counts := make([]int, len(p.Sizes))
	for i, pt := range parsed {
		labels := pt.labels(ellipsis)
		own := map[int]int{}
		for d, l := range labels {
			size := shapes[i][d]
			if prev, ok := own[l]; ok && prev != size {
				return nil, fmt.Errorf("subscript %s is repeated in operand %d with different sizes %d and %d", labelName(l, ellipsis), i, prev, size)
			}
			own[l] = size
			switch cur := p.Sizes[l]; {
			case cur == -1 || cur == 1:
				p.Sizes[l] = size
			case size != 1 && size != cur:
				return nil, fmt.Errorf("subscript %s has size %d in operand %d (shape %v), which does not broadcast with size %d", labelName(l, ellipsis), size, i, shapes[i], cur)
			}
			counts[l]++
		}
		p.Operands[i] = labels
	}
	if explicit {
		out, err := parseEinsumTerm(rhs, equation)
		if err != nil {
			return nil, err
		}
		for j := range len(out.letters) {
			c := out.letters[j]
			if strings.IndexByte(out.letters[:j], c) >= 0 {
				return nil, fmt.Errorf("output subscript %c appears twice in %q", c, equation)
			}
			if counts[letterLabel(c, ellipsis)] == 0 {
				return nil, fmt.Errorf("output subscript %c does not appear in the operands of %q", c, equation)
			}
		}
		out.ellipsisDims = ellipsis
		if !out.hasEllipsis {
			out.ellipsisDims = 0
		}
		p.Output = out.labels(ellipsis)
		return p, nil
	}
	for l := range ellipsis {
		p.Output = append(p.Output, l)
	}
	for l := ellipsis; l < len(counts); l++ {
		if counts[l] == 1 {
			p.Output = append(p.Output, l)
		}
	}
	return p, nil
}

// einsumTerm is one comma-separated term: its letters, in order, with the
// position of "..." among them.
type einsumTerm struct {
	letters      string
	hasEllipsis  bool
	ellipsisAt   int // letters before "..."
	ellipsisDims int
}

func parseEinsumTerm(t, equation string) (einsumTerm, error) {
	var pt einsumTerm
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case strings.HasPrefix(t[i:], "..."):
			if pt.hasEllipsis {
				return pt, fmt.Errorf("term %q of %q has more than one \"...\"", t, equation)
			}
			pt.hasEllipsis, pt.ellipsisAt = true, len(pt.letters)
			i += 2
		case strings.IndexByte(einsumLetters, c) >= 0:
			pt.letters += string(c)
		default:
			return pt, fmt.Errorf("invalid character %q in equation %q (want letters, \",\", \"->\" or \"...\")", c, equation)
		}
	}
	return pt, nil
}

// labels lists the term's dims as labels; its ellipsis dims are the
// rightmost of the plan's ellipsis labels (they broadcast right-aligned).
func (pt einsumTerm) labels(ellipsis int) []int {
	out := make([]int, 0, len(pt.letters)+pt.ellipsisDims)
	for i := 0; i <= len(pt.letters); i++ {
		if pt.hasEllipsis && i == pt.ellipsisAt {
			for e := ellipsis - pt.ellipsisDims; e < ellipsis; e++ {
				out = append(out, e)
			}
		}
		if i < len(pt.letters) {
			out = append(out, letterLabel(pt.letters[i], ellipsis))
		}
	}
	return out
}

func letterLabel(c byte, ellipsis int) int { return ellipsis + strings.IndexByte(einsumLetters, c) }

func labelName(l, ellipsis int) string {
	if l < ellipsis {
		return fmt.Sprintf("...[%d]", l)
	}
	return string(einsumLetters[l-ellipsis])
}

// LetterNames gives every used label a letter, so that derived equations
// (the backward rule's) need no ellipsis: letters keep their own, ellipsis
// labels take letters the equation does not use.
func (p *EinsumPlan) LetterNames() ([]byte, error) {
	names := make([]byte, len(p.Sizes))
	spare := []byte{}
	for i := range einsumLetters {
		if p.Sizes[p.Ellipsis+i] == -1 {
			spare = append(spare, einsumLetters[i])
		}
	}
	for l := range p.Sizes {
		switch {
		case l >= p.Ellipsis:
			names[l] = einsumLetters[l-p.Ellipsis]
		case len(spare) == 0:
			return nil, fmt.Errorf("too many labels: no letter left to name the %d ellipsis dims", p.Ellipsis)
		default:
			names[l], spare = spare[0], spare[1:]
		}
	}
	return names, nil
}

// ParseEinsumScatter checks the "K->S" equation of _einsum_scatter: K names
// the input's dims with distinct letters, S the output's, and every letter
// of K appears in S. It returns, for every output dim, the input dim it
// follows, or -1 where the output is broadcast.
func ParseEinsumScatter(equation string, in Shape, out Shape) ([]int, error) {
	k, s, ok := strings.Cut(equation, "->")
	if !ok {
		return nil, fmt.Errorf("equation %q lacks \"->\"", equation)
	}
	if len(k) != len(in) || len(s) != len(out) {
		return nil, fmt.Errorf("equation %q does not match input shape %v and output shape %v", equation, in, out)
	}
	from := make([]int, len(s))
	for d := range s {
		if strings.IndexByte(einsumLetters, s[d]) < 0 {
			return nil, fmt.Errorf("invalid output letter %q in %q", s[d], equation)
		}
		from[d] = strings.IndexByte(k, s[d])
		if from[d] >= 0 && in[from[d]] != out[d] {
			return nil, fmt.Errorf("letter %c has size %d in the input %v but %d in the output shape %v", s[d], in[from[d]], in, out[d], out)
		}
	}
	for i := range k {
		if strings.IndexByte(k[:i], k[i]) >= 0 || strings.IndexByte(s, k[i]) < 0 || strings.IndexByte(einsumLetters, k[i]) < 0 {
			return nil, fmt.Errorf("input letter %c of %q must be a distinct letter that the output names", k[i], equation)
		}
	}
	return from, nil
}
