package core

import "fmt"

// Shape copies: concat, stack, split, chunk, tile, repeat_interleave, flip
// and roll move elements without arithmetic, so their kernels copy raw
// element bytes and every dtype comes through exactly. Their backward rules
// are other copies (slices, concats, flips) or a reshape followed by a sum.

func init() {
	MustRegister(concatDef(), stackDef(), splitDef(), chunkDef(),
		tileDef(), repeatInterleaveDef(), flipDef(), rollDef())
}

// inferConcat checks that every input has the rank and the dims of input 0
// except along axis, where the sizes add up.
func inferConcat(in []Meta, a Attrs) ([]Meta, error) {
	first := in[0].Shape
	if len(first) == 0 {
		return nil, fmt.Errorf("cannot concatenate rank-0 tensors (input 0 is a scalar); use stack")
	}
	ax, err := NormAxis(a.Int("axis"), len(first))
	if err != nil {
		return nil, err
	}
	out := first.Clone()
	out[ax] = 0
	for i, m := range in {
		if len(m.Shape) != len(first) {
			return nil, fmt.Errorf("input %d has shape %v, input 0 has %v: ranks differ", i, m.Shape, first)
		}
		for d := range m.Shape {
			if d != ax && m.Shape[d] != first[d] {
				return nil, fmt.Errorf("input %d has shape %v, input 0 has %v: dim %d differs (only axis %d may)", i, m.Shape, first, d, ax)
			}
		}
		out[ax] += m.Shape[ax]
	}
	return []Meta{{Shape: out, DType: in[0].DType}}, nil
}

// sliceAlong is x[..., start:stop, ...] along axis, a view.
func sliceAlong(x *Tensor, axis, start, stop int) *Tensor {
	return call1("slice", Attrs{"axis": axis, "start": start, "stop": stop}, x)
}

func concatDef() *OpDef {
	return &OpDef{
		Name: "concat", Category: "shape", Doc: "Join tensors along an existing axis (dtypes are promoted to a common one).",
		Inputs:  []InputSpec{{Name: "xs", Variadic: true}},
		Attrs:   []AttrSpec{{Name: "axis", Kind: AttrInt, Default: 0, Doc: "axis to join along"}},
		Promote: true, Infer: inferConcat,
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			ax, _ := NormAxis(g.Attrs.Int("axis"), g.Outputs[0].Rank())
			res := make([]*Tensor, len(g.Inputs))
			off := 0
			for i, x := range g.Inputs {
				n := x.shape[ax]
				if g.Need[i] {
					res[i] = sliceAlong(g.Grads[0], ax, off, off+n)
				}
				off += n
			}
			return res, nil
		},
		Samples: []Sample{
			{Name: "axis0", Inputs: []Gen{G(F32, 2, 3), G(F32, 4, 3)}},
			{Name: "axis1_three", Inputs: []Gen{G(F32, 2, 1), G(F32, 2, 3), G(F32, 2, 2)}, Attrs: Attrs{"axis": 1}},
			{Name: "neg_axis_3d", Inputs: []Gen{G(F32, 2, 2, 3), G(F32, 2, 2, 1)}, Attrs: Attrs{"axis": -1}},
			{Name: "strided", Inputs: []Gen{G(F32, 3, 4).AsStrided(), G(F32, 3, 4)}, Attrs: Attrs{"axis": 1}},
			{Name: "f64_single", Inputs: []Gen{G(F64, 5)}},
			{Name: "empty_part", Inputs: []Gen{G(F32, 0, 3), G(F32, 2, 3)}},
			{Name: "mixed_promote", Inputs: []Gen{G(F32, 2), GI(I32, -5, 5, 3)}, NoGrad: true},
			{Name: "i64", Inputs: []Gen{GI(I64, -9, 9, 2, 2), GI(I64, -9, 9, 1, 2)}},
			{Name: "bool", Inputs: []Gen{{Shape: Shape{2}, DType: Bool, Kind: "bool"}, {Shape: Shape{3}, DType: Bool, Kind: "bool"}}},
			{Name: "bf16", Inputs: []Gen{G(BF16, 2, 2), G(BF16, 2, 2)}, Attrs: Attrs{"axis": 1}},
		},
	}
}

