package oprules

import (
	"fmt"
	"math"
)

// The axes of reductions, arg-reductions and scans.

// ArgReduceAxis resolves the "axis" attribute of argmax/argmin: flat is true
// when the axis is absent and the tensor is searched as if flattened. A
// rank-0 tensor accepts axis 0 or -1, like PyTorch.
func ArgReduceAxis(rank int, a Attrs) (axis int, flat bool, err error) {
	if !a.Has("axis") {
		return 0, true, nil
	}
	axis, err = NormAxis(a.Int("axis"), max(rank, 1))
	return axis, false, err
}

// ScanAxis resolves the "axis" attribute of cumsum/cumprod (a rank-0 tensor
// accepts 0 and -1).
func ScanAxis(rank int, a Attrs) (int, error) { return NormAxis(a.Int("axis"), max(rank, 1)) }

// ValidNormOrd reports whether ord is a vector-norm order we compute:
// 0 (count of non-zeros), any p > 0, +inf (max |x|) or -inf (min |x|).
func ValidNormOrd(ord float64) error {
	if math.IsNaN(ord) || (ord < 0 && !math.IsInf(ord, -1)) {
		return fmt.Errorf("ord %v is not supported (want 0, a positive number, inf or -inf)", ord)
	}
	return nil
}

// ReducedAxes returns the normalised axes of a reduction call on a tensor
// of the given rank.
func ReducedAxes(rank int, a Attrs) []int {
	axes, _ := NormAxes(a.Ints("axes"), rank)
	return axes
}
