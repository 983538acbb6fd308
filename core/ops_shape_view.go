package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/oprules"
)

// View ops: no kernel runs, the output shares the input's storage. Their
// backward rules are other ops, so gradients flow through views.

// resolveShape fills one -1 and checks the element count.
func resolveShape(from Shape, to []int) (Shape, error) {
	out := Shape(append([]int{}, to...))
	neg, known := -1, 1
	for i, d := range out {
		switch {
		case d == -1 && neg >= 0:
			return nil, fmt.Errorf("only one dimension may be -1, got %v", to)
		case d == -1:
			neg = i
		case d < 0:
			return nil, fmt.Errorf("invalid dimension %d in %v", d, to)
		default:
			known *= d
		}
	}
	n := from.Numel()
	if neg >= 0 {
		if known == 0 || n%known != 0 {
			return nil, fmt.Errorf("cannot reshape %v (%d elements) into %v", from, n, to)
		}
		out[neg] = n / known
	}
	if out.Numel() != n {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) into %v (%d elements)", from, n, to, out.Numel())
	}
	return out, nil
}

func viewBack(fn func(g *Tensor, x *Tensor, a Attrs) *Tensor) func(*GradCtx) ([]*Tensor, error) {
	return func(c *GradCtx) ([]*Tensor, error) {
		return []*Tensor{fn(c.Grads[0], c.Inputs[0], c.Attrs)}, nil
	}
}

func reshapeBack(g, x *Tensor, _ Attrs) *Tensor { return g.Reshape(x.shape) }

