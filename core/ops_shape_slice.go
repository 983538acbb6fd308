package core

import "fmt"

// slice is a view: it only changes the shape, one stride and the offset.
// Its gradient, and the gradient of pad, put a smaller tensor back into a
// larger one; internal ops do that so the rules stay backend-neutral.

func init() {
	MustRegister(sliceDef(), sliceGradDef(), padDef(), padGradDef())
}

func sliceAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "axis", Kind: AttrInt, Default: 0, Doc: "axis to slice"},
		{Name: "start", Kind: AttrInt, Default: 0, Doc: "first index; negative counts from the end; clamped"},
		{Name: "stop", Kind: AttrInt, Doc: "index past the last; negative counts from the end; clamped; absent means the end"},
		{Name: "step", Kind: AttrInt, Default: 1, Doc: "stride between taken indices, positive"},
	}
}

// sliceWindow resolves a Python slice start:stop:step over a dim of size n
// into the first index taken and the number of indices taken.
func sliceWindow(n int, a Attrs) (first, count int, err error) {
	step := a.Int("step")
	if step <= 0 {
		return 0, 0, fmt.Errorf("step must be positive, got %d", step)
	}
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	first, stop := clamp(a.Int("start")), n
	if a.Has("stop") {
		stop = clamp(a.Int("stop"))
	}
	if stop <= first {
		return first, 0, nil
	}
	return first, (stop - first + step - 1) / step, nil
}

// slicePlan gives the normalised axis, first index and count of a slice.
func slicePlan(s Shape, a Attrs) (axis, first, count int, err error) {
	if axis, err = NormAxis(a.Int("axis"), len(s)); err != nil {
		return 0, 0, 0, err
	}
	first, count, err = sliceWindow(s[axis], a)
	return axis, first, count, err
}

func sliceDef() *OpDef {
	return &OpDef{
		Name: "slice", Category: "shape", Doc: "x[start:stop:step] along one axis with Python semantics (a view).",
		Inputs: []InputSpec{{Name: "x"}},
		Attrs:  sliceAttrs(),
		View: func(t *Tensor, a Attrs) (ViewSpec, bool, error) {
			ax, first, count, err := slicePlan(t.shape, a)
			if err != nil {
				return ViewSpec{}, false, err
			}
			v := ViewSpec{Shape: t.shape.Clone(), Strides: append([]int{}, t.strides...), Offset: t.offset}
			v.Shape[ax] = count
			v.Strides[ax] *= a.Int("step")
			if count > 0 {
				v.Offset += first * t.strides[ax]
			}
			return v, true, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			a := g.Attrs.Clone()
			a["shape"] = []int(g.Inputs[0].shape)
			return []*Tensor{call1("_slice_grad", a, g.Grads[0])}, nil
		},
		Samples: []Sample{
			{Name: "basic", Inputs: []Gen{G(F32, 6, 3)}, Attrs: Attrs{"start": 1, "stop": 4}},
			{Name: "negative", Inputs: []Gen{G(F32, 3, 7)}, Attrs: Attrs{"axis": -1, "start": -5, "stop": -1}},
			{Name: "step_open_end", Inputs: []Gen{G(F32, 2, 9)}, Attrs: Attrs{"axis": 1, "start": 1, "step": 3}},
			{Name: "clamped", Inputs: []Gen{G(F32, 4, 2)}, Attrs: Attrs{"start": -100, "stop": 100, "step": 2}},
			{Name: "empty_result", Inputs: []Gen{G(F32, 5)}, Attrs: Attrs{"start": 4, "stop": 2}},
			{Name: "strided_f64", Inputs: []Gen{G(F64, 5, 4).AsStrided()}, Attrs: Attrs{"axis": 1, "start": 1, "stop": 3}},
			{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 4, 3)}, Attrs: Attrs{"start": 2}},
		},
	}
}

func sliceGradDef() *OpDef {
	return &OpDef{
		Name: "_slice_grad", Category: "shape", Internal: true,
		Doc:    "Zeros of shape with g written at the slice start:stop:step along axis (the gradient of slice).",
		Inputs: []InputSpec{{Name: "g"}},
		Attrs:  append(sliceAttrs(), AttrSpec{Name: "shape", Kind: AttrInts, Required: true, Doc: "shape of the sliced tensor"}),
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			s := Shape(a.Ints("shape"))
			if err := s.Validate(); err != nil {
				return nil, err
			}
			ax, _, count, err := slicePlan(s, a)
			if err != nil {
				return nil, err
			}
			want := s.Clone()
			want[ax] = count
			if !in[0].Shape.Equal(want) {
				return nil, fmt.Errorf("g has shape %v, the slice of %v has shape %v", in[0].Shape, s, want)
			}
			return []Meta{{Shape: s.Clone(), DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			a := g.Attrs.Clone()
			delete(a, "shape")
			return []*Tensor{call1("slice", a, g.Grads[0])}, nil
		},
		Samples: []Sample{
			{Name: "step", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"shape": []int{2, 7}, "axis": 1, "start": 1, "step": 2}},
			{Name: "f64", Inputs: []Gen{G(F64, 2)}, Attrs: Attrs{"shape": []int{5}, "start": -3, "stop": -1}},
		},
	}
}

func padAttrs() []AttrSpec {
	return []AttrSpec{
		{Name: "pads", Kind: AttrInts, Required: true, Doc: "(before, after) pairs starting from the last dim, as torch.nn.functional.pad; negative crops (constant mode)"},
		{Name: "mode", Kind: AttrString, Default: "constant", Enum: []string{"constant", "reflect", "replicate"}, Doc: "how new elements are filled"},
		{Name: "value", Kind: AttrFloat, Default: 0.0, Doc: "fill value of constant mode"},
	}
}

