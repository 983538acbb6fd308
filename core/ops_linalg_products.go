package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// The linalg extension's products and diagonal views: diagonal (a view),
// matrix_trace (the standard's linalg.trace; the name trace is the
// SDKs' graph capture), tensordot, vecdot and cross, all composed of other
// ops or views, so no backend needs a kernel for them.

// diagonalView is the offset-th diagonal of the last two dims: row r0 + i,
// column c0 + i for i < r, one stride step of (row stride + column stride).
func diagonalView(t *Tensor, a Attrs) (ViewSpec, bool, error) {
	if t.Rank() < 2 {
		return ViewSpec{}, false, fmt.Errorf("need a matrix or a stack of matrices (rank >= 2), got shape %v", t.shape)
	}
	rk := t.Rank()
	m, n := t.shape[rk-2], t.shape[rk-1]
	r0, c0, r := diagonalSpan(m, n, a.Int("offset"))
	rs, cs := t.strides[rk-2], t.strides[rk-1]
	off := t.offset
	if r > 0 {
		off += r0*rs + c0*cs
	}
	shape := append(t.shape[:rk-2].Clone(), r)
	st := append(append([]int{}, t.strides[:rk-2]...), rs+cs)
	return ViewSpec{Shape: shape, Strides: st, Offset: off}, true, nil
}

// diagonalSpan is where the offset-th diagonal of an m x n matrix starts
// (row r0, column c0) and how long it is; an offset past the matrix (even
// one whose negation overflows) gives an empty diagonal.
func diagonalSpan(m, n, k int) (r0, c0, r int) {
	if k >= n || k <= -m {
		return 0, 0, 0
	}
	r0, c0 = max(-k, 0), max(k, 0)
	return r0, c0, min(m-r0, n-c0)
}

// diagonalBackward puts the gradient back on the diagonal it was read from,
// zeros elsewhere: diag_embed, then padded out to the input's shape.
func diagonalBackward(g *GradCtx) ([]*Tensor, error) {
	x, gr := g.Inputs[0], g.Grads[0]
	rk := x.Rank()
	m, n := x.shape[rk-2], x.shape[rk-1]
	r0, c0, r := diagonalSpan(m, n, g.Attrs.Int("offset"))
	if r == 0 {
		return []*Tensor{ZerosLike(x)}, nil
	}
	pads := []int{c0, n - c0 - r, r0, m - r0 - r}
	return []*Tensor{call1("pad", Attrs{"pads": pads}, diagEmbed(gr))}, nil
}

// tensordotPlan is which axes tensordot contracts: axes_a[i] of a with
// axes_b[i] of b; the rest of a's axes, then the rest of b's, make the result.
type tensordotPlan struct {
	axA, axB, freeA, freeB []int
	out                    Shape
	inner                  int
}

func planTensordot(a, b Shape, at Attrs) (tensordotPlan, error) {
	var p tensordotPlan
	ra, rb := len(a), len(b)
	switch {
	case at.Has("axes_a") || at.Has("axes_b"):
		if !at.Has("axes_a") || !at.Has("axes_b") {
			return p, fmt.Errorf("axes_a and axes_b go together; got only one of them")
		}
		p.axA, p.axB = append([]int{}, at.Ints("axes_a")...), append([]int{}, at.Ints("axes_b")...)
		if len(p.axA) != len(p.axB) {
			return p, fmt.Errorf("%d axes of a (%v) against %d of b (%v)", len(p.axA), p.axA, len(p.axB), p.axB)
		}
	default:
		n := at.Int("axes")
		if n < 0 || n > min(ra, rb) {
			return p, fmt.Errorf("axes=%d contracts the last axes of a (rank %d) with the first of b (rank %d): need 0..%d", n, ra, rb, min(ra, rb))
		}
		for i := 0; i < n; i++ {
			p.axA, p.axB = append(p.axA, ra-n+i), append(p.axB, i)
		}
	}
	usedA, usedB := make([]bool, ra), make([]bool, rb)
	p.inner = 1
	for i := range p.axA {
		x, err := oprules.NormAxis(p.axA[i], ra)
		if err != nil {
			return p, fmt.Errorf("axes_a: %w", err)
		}
		y, err := oprules.NormAxis(p.axB[i], rb)
		if err != nil {
			return p, fmt.Errorf("axes_b: %w", err)
		}
		if usedA[x] || usedB[y] {
			return p, fmt.Errorf("an axis is contracted twice (axes_a %v, axes_b %v)", p.axA, p.axB)
		}
		if a[x] != b[y] {
			return p, fmt.Errorf("axis %d of a has %d elements but axis %d of b has %d (shapes %v and %v)", x, a[x], y, b[y], a, b)
		}
		usedA[x], usedB[y] = true, true
		p.axA[i], p.axB[i] = x, y
		p.inner *= a[x]
	}
	for i, u := range usedA {
		if !u {
			p.freeA = append(p.freeA, i)
			p.out = append(p.out, a[i])
		}
	}
	for i, u := range usedB {
		if !u {
			p.freeB = append(p.freeB, i)
			p.out = append(p.out, b[i])
		}
	}
	return p, nil
}

