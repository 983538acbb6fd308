package oprules

import "fmt"

// Views: strides of a reshape without copying, and permutations.

// ReshapeStrides computes strides for viewing a tensor of oldShape and
// oldStrides as shape without a copy, merging and splitting runs of dims
// that are contiguous with each other (PyTorch's computeStride); ok=false
// when no view exists. The IR's layout planning asks the same question.
func ReshapeStrides(oldShape Shape, oldStrides []int, shape Shape) ([]int, bool) {
	if oldShape.Numel() == 0 || len(oldShape) == 0 {
		return ContiguousStrides(shape), true
	}
	newStrides := make([]int, len(shape))
	viewD := len(shape) - 1
	chunkBase := oldStrides[len(oldStrides)-1]
	tensorN, viewN := 1, 1
	for d := len(oldShape) - 1; d >= 0; d-- {
		tensorN *= oldShape[d]
		if d == 0 || (oldShape[d-1] != 1 && oldStrides[d-1] != tensorN*chunkBase) {
			for viewD >= 0 && (viewN < tensorN || shape[viewD] == 1) {
				newStrides[viewD] = viewN * chunkBase
				viewN *= shape[viewD]
				viewD--
			}
			if viewN != tensorN {
				return nil, false
			}
			if d > 0 {
				chunkBase = oldStrides[d-1]
				tensorN, viewN = 1, 1
			}
		}
	}
	if viewD != -1 {
		return nil, false
	}
	return newStrides, true
}

// NormAxesOrdered normalises axes keeping their order; duplicates rejected.
func NormAxesOrdered(axes []int, rank int) ([]int, error) {
	seen := make([]bool, rank)
	out := make([]int, len(axes))
	for i, a := range axes {
		n, err := NormAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("axis %d repeated in %v", a, axes)
		}
		seen[n], out[i] = true, n
	}
	return out, nil
}