// padShape checks pads against shape and mode and returns the padded shape.
func padShape(s Shape, pads []int, mode string) (Shape, error) {
	if len(pads)%2 != 0 {
		return nil, fmt.Errorf("pads %v has odd length; give (before, after) pairs", pads)
	}
	if len(pads)/2 > len(s) {
		return nil, fmt.Errorf("pads %v covers %d dims, the input %v has rank %d", pads, len(pads)/2, s, len(s))
	}
	out := s.Clone()
	for i := 0; i < len(pads)/2; i++ {
		d := len(s) - 1 - i
		before, after, n := pads[2*i], pads[2*i+1], s[d]
		if mode != "constant" && (before < 0 || after < 0) {
			return nil, fmt.Errorf("%s padding cannot be negative, got (%d, %d) for dim %d", mode, before, after, d)
		}
		switch {
		case mode == "reflect" && (before >= n || after >= n) && (before > 0 || after > 0):
			return nil, fmt.Errorf("reflect padding (%d, %d) must be smaller than dim %d of size %d", before, after, d, n)
		case mode == "replicate" && n == 0 && (before > 0 || after > 0):
			return nil, fmt.Errorf("replicate padding of dim %d needs at least one element, the dim is empty", d)
		}
		out[d] = n + before + after
		if out[d] < 0 {
			return nil, fmt.Errorf("padding (%d, %d) of dim %d of size %d leaves a negative size %d", before, after, d, n, out[d])
		}
	}
	return out, nil
}

// negatePads gives the pads that undo a constant pad.
func negatePads(pads []int) []int {
	out := make([]int, len(pads))
	for i, p := range pads {
		out[i] = -p
	}
	return out
}

func padDef() *OpDef {
	return &OpDef{
		Name: "pad", Category: "shape", Doc: "Pad (or crop, with negative pads) the trailing dims: constant, reflect (mirror without the edge) or replicate (repeat the edge).",
		Inputs: []InputSpec{{Name: "x"}},
		Attrs:  padAttrs(),
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			s, err := padShape(in[0].Shape, a.Ints("pads"), a.String("mode"))
			if err != nil {
				return nil, err
			}
			return []Meta{{Shape: s, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			pads := g.Attrs.Ints("pads")
			if g.Attrs.String("mode") == "constant" {
				return []*Tensor{call1("pad", Attrs{"pads": negatePads(pads)}, g.Grads[0])}, nil
			}
			a := Attrs{"pads": pads, "mode": g.Attrs.String("mode"), "shape": []int(g.Inputs[0].shape)}
			return []*Tensor{call1("_pad_grad", a, g.Grads[0])}, nil
		},
		Samples: []Sample{
			{Name: "constant_last", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"pads": []int{1, 2}}},
			{Name: "constant_value_2d", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"pads": []int{0, 1, 2, 0}, "value": 1.5}},
			{Name: "constant_crop", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"pads": []int{-1, 2, 1, -2}}},
			{Name: "reflect", Inputs: []Gen{G(F32, 2, 4)}, Attrs: Attrs{"pads": []int{3, 2}, "mode": "reflect"}},
			{Name: "reflect_2d_strided", Inputs: []Gen{G(F32, 4, 3).AsStrided()}, Attrs: Attrs{"pads": []int{1, 2, 2, 1}, "mode": "reflect"}},
			{Name: "replicate_f64", Inputs: []Gen{G(F64, 2, 3)}, Attrs: Attrs{"pads": []int{2, 1, 0, 2}, "mode": "replicate"}},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 2)}, Attrs: Attrs{"pads": []int{1, 1}}},
			{Name: "i32_value", Inputs: []Gen{GI(I32, -9, 9, 2, 2)}, Attrs: Attrs{"pads": []int{1, 1}, "value": -7}},
		},
	}
}

func padGradDef() *OpDef {
	return &OpDef{
		Name: "_pad_grad", Category: "shape", Internal: true,
		Doc:    "Sum g back into the input positions of a reflect or replicate pad (the gradient of pad).",
		Inputs: []InputSpec{{Name: "g", DTypes: floatsOnly}},
		Attrs: append(padAttrs()[:2:2], AttrSpec{Name: "shape", Kind: AttrInts, Required: true,
			Doc: "shape of the padded input"}),
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			s := Shape(a.Ints("shape"))
			if err := s.Validate(); err != nil {
				return nil, err
			}
			want, err := padShape(s, a.Ints("pads"), a.String("mode"))
			if err != nil {
				return nil, err
			}
			if !in[0].Shape.Equal(want) {
				return nil, fmt.Errorf("g has shape %v, padding %v gives %v", in[0].Shape, s, want)
			}
			return []Meta{{Shape: s.Clone(), DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			a := Attrs{"pads": g.Attrs.Ints("pads"), "mode": g.Attrs.String("mode")}
			return []*Tensor{call1("pad", a, g.Grads[0])}, nil
		},
		Samples: []Sample{
			{Name: "reflect", Inputs: []Gen{G(F32, 2, 9)}, Attrs: Attrs{"shape": []int{2, 4}, "pads": []int{3, 2}, "mode": "reflect"}},
			{Name: "replicate_f64", Inputs: []Gen{G(F64, 4, 6)}, Attrs: Attrs{"shape": []int{2, 3}, "pads": []int{2, 1, 0, 2}, "mode": "replicate"}},
		},
	}
}
