package core

import (
	"fmt"

	"github.com/webtensor/webtensor/core/numerics"
)

// Random tensors and dropout. They draw from the counter-based Philox
// stream (numerics/philox.go): element i of a call with attributes seed and offset is a
// pure function of (seed, offset, i), so every backend and SDK reproduces
// the same tensor.

func requireFloatDType(d DType) error {
	if !d.IsFloat() {
		return fmt.Errorf("dtype must be floating point, got %s", d)
	}
	return nil
}

func inferRandFloat(in []Meta, a Attrs) ([]Meta, error) {
	m, err := inferCreation(in, a)
	if err != nil {
		return nil, err
	}
	return m, requireFloatDType(m[0].DType)
}

func inferRandLike(in []Meta, a Attrs) ([]Meta, error) {
	m, err := inferLike(in, a)
	if err != nil {
		return nil, err
	}
	return m, requireFloatDType(m[0].DType)
}

func inferRandint(in []Meta, a Attrs) ([]Meta, error) {
	m, err := inferCreation(in, a)
	if err != nil {
		return nil, err
	}
	low, high, d := a.Int("low"), a.Int("high"), m[0].DType
	if high <= low {
		return nil, fmt.Errorf("high (%d) must be greater than low (%d)", high, low)
	}
	if d == Bool {
		return nil, fmt.Errorf("dtype bool is not supported, want a numeric dtype")
	}
	if d.IsInt() {
		lo, hi := numerics.IntRange(d)
		if int64(low) < lo || int64(high-1) > hi {
			return nil, fmt.Errorf("range [%d, %d) does not fit %s ([%d, %d])", low, high, d, lo, hi)
		}
	}
	return m, nil
}

func randSamples(dtypes ...DType) []Sample {
	s := []Sample{
		{Name: "f32", Attrs: Attrs{"shape": []int{4, 5}, "seed": 42, "offset": 0}},
		{Name: "offset", Attrs: Attrs{"shape": []int{7}, "seed": 7, "offset": 3}},
		{Name: "big_seed", Attrs: Attrs{"shape": []int{2, 3}, "seed": 0x123456789AB, "offset": 1 << 33}},
		{Name: "empty", Attrs: Attrs{"shape": []int{0, 3}, "seed": 1, "offset": 0}},
		{Name: "scalar", Attrs: Attrs{"shape": []int{}, "seed": 5, "offset": 9}},
	}
	for _, d := range dtypes {
		s = append(s, Sample{Name: d.String(), Attrs: Attrs{"shape": []int{3, 4}, "dtype": d, "seed": 11, "offset": 2}})
	}
	return s
}

func dropoutInfer(in []Meta, a Attrs) ([]Meta, error) {
	if p := a.Float("p"); !(p >= 0 && p <= 1) {
		return nil, fmt.Errorf("p must be in [0, 1], got %v", p)
	}
	return InferSame(in, a)
}

