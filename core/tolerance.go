package core

import "math"

// Tol is an absolute and a relative tolerance: |got-want| <= Atol + Rtol*|want|.
type Tol struct{ Atol, Rtol float64 }

// Tolerances is the one place that states how close a result must be to the
// NumPy/PyTorch reference, per output dtype. Integer and bool results must be
// exact. An OpDef's TolScale widens these for ops that accumulate.
var Tolerances = map[DType]Tol{
	F64:  {Atol: 1e-10, Rtol: 1e-9},
	F32:  {Atol: 1e-5, Rtol: 1e-4},
	F16:  {Atol: 1e-3, Rtol: 2e-3},
	BF16: {Atol: 1e-2, Rtol: 1.6e-2},
}

// Tolerance is the tolerance of this op's outputs of dtype d.
func (d *OpDef) Tolerance(dt DType) Tol {
	t := Tolerances[dt]
	if d.TolScale > 0 {
		t.Atol *= d.TolScale
		t.Rtol *= d.TolScale
	}
	return t
}

// Close compares two values: NaN matches NaN, infinities must match exactly.
func (t Tol) Close(got, want float64) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case math.IsInf(want, 0) || math.IsInf(got, 0):
		return got == want
	}
	return math.Abs(got-want) <= t.Atol+t.Rtol*math.Abs(want)
}