func stackDef() *OpDef {
	return &OpDef{
		Name: "stack", Category: "shape", Doc: "Join equally shaped tensors along a new axis (dtypes are promoted).",
		Inputs:  []InputSpec{{Name: "xs", Variadic: true}},
		Attrs:   []AttrSpec{{Name: "axis", Kind: AttrInt, Default: 0, Doc: "position of the new axis in the output"}},
		Promote: true,
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			first := in[0].Shape
			ax, err := NormAxis(a.Int("axis"), len(first)+1)
			if err != nil {
				return nil, err
			}
			for i, m := range in {
				if !m.Shape.Equal(first) {
					return nil, fmt.Errorf("input %d has shape %v, input 0 has %v: stacked tensors must have equal shapes", i, m.Shape, first)
				}
			}
			out := append(append(first[:ax:ax].Clone(), len(in)), first[ax:]...)
			return []Meta{{Shape: out, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			ax, _ := NormAxis(g.Attrs.Int("axis"), g.Outputs[0].Rank())
			res := make([]*Tensor, len(g.Inputs))
			for i, x := range g.Inputs {
				if g.Need[i] {
					res[i] = sliceAlong(g.Grads[0], ax, i, i+1).Reshape(x.shape)
				}
			}
			return res, nil
		},
		Samples: []Sample{
			{Name: "axis0", Inputs: []Gen{G(F32, 2, 3), G(F32, 2, 3)}},
			{Name: "last", Inputs: []Gen{G(F32, 2, 3), G(F32, 2, 3), G(F32, 2, 3)}, Attrs: Attrs{"axis": -1}},
			{Name: "middle_strided", Inputs: []Gen{G(F32, 3, 4).AsStrided(), G(F32, 3, 4)}, Attrs: Attrs{"axis": 1}},
			{Name: "scalars_f64", Inputs: []Gen{G(F64), G(F64), G(F64)}},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 2), G(F32, 0, 2)}, Attrs: Attrs{"axis": 1}},
			{Name: "i32", Inputs: []Gen{GI(I32, -9, 9, 4), GI(I32, -9, 9, 4)}},
			{Name: "f16_promote", Inputs: []Gen{G(F16, 3), G(F32, 3)}, NoGrad: true},
		},
	}
}

// splitSizes gives the size of every piece of a dim of size n: "sizes" as
// given (they must add up to n), or "sections" pieces as equal as possible
// with the larger ones first (torch.tensor_split).
func splitSizes(n int, a Attrs) ([]int, error) {
	switch {
	case a.Has("sizes") && a.Has("sections"):
		return nil, fmt.Errorf("give either sizes or sections, not both")
	case a.Has("sizes"):
		sizes := a.Ints("sizes")
		if len(sizes) == 0 {
			return nil, fmt.Errorf("sizes is empty")
		}
		total := 0
		for _, s := range sizes {
			if s < 0 {
				return nil, fmt.Errorf("sizes %v has a negative entry", sizes)
			}
			total += s
		}
		if total != n {
			return nil, fmt.Errorf("sizes %v add up to %d, the axis has size %d", sizes, total, n)
		}
		return append([]int{}, sizes...), nil
	case a.Has("sections"):
		k := a.Int("sections")
		if k < 1 {
			return nil, fmt.Errorf("sections must be at least 1, got %d", k)
		}
		sizes := make([]int, k)
		for i := range sizes {
			sizes[i] = n / k
			if i < n%k {
				sizes[i]++
			}
		}
		return sizes, nil
	}
	return nil, fmt.Errorf("give sizes (a list) or sections (a count)")
}

// chunkSizes follows torch.chunk: pieces of ceil(n/chunks), the last one
// smaller, possibly fewer than chunks pieces; an empty dim gives chunks
// empty pieces.
func chunkSizes(n, chunks int) ([]int, error) {
	if chunks < 1 {
		return nil, fmt.Errorf("chunks must be at least 1, got %d", chunks)
	}
	if n == 0 {
		return make([]int, chunks), nil
	}
	size := (n + chunks - 1) / chunks
	var sizes []int
	for left := n; left > 0; left -= size {
		sizes = append(sizes, min(size, left))
	}
	return sizes, nil
}

// inferPieces gives one output per piece size along the normalised axis.
func inferPieces(in []Meta, a Attrs, sizesOf func(n int) ([]int, error)) ([]Meta, error) {
	s := in[0].Shape
	ax, err := NormAxis(a.Int("axis"), len(s))
	if err != nil {
		return nil, err
	}
	sizes, err := sizesOf(s[ax])
	if err != nil {
		return nil, err
	}
	out := make([]Meta, len(sizes))
	for i, n := range sizes {
		out[i] = Meta{Shape: s.Clone(), DType: in[0].DType}
		out[i].Shape[ax] = n
	}
	return out, nil
}