func init() {
	MustRegister(
		&OpDef{
			Name: "reshape", Category: "shape", Doc: "View with a new shape (one dim may be -1); copies only when strides forbid a view.",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "shape", Kind: AttrInts, Required: true, Doc: "new shape"}},
			View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
				s, err := resolveShape(t.shape, a.Ints("shape"))
				if err != nil {
					return ViewSpec{}, false, err
				}
				st, ok := oprules.ReshapeStrides(t.shape, t.strides, s)
				return ViewSpec{Shape: s, Strides: st, Offset: t.offset}, ok, nil
			},
			Backward: viewBack(reshapeBack),
			Samples: []Sample{
				{Name: "merge", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"shape": []int{6, 4}}},
				{Name: "infer", Inputs: []Gen{G(F32, 2, 6)}, Attrs: Attrs{"shape": []int{-1, 3}}},
				{Name: "strided_copy", Inputs: []Gen{G(F32, 3, 4).AsStrided()}, Attrs: Attrs{"shape": []int{12}}},
				{Name: "to_scalar", Inputs: []Gen{G(F32, 1, 1)}, Attrs: Attrs{"shape": []int{}}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 4)}, Attrs: Attrs{"shape": []int{4, 0}}},
			},
		},
		&OpDef{
			Name: "flatten", Category: "shape", Doc: "Merge dims start_dim..end_dim into one.",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs: []AttrSpec{{Name: "start_dim", Kind: AttrInt, Default: 0, Doc: "first dim to merge"},
				{Name: "end_dim", Kind: AttrInt, Default: -1, Doc: "last dim to merge"}},
			View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
				r := max(t.Rank(), 1)
				s, err := NormAxis(a.Int("start_dim"), r)
				if err != nil {
					return ViewSpec{}, false, err
				}
				e, err := NormAxis(a.Int("end_dim"), r)
				if err != nil {
					return ViewSpec{}, false, err
				}
				if s > e {
					return ViewSpec{}, false, fmt.Errorf("start_dim %d is after end_dim %d", s, e)
				}
				shape := Shape{}
				if t.Rank() == 0 {
					shape = Shape{1}
				} else {
					shape = append(shape, t.shape[:s]...)
					shape = append(shape, t.shape[s:e+1].Numel())
					shape = append(shape, t.shape[e+1:]...)
				}
				st, ok := oprules.ReshapeStrides(t.shape, t.strides, shape)
				return ViewSpec{Shape: shape, Strides: st, Offset: t.offset}, ok, nil
			},
			Backward: viewBack(reshapeBack),
			Samples: []Sample{
				{Name: "all", Inputs: []Gen{G(F32, 2, 3, 4)}},
				{Name: "middle", Inputs: []Gen{G(F32, 2, 3, 4, 5)}, Attrs: Attrs{"start_dim": 1, "end_dim": 2}},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 4).AsStrided()}},
			},
		},
		&OpDef{
			Name: "expand", Category: "shape", Doc: "Broadcast view to a larger shape (-1 keeps a dim); no copy.",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "shape", Kind: AttrInts, Required: true, Doc: "target shape"}},
			View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
				want := a.Ints("shape")
				if len(want) < t.Rank() {
					return ViewSpec{}, false, fmt.Errorf("cannot expand %v to fewer dims %v", t.shape, want)
				}
				off := len(want) - t.Rank()
				shape, st := make(Shape, len(want)), make([]int, len(want))
				for i, w := range want {
					if i < off {
						if w < 0 {
							return ViewSpec{}, false, fmt.Errorf("-1 not allowed in new leading dim %d of %v", i, want)
						}
						shape[i] = w
						continue
					}
					d := t.shape[i-off]
					switch {
					case w == -1 || w == d:
						shape[i], st[i] = d, t.strides[i-off]
					case d == 1 && w >= 0:
						shape[i] = w
					default:
						return ViewSpec{}, false, fmt.Errorf("cannot expand %v to %v: dim %d is %d, not 1", t.shape, want, i-off, d)
					}
				}
				// A view holds no memory, but its element count must still
				// be an int: [2^36, 2^30] would wrap to 0 elements.
				if err := shape.Validate(); err != nil {
					return ViewSpec{}, false, err
				}
				return ViewSpec{Shape: shape, Strides: st, Offset: t.offset}, true, nil
			},
			Backward: viewBack(func(g, x *Tensor, _ Attrs) *Tensor { return SumToShape(g, x.shape) }),
			Samples: []Sample{
				{Name: "row", Inputs: []Gen{G(F32, 1, 4)}, Attrs: Attrs{"shape": []int{3, 4}}},
				{Name: "new_dims", Inputs: []Gen{G(F32, 3, 1)}, Attrs: Attrs{"shape": []int{2, 3, 5}}},
				{Name: "keep", Inputs: []Gen{G(F32, 2, 1)}, Attrs: Attrs{"shape": []int{-1, 3}}},
			},
		},
		&OpDef{
			Name: "permute", Category: "shape", Doc: "Reorder dims (a view).",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "dims", Kind: AttrInts, Required: true, Doc: "new order of the dims"}},
			View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
				p, err := permutation(a.Ints("dims"), t.Rank())
				if err != nil {
					return ViewSpec{}, false, err
				}
				shape, st := make(Shape, len(p)), make([]int, len(p))
				for i, d := range p {
					shape[i], st[i] = t.shape[d], t.strides[d]
				}
				return ViewSpec{Shape: shape, Strides: st, Offset: t.offset}, true, nil
			},
			Backward: viewBack(func(g, x *Tensor, a Attrs) *Tensor {
				p, _ := permutation(a.Ints("dims"), x.Rank())
				inv := make([]int, len(p))
				for i, d := range p {
					inv[d] = i
				}
				return call1("permute", Attrs{"dims": inv}, g)
			}),
			Samples: []Sample{
				{Name: "3d", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"dims": []int{2, 0, 1}}},
				{Name: "neg", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"dims": []int{-1, 0}}},
			},
		},
		&OpDef{
			Name: "transpose", Category: "shape", Doc: "Swap two dims (a view).",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs: []AttrSpec{{Name: "dim0", Kind: AttrInt, Default: -2, Doc: "first dim"},
				{Name: "dim1", Kind: AttrInt, Default: -1, Doc: "second dim"}},
			View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
				d0, err := NormAxis(a.Int("dim0"), t.Rank())
				if err != nil {
					return ViewSpec{}, false, err
				}
				d1, err := NormAxis(a.Int("dim1"), t.Rank())
				if err != nil {
					return ViewSpec{}, false, err
				}
				shape, st := t.shape.Clone(), append([]int{}, t.strides...)
				shape[d0], shape[d1] = shape[d1], shape[d0]
				st[d0], st[d1] = st[d1], st[d0]
				return ViewSpec{Shape: shape, Strides: st, Offset: t.offset}, true, nil
			},
			Backward: viewBack(func(g, x *Tensor, a Attrs) *Tensor { return call1("transpose", a, g) }),
			Samples: []Sample{
				{Name: "2d", Inputs: []Gen{G(F32, 3, 4)}},
				{Name: "3d", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"dim0": 0, "dim1": 2}},
			},
		},
		&OpDef{
			Name: "squeeze", Category: "shape", Doc: "Drop size-1 dims (all of them, or the given axes).",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "axes", Kind: AttrInts, Doc: "size-1 axes to drop; absent drops all"}},
			View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
				drop := make([]bool, t.Rank())
				if a.Has("axes") {
					axes, err := NormAxes(a.Ints("axes"), t.Rank())
					if err != nil {
						return ViewSpec{}, false, err
					}
					for _, ax := range axes {
						if t.shape[ax] != 1 {
							return ViewSpec{}, false, fmt.Errorf("cannot squeeze axis %d of shape %v: size is %d, not 1", ax, t.shape, t.shape[ax])
						}
						drop[ax] = true
					}
				} else {
					for i, d := range t.shape {
						drop[i] = d == 1
					}
				}
				v := ViewSpec{Shape: Shape{}, Strides: []int{}, Offset: t.offset}
				for i := range t.shape {
					if !drop[i] {
						v.Shape = append(v.Shape, t.shape[i])
						v.Strides = append(v.Strides, t.strides[i])
					}
				}
				return v, true, nil
			},
			Backward: viewBack(reshapeBack),
			Samples: []Sample{
				{Name: "all", Inputs: []Gen{G(F32, 1, 3, 1, 2)}},
				{Name: "axis", Inputs: []Gen{G(F32, 1, 3, 1)}, Attrs: Attrs{"axes": []int{-1}}},
			},
		},
		&OpDef{
			Name: "unsqueeze", Category: "shape", Doc: "Insert a size-1 dim at axis (a view).",
			Inputs: []InputSpec{{Name: "x"}},
			Attrs:  []AttrSpec{{Name: "axis", Kind: AttrInt, Required: true, Doc: "position of the new dim in the output"}},
			View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
				ax, err := NormAxis(a.Int("axis"), t.Rank()+1)
				if err != nil {
					return ViewSpec{}, false, err
				}
				st := 1
				if ax < t.Rank() {
					st = t.strides[ax] * t.shape[ax]
				}
				shape := append(append(t.shape[:ax:ax].Clone(), 1), t.shape[ax:]...)
				strides := append(append(append([]int{}, t.strides[:ax]...), st), t.strides[ax:]...)
				return ViewSpec{Shape: shape, Strides: strides, Offset: t.offset}, true, nil
			},
			Backward: viewBack(reshapeBack),
			Samples: []Sample{
				{Name: "front", Inputs: []Gen{G(F32, 3, 2)}, Attrs: Attrs{"axis": 0}},
				{Name: "back", Inputs: []Gen{G(F32, 3, 2)}, Attrs: Attrs{"axis": -1}},
			},
		},
	)
}

// permutation validates dims as a permutation of 0..rank-1 (negatives allowed).
func permutation(dims []int, rank int) ([]int, error) {
	if len(dims) != rank {
		return nil, fmt.Errorf("dims %v has %d entries, tensor has rank %d", dims, len(dims), rank)
	}
	return oprules.NormAxesOrdered(dims, rank)
}