// composeTensordot is one matmul: a permuted to (free, contracted) and
// flattened to a matrix, times b as (contracted, free).
func composeTensordot(in []*Tensor, at Attrs) ([]*Tensor, error) {
	a, b := in[0], in[1]
	p, err := planTensordot(a.shape, b.shape, at)
	if err != nil {
		return nil, err
	}
	fa, fb := 1, 1
	for _, i := range p.freeA {
		fa *= a.shape[i]
	}
	for _, i := range p.freeB {
		fb *= b.shape[i]
	}
	am := call1("permute", Attrs{"dims": append(append([]int{}, p.freeA...), p.axA...)}, a).Reshape(Shape{fa, p.inner})
	bm := call1("permute", Attrs{"dims": append(append([]int{}, p.axB...), p.freeB...)}, b).Reshape(Shape{p.inner, fb})
	y := mm(am, bm).Reshape(p.out)
	return []*Tensor{y}, y.Err()
}

// planVecdot is vecdot's result shape: the operands broadcast, then the
// axis (counted on the broadcast shape; both operands must have it at full
// size) is summed away.
func planVecdot(a, b Shape, axis int) (Shape, int, error) {
	bs, err := BroadcastShapes(a, b)
	if err != nil {
		return nil, 0, fmt.Errorf("shapes %v and %v do not broadcast: %w", a, b, err)
	}
	ax, err := oprules.NormAxis(axis, len(bs))
	if err != nil {
		return nil, 0, err
	}
	from := ax - len(bs) // the axis counted from the end, the same for both operands
	if -from > len(a) || -from > len(b) || a[len(a)+from] != b[len(b)+from] {
		return nil, 0, fmt.Errorf("axis %d must have the same size in both operands (shapes %v and %v)", axis, a, b)
	}
	out := append(bs[:ax].Clone(), bs[ax+1:]...)
	return out, ax, nil
}

// crossAxis checks cross's axis: negative (counted from the end, as the
// standard says), present in both operands with 3 elements.
func crossAxis(a, b Shape, axis int) error {
	if axis >= 0 || -axis > min(len(a), len(b)) {
		return fmt.Errorf("axis %d: need -%d..-1 (counted from the last dim of both operands, shapes %v and %v)", axis, min(len(a), len(b)), a, b)
	}
	if a[len(a)+axis] != 3 || b[len(b)+axis] != 3 {
		return fmt.Errorf("axis %d must have 3 elements in both operands, got shapes %v and %v", axis, a, b)
	}
	return nil
}

func roll1(x *Tensor, shift, axis int) *Tensor {
	return call1("roll", Attrs{"shifts": []int{shift}, "axes": []int{axis}}, x)
}