// concatPieceGrads is the backward rule of split and chunk: the gradients of
// the pieces joined back together, zeros for pieces that got none.
func concatPieceGrads(g *GradCtx) ([]*Tensor, error) {
	ax, _ := NormAxis(g.Attrs.Int("axis"), g.Inputs[0].Rank())
	parts := make([]*Tensor, len(g.Outputs))
	for i := range g.Outputs {
		parts[i] = g.Grad(i)
	}
	return []*Tensor{call1("concat", Attrs{"axis": ax}, parts...)}, nil
}

func splitDef() *OpDef {
	return &OpDef{
		Name: "split", Category: "shape", Doc: "Split along axis into pieces of the given sizes, or into sections nearly equal pieces (torch.tensor_split).",
		Inputs: []InputSpec{{Name: "x"}}, Outputs: []string{"pieces..."},
		Attrs: []AttrSpec{
			{Name: "sizes", Kind: AttrInts, Doc: "size of every piece; they add up to the axis size"},
			{Name: "sections", Kind: AttrInt, Doc: "number of pieces; the first size%sections pieces are one larger"},
			{Name: "axis", Kind: AttrInt, Default: 0, Doc: "axis to split"},
		},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			return inferPieces(in, a, func(n int) ([]int, error) { return splitSizes(n, a) })
		},
		Backward: concatPieceGrads,
		Samples: []Sample{
			{Name: "sizes", Inputs: []Gen{G(F32, 5, 3)}, Attrs: Attrs{"sizes": []int{2, 3}}},
			{Name: "sections_uneven", Inputs: []Gen{G(F32, 2, 7)}, Attrs: Attrs{"sections": 3, "axis": -1}},
			{Name: "zero_piece", Inputs: []Gen{G(F32, 4, 2)}, Attrs: Attrs{"sizes": []int{1, 0, 3}}},
			{Name: "strided", Inputs: []Gen{G(F32, 4, 6).AsStrided()}, Attrs: Attrs{"sections": 2, "axis": 1}},
			{Name: "f64", Inputs: []Gen{G(F64, 6)}, Attrs: Attrs{"sections": 3}},
			{Name: "more_sections_than_elems", Inputs: []Gen{G(F32, 2, 2)}, Attrs: Attrs{"sections": 3}},
			{Name: "u8", Inputs: []Gen{GI(U8, 0, 255, 3, 4)}, Attrs: Attrs{"sizes": []int{1, 3}, "axis": 1}},
		},
	}
}

func chunkDef() *OpDef {
	return &OpDef{
		Name: "chunk", Category: "shape", Doc: "Split along axis into at most chunks pieces of ceil(n/chunks) (torch.chunk).",
		Inputs: []InputSpec{{Name: "x"}}, Outputs: []string{"pieces..."},
		Attrs: []AttrSpec{
			{Name: "chunks", Kind: AttrInt, Required: true, Doc: "wanted number of pieces"},
			{Name: "axis", Kind: AttrInt, Default: 0, Doc: "axis to split"},
		},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			return inferPieces(in, a, func(n int) ([]int, error) { return chunkSizes(n, a.Int("chunks")) })
		},
		Backward: concatPieceGrads,
		Samples: []Sample{
			{Name: "even", Inputs: []Gen{G(F32, 6, 2)}, Attrs: Attrs{"chunks": 3}},
			{Name: "fewer_pieces", Inputs: []Gen{G(F32, 2, 5)}, Attrs: Attrs{"chunks": 4, "axis": 1}},
			{Name: "neg_axis_strided", Inputs: []Gen{G(F32, 3, 4).AsStrided()}, Attrs: Attrs{"chunks": 2, "axis": -1}},
			{Name: "f64_one", Inputs: []Gen{G(F64, 3)}, Attrs: Attrs{"chunks": 1}},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 2)}, Attrs: Attrs{"chunks": 2}},
			{Name: "bool", Inputs: []Gen{{Shape: Shape{5}, DType: Bool, Kind: "bool"}}, Attrs: Attrs{"chunks": 2}},
		},
	}
}

// tileShapes pads the input shape and reps with leading ones to one rank.
func tileShapes(s Shape, reps []int) (in, rep Shape, err error) {
	r := max(len(s), len(reps))
	in, rep = make(Shape, r), make(Shape, r)
	for i := range in {
		in[i], rep[i] = 1, 1
	}
	copy(in[r-len(s):], s)
	copy(rep[r-len(reps):], reps)
	for _, n := range reps {
		if n < 0 {
			return nil, nil, fmt.Errorf("reps %v has a negative entry", reps)
		}
	}
	return in, rep, nil
}

