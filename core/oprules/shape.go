package oprules

import (
	"fmt"

	"github.com/webtensor/webtensor/core/types"
)

// Shape is core's Shape (the alias keeps this package's signatures short).
type Shape = types.Shape

// Attrs is core's Attrs.
type Attrs = types.Attrs

// DType is core's DType.
type DType = types.DType

// ContiguousStrides returns row-major strides in elements.
func ContiguousStrides(s Shape) []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// BroadcastShapes returns the NumPy broadcast of the given shapes.
func BroadcastShapes(shapes ...Shape) (Shape, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(Shape, rank)
	if err := BroadcastInto(out, shapes); err != nil {
		return nil, err
	}
	return out, nil
}

// BroadcastInto writes the broadcast of shapes into out, whose length is
// their largest rank.
func BroadcastInto(out Shape, shapes []Shape) error {
	rank := len(out)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := out[off+i]
			switch {
			case o == d || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				return fmt.Errorf("shapes %v cannot be broadcast together (dim %d: %d vs %d)", shapesString(shapes), off+i-rank, o, d)
			}
		}
	}
	return nil
}

func shapesString(shapes []Shape) string {
	s := ""
	for i, sh := range shapes {
		if i > 0 {
			s += " and "
		}
		s += sh.String()
	}
	return s
}

// NormAxis maps a possibly negative axis into [0, rank).
func NormAxis(axis, rank int) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		if rank == 0 {
			return 0, fmt.Errorf("axis %d out of range for a scalar (rank 0)", axis)
		}
		return 0, fmt.Errorf("axis %d out of range for rank %d (valid: %d..%d)", axis, rank, -rank, rank-1)
	}
	return a, nil
}

// NormAxes normalises a list of axes; nil means every axis. Duplicates are
// rejected. The result is sorted ascending.
func NormAxes(axes []int, rank int) ([]int, error) {
	if axes == nil {
		out := make([]int, rank)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	seen := make([]bool, rank)
	out := make([]int, 0, len(axes))
	for _, a := range axes {
		n, err := NormAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("axis %d repeated in %v", a, axes)
		}
		seen[n] = true
		out = append(out, n)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// ReduceShape is the shape after reducing axes (sorted, normalised).
func ReduceShape(s Shape, axes []int, keepdim bool) Shape {
	red := make([]bool, len(s))
	for _, a := range axes {
		red[a] = true
	}
	out := Shape{}
	for i, d := range s {
		switch {
		case !red[i]:
			out = append(out, d)
		case keepdim:
			out = append(out, 1)
		}
	}
	return out
}