func init() {
	randintAttrs := creationAttrs(
		AttrSpec{Name: "low", Kind: AttrInt, Default: 0, Doc: "lowest value (inclusive)"},
		AttrSpec{Name: "high", Kind: AttrInt, Required: true, Doc: "one above the highest value"})
	randintAttrs[1].Default = I64
	MustRegister(
		&OpDef{
			Name: "rand", Category: "random", Doc: "Uniform draws in [0, 1) from the Philox stream.",
			Attrs: creationAttrs(), Infer: inferRandFloat, Random: true,
			Samples: randSamples(F64, F16, BF16),
		},
		&OpDef{
			Name: "randn", Category: "random", Doc: "Standard normal draws (Box-Muller over the Philox stream).",
			Attrs: creationAttrs(), Infer: inferRandFloat, Random: true,
			Samples: randSamples(F64, F16),
		},
		&OpDef{
			Name: "randint", Category: "random", Doc: "Integers drawn uniformly from [low, high) (low + bits mod (high-low)).",
			Attrs: randintAttrs, Infer: inferRandint, Random: true,
			Samples: []Sample{
				{Name: "i64", Attrs: Attrs{"shape": []int{3, 5}, "high": 10, "seed": 42, "offset": 0}},
				{Name: "low", Attrs: Attrs{"shape": []int{8}, "low": -5, "high": 5, "seed": 3, "offset": 7}},
				{Name: "i8", Attrs: Attrs{"shape": []int{6}, "low": -128, "high": 128, "dtype": I8, "seed": 9, "offset": 0}},
				{Name: "wide", Attrs: Attrs{"shape": []int{5}, "low": -(1 << 40), "high": 1 << 40, "seed": 9, "offset": 1}},
				{Name: "f32", Attrs: Attrs{"shape": []int{2, 2}, "high": 100, "dtype": F32, "seed": 2, "offset": 0}},
				{Name: "empty", Attrs: Attrs{"shape": []int{0}, "high": 3, "seed": 2, "offset": 0}},
			},
		},
		&OpDef{
			Name: "bernoulli", Category: "random", Doc: "1 where a uniform draw is below p, else 0 (same shape and dtype as p).",
			Inputs: []InputSpec{{Name: "p", DTypes: floatsOnly, NoGrad: true}},
			Infer:  InferSame, Random: true,
			Samples: []Sample{
				{Name: "f32", Inputs: []Gen{GU(F32, 0, 1, 4, 5)}, Attrs: Attrs{"seed": 42, "offset": 0}},
				{Name: "edges", Inputs: []Gen{GV(F32, []float64{0, 1, 0.5, 1, 0}, 5)}, Attrs: Attrs{"seed": 1, "offset": 5}},
				{Name: "strided", Inputs: []Gen{GU(F32, 0, 1, 4, 3).AsStrided()}, Attrs: Attrs{"seed": 8, "offset": 0}},
				{Name: "f64", Inputs: []Gen{GU(F64, 0, 1, 6)}, Attrs: Attrs{"seed": 4, "offset": 2}},
				{Name: "empty", Inputs: []Gen{GU(F32, 0, 1, 0, 2)}, Attrs: Attrs{"seed": 4, "offset": 2}},
			},
		},
		&OpDef{
			Name: "rand_like", Category: "random", Doc: "Uniform draws in [0, 1) with the shape (and dtype) of x.",
			Inputs: []InputSpec{{Name: "x", NoGrad: true}}, Attrs: likeAttrs(), Infer: inferRandLike, Random: true,
			Samples: []Sample{
				{Name: "f32", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"seed": 42, "offset": 0}},
				{Name: "f64", Inputs: []Gen{G(F64, 5)}, Attrs: Attrs{"seed": 42, "offset": 6}},
				{Name: "to_bf16", Inputs: []Gen{GI(I32, 0, 9, 2, 3)}, Attrs: Attrs{"dtype": BF16, "seed": 1, "offset": 0}},
				{Name: "empty", Inputs: []Gen{G(F32, 0)}, Attrs: Attrs{"seed": 1, "offset": 0}},
			},
		},
		&OpDef{
			Name: "randn_like", Category: "random", Doc: "Standard normal draws with the shape (and dtype) of x.",
			Inputs: []InputSpec{{Name: "x", NoGrad: true}}, Attrs: likeAttrs(), Infer: inferRandLike, Random: true,
			Samples: []Sample{
				{Name: "f32", Inputs: []Gen{G(F32, 3, 4)}, Attrs: Attrs{"seed": 42, "offset": 0}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 1, 3)}, Attrs: Attrs{"seed": 5, "offset": 100}},
				{Name: "to_f64", Inputs: []Gen{GI(I64, 0, 9, 4)}, Attrs: Attrs{"dtype": F64, "seed": 1, "offset": 0}},
			},
		},
		&OpDef{
			Name: "dropout", Category: "random", Random: true,
			Doc:    "Zero each element with probability p and scale the rest by 1/(1-p); identity when not training.",
			Inputs: []InputSpec{{Name: "x", DTypes: floatsOnly}},
			Attrs: []AttrSpec{
				{Name: "p", Kind: AttrFloat, Default: 0.5, Doc: "probability of zeroing an element"},
				{Name: "training", Kind: AttrBool, Default: true, Doc: "apply dropout; false makes the op the identity"},
			},
			Infer: dropoutInfer,
			Backward: func(g *GradCtx) ([]*Tensor, error) {
				// The same seed and offset redraw the same mask, so dropout
				// of the gradient is its backward rule.
				return []*Tensor{call1("dropout", g.Attrs, g.Grads[0])}, nil
			},
			Samples: []Sample{
				{Name: "half", Inputs: []Gen{G(F32, 4, 6)}, Attrs: Attrs{"p": 0.5, "seed": 7, "offset": 0}},
				{Name: "offset_wide_seed", Inputs: []Gen{G(F32, 3, 5)}, Attrs: Attrs{"p": 0.2, "seed": 0x1234_5678_9ABC, "offset": 5}},
				{Name: "eval", Inputs: []Gen{G(F32, 2, 3)}, Attrs: Attrs{"p": 0.5, "training": false, "seed": 1, "offset": 0}},
				{Name: "p0_strided", Inputs: []Gen{G(F32, 3, 4).AsStrided()}, Attrs: Attrs{"p": 0.0, "seed": 3, "offset": 0}},
				{Name: "p1", Inputs: []Gen{G(F32, 5)}, Attrs: Attrs{"p": 1.0, "seed": 3, "offset": 0}},
				{Name: "f64", Inputs: []Gen{G(F64, 2, 9)}, Attrs: Attrs{"p": 0.3, "seed": 11, "offset": 2}},
				{Name: "f16", Inputs: []Gen{G(F16, 7)}, Attrs: Attrs{"p": 0.25, "seed": 5, "offset": 0}},
				{Name: "empty", Inputs: []Gen{G(F32, 0, 3)}, Attrs: Attrs{"p": 0.5, "seed": 5, "offset": 0}},
			},
		},
	)
}