func tileDef() *OpDef {
	return &OpDef{
		Name: "tile", Category: "shape", Doc: "Repeat the whole tensor reps times along each dim (torch.tile; short reps are padded with leading ones).",
		Inputs: []InputSpec{{Name: "x"}},
		Attrs:  []AttrSpec{{Name: "reps", Kind: AttrInts, Required: true, Doc: "repetitions per dim"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			s, rep, err := tileShapes(in[0].Shape, a.Ints("reps"))
			if err != nil {
				return nil, err
			}
			out := make(Shape, len(s))
			for i := range s {
				out[i] = s[i] * rep[i]
			}
			return []Meta{{Shape: out, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			x := g.Inputs[0]
			s, rep, _ := tileShapes(x.shape, g.Attrs.Ints("reps"))
			split, axes := make([]int, 0, 2*len(s)), make([]int, len(s))
			for i := range s {
				split = append(split, rep[i], s[i])
				axes[i] = 2 * i
			}
			sum := call1("sum", Attrs{"axes": axes}, g.Grads[0].Reshape(split))
			return []*Tensor{sum.Reshape(x.shape)}, nil
		},
		Samples: []Sample{
			{Name: "2d", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"reps": []int{2, 3}}},
			{Name: "short_reps", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"reps": []int{2}}},
			{Name: "long_reps", Inputs: []Gen{G(F32, 3)}, Attrs: Attrs{"reps": []int{2, 1, 2}}},
			{Name: "strided", Inputs: []Gen{G(F32, 3, 2).AsStrided()}, Attrs: Attrs{"reps": []int{1, 2}}},
			{Name: "zero_rep", Inputs: []Gen{G(F32, 2, 2)}, Attrs: Attrs{"reps": []int{0, 2}}},
			{Name: "f64_scalar", Inputs: []Gen{G(F64)}, Attrs: Attrs{"reps": []int{3}}},
			{Name: "i16", Inputs: []Gen{GI(I16, -300, 300, 2, 2)}, Attrs: Attrs{"reps": []int{2, 2}}},
		},
	}
}

// repeatInterleaveAxis is the axis repeat_interleave works on, or -1 when
// the input is flattened first.
func repeatInterleaveAxis(s Shape, a Attrs) (int, error) {
	if !a.Has("axis") {
		return -1, nil
	}
	return NormAxis(a.Int("axis"), len(s))
}

func repeatInterleaveDef() *OpDef {
	return &OpDef{
		Name: "repeat_interleave", Category: "shape", Doc: "Repeat each element repeats times along axis (absent axis: of the flattened tensor).",
		Inputs: []InputSpec{{Name: "x"}},
		Attrs: []AttrSpec{
			{Name: "repeats", Kind: AttrInt, Required: true, Doc: "copies of each element"},
			{Name: "axis", Kind: AttrInt, Doc: "axis to repeat along; absent flattens the input first"},
		},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			r := a.Int("repeats")
			if r < 0 {
				return nil, fmt.Errorf("repeats must be non-negative, got %d", r)
			}
			s := in[0].Shape
			ax, err := repeatInterleaveAxis(s, a)
			if err != nil {
				return nil, err
			}
			if ax < 0 {
				return []Meta{{Shape: Shape{s.Numel() * r}, DType: in[0].DType}}, nil
			}
			out := s.Clone()
			out[ax] *= r
			return []Meta{{Shape: out, DType: in[0].DType}}, nil
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			x, r := g.Inputs[0], g.Attrs.Int("repeats")
			ax, _ := repeatInterleaveAxis(x.shape, g.Attrs)
			var split Shape
			if ax < 0 {
				split, ax = Shape{x.Numel(), r}, 0
			} else {
				split = append(append(x.shape[:ax+1:ax+1].Clone(), r), x.shape[ax+1:]...)
			}
			sum := call1("sum", Attrs{"axes": []int{ax + 1}}, g.Grads[0].Reshape(split))
			return []*Tensor{sum.Reshape(x.shape)}, nil
		},
		Samples: []Sample{
			{Name: "flat", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"repeats": 2}},
			{Name: "axis0", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"repeats": 3, "axis": 0}},
			{Name: "neg_axis_strided", Inputs: []Gen{G(F32, 3, 2).AsStrided()}, Attrs: Attrs{"repeats": 2, "axis": -1}},
			{Name: "zero", Inputs: []Gen{G(F32, 3)}, Attrs: Attrs{"repeats": 0, "axis": 0}},
			{Name: "f64_size1", Inputs: []Gen{G(F64, 1, 4)}, Attrs: Attrs{"repeats": 2, "axis": 0}},
			{Name: "i64", Inputs: []Gen{GI(I64, -50, 50, 4)}, Attrs: Attrs{"repeats": 3}},
		},
	}
}

