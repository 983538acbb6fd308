package core

import (
	"fmt"
	"math"
)

// Complex numbers. A c64 (c128) element is two f32 (f64), real part first,
// so a complex tensor of shape S is, byte for byte, a real tensor of shape
// S+[2]. view_as_real and view_as_complex move between the two without a
// copy, real and imag are views too, and every complex op is written with
// real ops over those views (complex_dispatch.go). So no backend has a
// complex kernel, every backend that stores the real dtype runs complex
// maths, and autograd needs nothing new: the gradient of a real loss with
// respect to z = x + iy arrives as dL/dx + i dL/dy, which is PyTorch's
// convention (the conjugate Wirtinger derivative times two).

var realParts = []DType{F32, F64}

// realView is the layout of the real dtype's elements behind a complex
// tensor: every stride doubles, the offset doubles, and a trailing axis of
// two holds the parts.
func realView(t *Tensor) ViewSpec {
	n := len(t.shape)
	shape := append(t.shape.Clone(), 2)
	st := make([]int, n+1)
	for i, s := range t.strides {
		st[i] = 2 * s
	}
	st[n] = 1
	return ViewSpec{Shape: shape, Strides: st, Offset: 2 * t.offset, DType: t.dtype.RealDType()}
}

// partView is one part (0 real, 1 imaginary) of a complex tensor.
func partView(t *Tensor, part int) ViewSpec {
	st := make([]int, len(t.strides))
	for i, s := range t.strides {
		st[i] = 2 * s
	}
	return ViewSpec{Shape: t.shape.Clone(), Strides: st, Offset: 2*t.offset + part, DType: t.dtype.RealDType()}
}

// complexView reinterprets real pairs [..., 2] as complex elements; ok is
// false when the pairs are not adjacent (a contiguous copy comes first).
func complexView(t *Tensor, _ Attrs) (ViewSpec, bool, error) {
	r := t.Rank()
	if r == 0 || t.shape[r-1] != 2 {
		return ViewSpec{}, false, fmt.Errorf("the last dimension must have size 2 (real, imaginary), got shape %v", t.shape)
	}
	ok := t.strides[r-1] == 1 && t.offset%2 == 0
	st := make([]int, r-1)
	for i, s := range t.strides[:r-1] {
		switch {
		case t.shape[i] == 1:
			st[i] = 0 // any stride serves a dim of one
		case s%2 != 0:
			ok = false
		default:
			st[i] = s / 2
		}
	}
	return ViewSpec{Shape: t.shape[:r-1].Clone(), Strides: st, Offset: t.offset / 2, DType: ComplexDType(t.dtype)}, ok, nil
}

func complexInfer(in []Meta, _ Attrs) ([]Meta, error) {
	s, err := BroadcastShapes(in[0].Shape, in[1].Shape)
	if err != nil {
		return nil, err
	}
	return []Meta{{Shape: s, DType: ComplexDType(in[0].DType)}}, nil
}

// makeComplex is complex(re, im) for parts of one real dtype.
func makeComplex(in []*Tensor, _ Attrs) ([]*Tensor, error) {
	s, err := BroadcastShapes(in[0].shape, in[1].shape)
	if err != nil {
		return nil, err
	}
	parts := make([]*Tensor, 2)
	for i, p := range in {
		if !p.shape.Equal(s) {
			p = call1("expand", Attrs{"shape": []int(s)}, p)
		}
		parts[i] = p
	}
	out := fromPairs(call1("stack", Attrs{"axis": -1}, parts...))
	return []*Tensor{out}, out.Err()
}

func conjugate(in []*Tensor, _ Attrs) ([]*Tensor, error) {
	z := in[0]
	if !z.dtype.IsComplex() {
		return []*Tensor{z}, nil
	}
	out := Complex(realPart(z), un("neg", imagPart(z)))
	return []*Tensor{out}, out.Err()
}

// angleOf is atan2(imag, real); a real x has angle pi where it is negative
// and 0 elsewhere (NaN stays NaN), as torch.angle.
func angleOf(in []*Tensor, _ Attrs) ([]*Tensor, error) {
	z := in[0]
	var out *Tensor
	switch {
	case z.dtype.IsComplex():
		out = bin("atan2", imagPart(z), realPart(z))
	default:
		if !z.dtype.IsFloat() {
			z = z.Cast(F32)
		}
		pi := Scalar(math.Pi, z.dtype, z.Device())
		zero := Scalar(0, z.dtype, z.Device())
		out = call1("where", nil, un("isnan", z), z, call1("where", nil, bin("lt", z, zero), pi, zero))
	}
	return []*Tensor{out}, out.Err()
}

func complexSameShape(in []Meta, _ Attrs) ([]Meta, error) {
	return []Meta{{Shape: in[0].Shape.Clone(), DType: in[0].DType}}, nil
}

func realOfInfer(in []Meta, _ Attrs) ([]Meta, error) {
	d := in[0].DType.RealDType()
	if !d.IsFloat() {
		d = F32
	}
	return []Meta{{Shape: in[0].Shape.Clone(), DType: d}}, nil
}

