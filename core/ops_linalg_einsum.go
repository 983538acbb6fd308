package core

import (
	"slices"
	"strings"

	"github.com/webtensor/webtensor/core/oprules"
)

// Einsum: Einstein summation over up to four operands, with torch.einsum's
// rules: letters name dims, "..." stands for the dims no letter names (they
// broadcast, right-aligned), a letter repeated within an operand takes a
// diagonal, size-1 dims broadcast against their letter's size, and without
// "->" the output is the ellipsis dims followed by the letters that occur
// exactly once, in ASCII order. Explicit outputs may leave out "..." (those
// dims are summed) but may not repeat a letter.

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
	p, err := oprules.ParseEinsum(g.Attrs.String("equation"), shapes)
	if err != nil {
		return nil, err
	}
	names, err := p.LetterNames()
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

func init() {
	MustRegister(
		&OpDef{
			Name: "einsum", Category: "linalg",
			Doc:    "Einstein summation (torch.einsum) over 1 to 4 operands, with \"...\", diagonals, broadcasting and implicit outputs.",
			Inputs: []InputSpec{{Name: "operands", DTypes: numeric, Variadic: true}}, Outputs: []string{"y"},
			Attrs:   []AttrSpec{{Name: "equation", Kind: AttrString, Required: true, Doc: "subscripts, e.g. \"bij,bjk->bik\""}},
			Promote: true, TolScale: 2,
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				p, err := oprules.ParseEinsum(a.String("equation"), einsumShapes(in))
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
				if _, err := oprules.ParseEinsumScatter(a.String("equation"), in[0].Shape, out); err != nil {
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