func init() {
	MustRegister(
		&OpDef{
			Name: "diagonal", Category: "linalg", Doc: "The offset-th diagonal of the last two dims (a view): offset > 0 above the main one, < 0 below.",
			Inputs: []InputSpec{{Name: "x"}}, Outputs: []string{"y"},
			Attrs:    []AttrSpec{{Name: "offset", Kind: AttrInt, Default: 0, Doc: "which diagonal"}},
			View:     diagonalView,
			Backward: diagonalBackward,
			Samples: []Sample{
				{Name: "main", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "above", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"offset": 1}},
				{Name: "below_batched", Inputs: []Gen{G(F32, 2, 4, 3)}, Attrs: Attrs{"offset": -2}},
				{Name: "strided_f64", Inputs: []Gen{G(F64, 3, 4).AsStrided()}},
				{Name: "past_the_edge", Inputs: []Gen{G(F32, 3, 3)}, Attrs: Attrs{"offset": 4}},
				{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 3, 3)}},
			},
		},
		&OpDef{
			Name: "matrix_trace", Category: "linalg", Doc: "Sum of the offset-th diagonal of the last two dims (the array API's linalg.trace); integers sum as i64.",
			Inputs: []InputSpec{{Name: "x", DTypes: numeric}}, Outputs: []string{"y"},
			Attrs: []AttrSpec{{Name: "offset", Kind: AttrInt, Default: 0, Doc: "which diagonal: > 0 above the main one, < 0 below"}},
			Infer: func(in []Meta, _ Attrs) ([]Meta, error) {
				d, err := oprules.PlanDecomp(in[0].Shape, false)
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: d.Lead.Clone(), DType: accumulateDType(in[0].DType)}}, nil
			},
			Compose: func(in []*Tensor, a Attrs) ([]*Tensor, error) {
				y := call1("sum", Attrs{"axes": []int{-1}}, call1("diagonal", a, in[0]))
				return []*Tensor{y}, y.Err()
			},
			Samples: []Sample{
				{Name: "main", Inputs: []Gen{G(F32, 4, 4)}},
				{Name: "above_wide", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"offset": 2}},
				{Name: "below_batched", Inputs: []Gen{G(F32, 2, 3, 3)}, Attrs: Attrs{"offset": -1}},
				{Name: "f64_strided", Inputs: []Gen{G(F64, 3, 3).AsStrided()}},
				{Name: "past_the_edge", Inputs: []Gen{G(F32, 2, 2)}, Attrs: Attrs{"offset": -3}},
				{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 3, 3)}},
			},
		},
		&OpDef{
			Name: "tensordot", Category: "linalg",
			Doc:    "Sum of products over paired axes (one matmul): the last `axes` of a with the first of b, or axes_a[i] of a with axes_b[i] of b.",
			Inputs: []InputSpec{{Name: "a", DTypes: numeric}, {Name: "b", DTypes: numeric}}, Outputs: []string{"y"},
			Attrs: []AttrSpec{
				{Name: "axes", Kind: AttrInt, Default: 2, Doc: "how many trailing axes of a meet as many leading axes of b"},
				{Name: "axes_a", Kind: AttrInts, Doc: "a's contracted axes, paired with axes_b; overrides axes"},
				{Name: "axes_b", Kind: AttrInts, Doc: "b's contracted axes, in the order of axes_a"},
			},
			Promote: true, TolScale: 2, Compose: composeTensordot,
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				p, err := planTensordot(in[0].Shape, in[1].Shape, a)
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: p.out, DType: in[0].DType}}, nil
			},
			Samples: []Sample{
				{Name: "default", Inputs: []Gen{G(F32, 2, 3, 4), G(F32, 3, 4, 5)}},
				{Name: "one_axis", Inputs: []Gen{G(F32, 3, 4), G(F32, 4, 2)}, Attrs: Attrs{"axes": 1}},
				{Name: "outer", Inputs: []Gen{G(F32, 2, 3), G(F32, 2)}, Attrs: Attrs{"axes": 0}},
				{Name: "pairs", Inputs: []Gen{G(F32, 3, 4, 2), G(F32, 2, 5, 3)}, Attrs: Attrs{"axes_a": []int{0, -1}, "axes_b": []int{2, 0}}},
				{Name: "f64_strided", Inputs: []Gen{G(F64, 4, 3).AsStrided(), G(F64, 4, 3)}, Attrs: Attrs{"axes_a": []int{0}, "axes_b": []int{0}}},
				{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 2, 3), GI(I32, -9, 9, 3, 2)}, Attrs: Attrs{"axes": 1}},
			},
		},
		&OpDef{
			Name: "vecdot", Category: "linalg", Doc: "Dot products along axis of broadcast operands (the axis must have the same size in both); keeps the promoted dtype.",
			Inputs: []InputSpec{{Name: "x1", DTypes: numeric}, {Name: "x2", DTypes: numeric}}, Outputs: []string{"y"},
			Attrs:   []AttrSpec{{Name: "axis", Kind: AttrInt, Default: -1, Doc: "the axis of the vectors"}},
			Promote: true, TolScale: 2,
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				out, _, err := planVecdot(in[0].Shape, in[1].Shape, a.Int("axis"))
				if err != nil {
					return nil, err
				}
				return []Meta{{Shape: out, DType: in[0].DType}}, nil
			},
			Compose: func(in []*Tensor, a Attrs) ([]*Tensor, error) {
				_, ax, err := planVecdot(in[0].shape, in[1].shape, a.Int("axis"))
				if err != nil {
					return nil, err
				}
				prod := ew("mul", in[0], in[1])
				if d := in[0].dtype; d == U8 || d == U16 {
					// sum takes these as u64, which WebGPU does not hold; u32
					// wraps alike modulo the result's 8 or 16 bits.
					prod = prod.Cast(U32)
				}
				y := call1("sum", Attrs{"axes": []int{ax}}, prod).Cast(in[0].dtype)
				return []*Tensor{y}, y.Err()
			},
			Samples: []Sample{
				{Name: "rows", Inputs: []Gen{G(F32, 3, 4), G(F32, 3, 4)}},
				{Name: "broadcast", Inputs: []Gen{G(F32, 2, 1, 4), G(F32, 3, 4)}},
				{Name: "axis0", Inputs: []Gen{G(F32, 4, 3), G(F32, 4, 3)}, Attrs: Attrs{"axis": 0}},
				{Name: "f64_strided", Inputs: []Gen{G(F64, 3, 5).AsStrided(), G(F64, 5)}},
				{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 2, 3), GI(I32, -9, 9, 2, 3)}},
			},
		},
		&OpDef{
			Name: "cross", Category: "linalg", Doc: "Cross product of 3-element vectors along axis (negative, counted from the end) of broadcast operands.",
			Inputs: []InputSpec{{Name: "x1", DTypes: numeric}, {Name: "x2", DTypes: numeric}}, Outputs: []string{"y"},
			Attrs:   []AttrSpec{{Name: "axis", Kind: AttrInt, Default: -1, Doc: "the axis of the vectors: -N..-1"}},
			Promote: true,
			Infer: func(in []Meta, a Attrs) ([]Meta, error) {
				if err := crossAxis(in[0].Shape, in[1].Shape, a.Int("axis")); err != nil {
					return nil, err
				}
				out, err := BroadcastShapes(in[0].Shape, in[1].Shape)
				if err != nil {
					return nil, fmt.Errorf("shapes %v and %v do not broadcast: %w", in[0].Shape, in[1].Shape, err)
				}
				return []Meta{{Shape: out, DType: in[0].DType}}, nil
			},
			// y_i = a_(i+1) b_(i+2) - a_(i+2) b_(i+1), indices mod 3: rolls.
			Compose: func(in []*Tensor, a Attrs) ([]*Tensor, error) {
				x, y, ax := in[0], in[1], a.Int("axis")
				out := ew("sub", ew("mul", roll1(x, -1, ax), roll1(y, -2, ax)), ew("mul", roll1(x, -2, ax), roll1(y, -1, ax)))
				return []*Tensor{out}, out.Err()
			},
			Samples: []Sample{
				{Name: "vectors", Inputs: []Gen{G(F32, 3), G(F32, 3)}},
				{Name: "rows", Inputs: []Gen{G(F32, 4, 3), G(F32, 4, 3)}},
				{Name: "broadcast", Inputs: []Gen{G(F32, 2, 1, 3), G(F32, 5, 3)}},
				{Name: "axis_minus2", Inputs: []Gen{G(F32, 3, 2), G(F32, 3, 2)}, Attrs: Attrs{"axis": -2}},
				{Name: "f64_strided", Inputs: []Gen{G(F64, 2, 3).AsStrided(), G(F64, 3)}},
				{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 2, 3), GI(I32, -9, 9, 2, 3)}},
			},
		},
	)
}