// Complex is complex(re, im): a complex tensor from its parts.
func Complex(re, im *Tensor) *Tensor { return call1("complex", nil, re, im) }

func init() {
	MustRegister(
		&OpDef{
			Name: "view_as_real", Category: "complex", Doc: "The real pairs [..., 2] behind a complex tensor (a view: no copy).",
			Inputs: []InputSpec{{Name: "x", DTypes: ComplexDTypes}},
			View: func(t *Tensor, _ Attrs) (ViewSpec, bool, error) {
				return realView(t), true, nil
			},
			Backward: viewBack(func(g, _ *Tensor, _ Attrs) *Tensor { return fromPairs(g) }),
			Samples:  []Sample{{Name: "c64", Inputs: []Gen{G(C64, 2, 3)}}, {Name: "c128", Inputs: []Gen{G(C128, 4)}}},
		},
		&OpDef{
			Name: "view_as_complex", Category: "complex", Doc: "A complex tensor over real pairs [..., 2] (a view when the pairs are adjacent, else a copy first).",
			Inputs:   []InputSpec{{Name: "x", DTypes: realParts}},
			View:     complexView,
			Backward: viewBack(func(g, _ *Tensor, _ Attrs) *Tensor { return pairsOf(g) }),
			Samples: []Sample{{Name: "f32", Inputs: []Gen{G(F32, 3, 2)}}, {Name: "f64", Inputs: []Gen{G(F64, 2, 2, 2)}},
				{Name: "strided_copies", Inputs: []Gen{G(F32, 2, 2).AsStrided()}}},
		},
		&OpDef{
			Name: "real", Category: "complex", Doc: "The real part (a view); a real tensor is its own real part.",
			Inputs: []InputSpec{{Name: "x"}},
			View: func(t *Tensor, _ Attrs) (ViewSpec, bool, error) {
				if !t.dtype.IsComplex() {
					return ViewSpec{Shape: t.shape.Clone(), Strides: t.Strides(), Offset: t.offset}, true, nil
				}
				return partView(t, 0), true, nil
			},
			Backward: viewBack(func(g, x *Tensor, _ Attrs) *Tensor {
				if !x.dtype.IsComplex() {
					return g
				}
				return Complex(g, ZerosLike(g))
			}),
			Samples: []Sample{{Name: "c64", Inputs: []Gen{G(C64, 2, 3)}}, {Name: "c128", Inputs: []Gen{G(C128, 3)}},
				{Name: "real_input", Inputs: []Gen{G(F32, 4)}}},
		},
		&OpDef{
			Name: "imag", Category: "complex", Doc: "The imaginary part of a complex tensor (a view).",
			Inputs: []InputSpec{{Name: "x", DTypes: ComplexDTypes}},
			View: func(t *Tensor, _ Attrs) (ViewSpec, bool, error) {
				return partView(t, 1), true, nil
			},
			Backward: viewBack(func(g, _ *Tensor, _ Attrs) *Tensor { return Complex(ZerosLike(g), g) }),
			Samples:  []Sample{{Name: "c64", Inputs: []Gen{G(C64, 5)}}, {Name: "c128", Inputs: []Gen{G(C128, 2, 2)}}},
		},
		&OpDef{
			Name: "complex", Category: "complex", Doc: "re + i*im from real parts of one floating dtype (f32 gives c64, f64 gives c128), broadcast.",
			Inputs:  []InputSpec{{Name: "re", DTypes: realParts}, {Name: "im", DTypes: realParts}},
			Promote: true,
			Infer:   complexInfer,
			Compose: makeComplex,
			Samples: []Sample{{Name: "f32", Inputs: []Gen{G(F32, 2, 3), G(F32, 2, 3)}},
				{Name: "broadcast", Inputs: []Gen{G(F32, 3), G(F32, 2, 1)}},
				{Name: "f64", Inputs: []Gen{G(F64, 4), G(F64, 4)}}},
		},
		&OpDef{
			Name: "conj", Category: "complex", Doc: "Complex conjugate re - i*im; a real tensor is its own conjugate.",
			Inputs:  []InputSpec{{Name: "x"}},
			Infer:   complexSameShape,
			Compose: conjugate,
			Samples: []Sample{{Name: "c64", Inputs: []Gen{G(C64, 2, 3)}}, {Name: "c128", Inputs: []Gen{G(C128, 4)}},
				{Name: "real_input", Inputs: []Gen{G(F32, 3)}}},
		},
		&OpDef{
			Name: "angle", Category: "complex", Doc: "Argument atan2(im, re) of a complex tensor; for a real one pi where negative, else 0 (torch.angle).",
			Inputs:  []InputSpec{{Name: "x"}},
			Infer:   realOfInfer,
			Compose: angleOf,
			Samples: []Sample{{Name: "c64", Inputs: []Gen{G(C64, 6)}}, {Name: "c128", Inputs: []Gen{G(C128, 2, 2)}},
				{Name: "real_input", Inputs: []Gen{GV(F32, []float64{-1.5, 0.5, 2, -0.25}, 4)}, NoGrad: true}},
		},
	)
}
