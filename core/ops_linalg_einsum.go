package core

import (
	"fmt"
	"slices"
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

// letterNames gives every used label a letter, so that derived equations
// (the backward rule's) need no ellipsis: letters keep their own, ellipsis
// labels take letters the equation does not use.
func (p *EinsumPlan) letterNames() ([]byte, error) {
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

func einsumShapes(in []Meta) []Shape {
	shapes := make([]Shape, len(in))
	for i, m := range in {
		shapes[i] = m.Shape
	}
	return shapes
}

// einsumBackward differentiates operand i by contracting the output
// gradient with the other operands onto the labels operand i shares with
// them: dX_i = einsum(out, others... -> kept). Labels only operand i has
// were summed in the forward pass, so the gradient is broadcast along
// them, and repeated labels put it on the diagonal; _einsum_scatter does
// both. Size-1 dims that broadcast are summed back first.
func einsumBackward(g *GradCtx) ([]*Tensor, error) {
	ins := g.Inputs
	shapes := make([]Shape, len(ins))
	for i, t := range ins {
		shapes[i] = t.shape
	}
	p, err := ParseEinsum(g.Attrs.String("equation"), shapes)
	if err != nil {
		return nil, err
	}
	names, err := p.letterNames()
	if err != nil {
		return nil, err
	}
	term := func(labels []int) string {
		b := make([]byte, len(labels))
		for i, l := range labels {
			b[i] = names[l]
		}
		return string(b)
	}
	res := make([]*Tensor, len(ins))
	for i := range ins {
		if !g.Need[i] {
			continue
		}
		terms, operands := []string{term(p.Output)}, []*Tensor{g.Grads[0]}
		elsewhere := slices.Clone(p.Output)
		for j, t := range ins {
			if j != i {
				terms, operands = append(terms, term(p.Operands[j])), append(operands, t)
				elsewhere = append(elsewhere, p.Operands[j]...)
			}
		}
		var kept []int
		var keptShape Shape
		for d, l := range p.Operands[i] {
			if slices.Contains(elsewhere, l) && !slices.Contains(kept, l) {
				kept = append(kept, l)
				keptShape = append(keptShape, ins[i].shape[d])
			}
		}
		eq := strings.Join(terms, ",") + "->" + term(kept)
		gi := SumToShape(call1("einsum", Attrs{"equation": eq}, operands...), keptShape)
		if !slices.Equal(kept, p.Operands[i]) {
			gi = call1("_einsum_scatter", Attrs{"equation": term(kept) + "->" + term(p.Operands[i]), "shape": []int(ins[i].shape)}, gi)
		}
		res[i] = gi
	}
	return res, nil
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

func init() {
	MustRegister(
		&OpDef{
			Name: "einsum", Category: "linalg",
			Doc:    "Einstein summation (torch.einsum) over 1 to 4 operands, with \"...\", diagonals, broadcasting and implicit outputs.",
			Inputs: []InputSpec{{Name: "operands", DTypes: numeric, Variadic: true}}, Outputs: []string{"y"},
			Attrs:   []AttrSpec{{Name: "equation", Kind: AttrString, Required: true, Doc: "subscripts, e.g. \"bij,bjk->bik\""}},
			Promote: true, TolScale: 2,
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				p, err := ParseEinsum(a.String("equation"), einsumShapes(in))
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: p.OutputShape(), DType: in[0].DType}}, nil
			},
			Backward: einsumBackward,
			Samples: []Sample{
				{Name: "matmul_strided", Inputs: []Gen{G(F32, 3, 4).AsStrided(), G(F32, 4, 5)}, Attrs: Attrs{"equation": "ij,jk->ik"}},
				{Name: "implicit_outer", Inputs: []Gen{G(F32, 3), G(F32, 4)}, Attrs: Attrs{"equation": "i,j"}},
				{Name: "trace", Inputs: []Gen{G(F32, 4, 4)}, Attrs: Attrs{"equation": "ii"}},
				{Name: "diagonal_contract", Inputs: []Gen{G(F32, 3, 3, 2), G(F32, 2, 4)}, Attrs: Attrs{"equation": "iij,jk->ik"}},
				{Name: "attention", Inputs: []Gen{G(F32, 1, 2, 3, 4), G(F32, 1, 2, 5, 4)}, Attrs: Attrs{"equation": "bhqd,bhkd->bhqk"}},
				{Name: "ellipsis_broadcast", Inputs: []Gen{G(F32, 2, 1, 2, 3), G(F32, 3, 3, 2)}, Attrs: Attrs{"equation": "...ij,...jk->...ik"}},
				{Name: "chain3", Inputs: []Gen{G(F32, 2, 3), G(F32, 3, 4), G(F32, 4, 2)}, Attrs: Attrs{"equation": "ij,jk,kl->il"}},
				{Name: "ring4", Inputs: []Gen{G(F64, 2, 3), G(F64, 3, 2), G(F64, 2, 2), G(F64, 2, 2)}, Attrs: Attrs{"equation": "ab,bc,cd,da->"}},
				{Name: "lonely_f64", Inputs: []Gen{G(F64, 3, 4), G(F64, 2)}, Attrs: Attrs{"equation": "ij,k->i"}},
				{Name: "broadcast_label", Inputs: []Gen{G(F32, 3, 1), G(F32, 3, 4)}, Attrs: Attrs{"equation": "ij,ij->ij"}},
				{Name: "i32", Inputs: []Gen{GI(I32, -5, 5, 2, 3), GI(I32, -5, 5, 3, 2)}, Attrs: Attrs{"equation": "ij,jk"}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 3, 2)}, Attrs: Attrs{"equation": "ij,jk->ik"}},
			},
		},
		&OpDef{
			Name: "_einsum_scatter", Category: "linalg", Internal: true,
			Doc:    "Adjoint of an einsum that takes diagonals and sums dims: \"K->S\" broadcasts x along the letters only S has and puts it on the diagonal of repeated ones.",
			Inputs: []InputSpec{{Name: "x", DTypes: numeric}}, Outputs: []string{"y"},
			Attrs: []AttrSpec{{Name: "equation", Kind: AttrString, Required: true, Doc: "\"K->S\": distinct input letters K, output letters S"},
				{Name: "shape", Kind: AttrInts, Required: true, Doc: "output shape"}},
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				out := Shape(a.Ints("shape"))
				if err := out.Validate(); err != nil {
					return nil, err
				}
				if _, err := ParseEinsumScatter(a.String("equation"), in[0].Shape, out); err != nil {
					return nil, err
				}
				return []Meta{{Shape: out.Clone(), DType: in[0].DType}}, nil
			},
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				k, s, _ := strings.Cut(g.Attrs.String("equation"), "->")
				return []*Tensor{call1("einsum", Attrs{"equation": s + "->" + k}, g.Grads[0])}, nil
			},
			Samples: []Sample{
				{Name: "diag_embed", Inputs: []Gen{G(F32, 3)}, Attrs: Attrs{"equation": "i->ii", "shape": []int{3, 3}}},
				{Name: "broadcast", Inputs: []Gen{G(F64, 2, 3)}, Attrs: Attrs{"equation": "ij->jki", "shape": []int{3, 2, 2}}},
				{Name: "scalar_trace", Inputs: []Gen{G(F32)}, Attrs: Attrs{"equation": "->aa", "shape": []int{2, 2}}},
			},
		},
	)
}