func flipDef() *OpDef {
	return &OpDef{
		Name: "flip", Category: "shape", Doc: "Reverse the order of elements along axes (absent: every axis).",
		Inputs: []InputSpec{{Name: "x"}},
		Attrs:  []AttrSpec{{Name: "axes", Kind: AttrInts, Doc: "axes to reverse; absent reverses all"}},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			if _, err := NormAxes(a.Ints("axes"), len(in[0].Shape)); err != nil {
				return nil, err
			}
			return InferSame(in, a)
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			return []*Tensor{call1("flip", g.Attrs, g.Grads[0])}, nil
		},
		Samples: []Sample{
			{Name: "all", Inputs: []Gen{G(F32, 3, 4)}},
			{Name: "axis", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"axes": []int{1}}},
			{Name: "neg_axes", Inputs: []Gen{G(F32, 2, 3, 4)}, Attrs: Attrs{"axes": []int{-1, 0}}},
			{Name: "strided", Inputs: []Gen{G(F32, 4, 3).AsStrided()}, Attrs: Attrs{"axes": []int{0}}},
			{Name: "f64_empty_axes", Inputs: []Gen{G(F64, 5)}, Attrs: Attrs{"axes": []int{}}},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"axes": []int{1}}},
			{Name: "bool", Inputs: []Gen{{Shape: Shape{2, 3}, DType: Bool, Kind: "bool"}}},
		},
	}
}

// rollShifts gives the net shift of every axis (repeated axes add up, as in
// torch.roll); flat is true when no axes are given and the flattened tensor
// rolls by the single shift.
func rollShifts(s Shape, a Attrs) (perAxis []int, flat bool, err error) {
	shifts := a.Ints("shifts")
	if !a.Has("axes") {
		if len(shifts) != 1 {
			return nil, false, fmt.Errorf("without axes, shifts must be a single value, got %v", shifts)
		}
		return shifts, true, nil
	}
	axes := a.Ints("axes")
	if len(axes) != len(shifts) {
		return nil, false, fmt.Errorf("shifts %v and axes %v differ in length", shifts, axes)
	}
	perAxis = make([]int, len(s))
	for i, ax := range axes {
		n, err := NormAxis(ax, len(s))
		if err != nil {
			return nil, false, err
		}
		perAxis[n] += shifts[i]
	}
	return perAxis, false, nil
}

func rollDef() *OpDef {
	return &OpDef{
		Name: "roll", Category: "shape", Doc: "Shift elements cyclically along axes (absent axes: roll the flattened tensor).",
		Inputs: []InputSpec{{Name: "x"}},
		Attrs: []AttrSpec{
			{Name: "shifts", Kind: AttrInts, Required: true, Doc: "shift per axis; positive moves elements to higher indices"},
			{Name: "axes", Kind: AttrInts, Doc: "axes to roll; absent rolls the flattened tensor by the single shift"},
		},
		Infer: func(in []Meta, a Attrs) ([]Meta, error) {
			if _, _, err := rollShifts(in[0].Shape, a); err != nil {
				return nil, err
			}
			return InferSame(in, a)
		},
		Backward: func(g *GradCtx) ([]*Tensor, error) {
			a := g.Attrs.Clone()
			back := make([]int, len(a.Ints("shifts")))
			for i, s := range a.Ints("shifts") {
				back[i] = -s
			}
			a["shifts"] = back
			return []*Tensor{call1("roll", a, g.Grads[0])}, nil
		},
		Samples: []Sample{
			{Name: "flat", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"shifts": []int{5}}},
			{Name: "axes", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"shifts": []int{1, -2}, "axes": []int{0, 1}}},
			{Name: "repeated_axis", Inputs: []Gen{G(F32, 2, 5)}, Attrs: Attrs{"shifts": []int{2, 4}, "axes": []int{-1, 1}}},
			{Name: "big_shift_strided", Inputs: []Gen{G(F32, 4, 3).AsStrided()}, Attrs: Attrs{"shifts": []int{-13}, "axes": []int{0}}},
			{Name: "f64", Inputs: []Gen{G(F64, 7)}, Attrs: Attrs{"shifts": []int{3}}},
			{Name: "empty", Inputs: []Gen{G(F32, 0, 2)}, Attrs: Attrs{"shifts": []int{1}, "axes": []int{1}}},
			{Name: "i8", Inputs: []Gen{GI(I8, -100, 100, 2, 3)}, Attrs: Attrs{"shifts": []int{1}, "axes": []int{1}}},
		},
	}
}
