package core

import (
	"fmt"
	"math"
)

// Rounding and clamping. Rounding ops have a zero gradient almost
// everywhere, as in PyTorch.

func ewCheckClamp(in Meta, a Attrs) error {
	if !a.Has("min") && !a.Has("max") {
		return fmt.Errorf("at least one of min and max must be given")
	}
	if in.DType.IsFloat() {
		return nil
	}
	for _, name := range []string{"min", "max"} {
		if a.Has(name) && math.IsNaN(a.Float(name)) {
			return fmt.Errorf("%s is NaN, which an integer tensor (%s) cannot hold", name, in.DType)
		}
	}
	return nil
}

// ewClampGrad passes the gradient where x lies within the bounds (bounds
// included, as PyTorch does).
func ewClampGrad(x, _, g *Tensor, a Attrs) *Tensor {
	var inside *Tensor
	if a.Has("min") {
		inside = ew("ge", x, ewConst(x, a.Float("min")))
	}
	if a.Has("max") {
		below := ew("le", x, ewConst(x, a.Float("max")))
		if inside == nil {
			inside = below
		} else {
			inside = ew("logical_and", inside, below)
		}
	}
	return ew("where", inside, g, ewConst(g, 0))
}

func ewBoolGen(shape ...int) Gen { return Gen{Shape: Shape(shape), DType: Bool, Kind: "bool"} }

// ewHalves are the ties where round-half-to-even differs from rounding away
// from zero.
var ewHalves = []float64{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5}

func init() {
	MustRegister(
		unaryDef(unarySpec{name: "floor", doc: "Largest integer <= x; integers are returned unchanged.",
			result: unaryKeep, dtypes: numeric, smooth: ewAwayFromKinks, grad: ewZeroGrad}),
		unaryDef(unarySpec{name: "ceil", doc: "Smallest integer >= x; integers are returned unchanged.",
			result: unaryKeep, dtypes: numeric, smooth: ewAwayFromKinks, grad: ewZeroGrad}),
		unaryDef(unarySpec{name: "round", doc: "Nearest integer, halves to even (like PyTorch and NumPy).",
			result: unaryKeep, dtypes: numeric, smooth: ewAwayFromKinks, grad: ewZeroGrad,
			extra: []Sample{{Name: "halves", Inputs: []Gen{GV(F32, ewHalves, 8)}, NoGrad: true}}}),
		unaryDef(unarySpec{name: "clamp",
			doc:    "Limit x to [min, max] (either may be absent; min > max gives max). Integer tensors keep their dtype: bounds round inward.",
			result: unaryKeep, dtypes: numeric, smooth: ewAwayFromKinks, check: ewCheckClamp,
			attrs: []AttrSpec{
				{Name: "min", Kind: AttrFloat, Doc: "lower bound; absent means none"},
				{Name: "max", Kind: AttrFloat, Doc: "upper bound; absent means none"},
			},
			ints:        GI(I64, -6, 6, 8),
			sampleAttrs: Attrs{"min": -1.0, "max": 1.5},
			extra: []Sample{
				{Name: "min_only", Inputs: []Gen{ewAwayFromKinks(F32, 3, 4)}, Attrs: Attrs{"min": 0.5}},
				{Name: "f64_size1", Inputs: []Gen{ewAwayFromKinks(F64, 1, 6)}, Attrs: Attrs{"max": -0.5}},
				{Name: "f16", Inputs: []Gen{ewAwayFromKinks(F16, 6)}, Attrs: Attrs{"min": 1.0, "max": -1.0}},
			},
			grad: ewClampGrad}),
		unaryDef(unarySpec{name: "nan_to_num",
			doc:    "Replace NaN by nan, +inf by posinf and -inf by neginf (defaults: 0 and the dtype's largest and lowest finite values).",
			result: unaryKeep,
			attrs: []AttrSpec{
				{Name: "nan", Kind: AttrFloat, Default: 0.0, Doc: "value for NaN"},
				{Name: "posinf", Kind: AttrFloat, Doc: "value for +inf; absent means the dtype's largest finite value"},
				{Name: "neginf", Kind: AttrFloat, Doc: "value for -inf; absent means the dtype's lowest finite value"},
			},
			// Reference vectors are computed in f64, where the defaults are
			// f64's limits; f32 and f16 samples with infinities therefore give
			// the replacement values explicitly.
			sampleAttrs: Attrs{"posinf": 1e4, "neginf": -1e4},
			extra: []Sample{
				{Name: "f64_size1", Inputs: []Gen{G(F64, 1, 12).WithKind("special")}, NoGrad: true},
				{Name: "strided", Inputs: []Gen{G(F32, 3, 4).WithKind("special").AsStrided()},
					Attrs: Attrs{"nan": -7.5, "posinf": 100.0, "neginf": -3.0}, NoGrad: true},
				{Name: "f16", Inputs: []Gen{G(F16, 12).WithKind("special")},
					Attrs: Attrs{"nan": 1.0, "posinf": 60000.0, "neginf": -2.0}, NoGrad: true},
			},
			grad: func(x, _, g *Tensor, _ Attrs) *Tensor {
				return ewZeroWhere(ew("logical_or", ew("isnan", x), ew("isinf", x)), g)
			}}),
	)
}
