package types

import (
	"fmt"
	"math"
)

// Shape is the extent of each dimension. A nil or empty Shape is a scalar.
type Shape []int

// Numel is the number of elements (1 for a scalar).
func (s Shape) Numel() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// Clone returns a copy that does not alias s.
func (s Shape) Clone() Shape { return append(Shape{}, s...) }

// Equal reports whether two shapes are the same.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

func (s Shape) String() string { return fmt.Sprint([]int(s)) }

// Validate rejects negative extents and element counts that overflow.
func (s Shape) Validate() error {
	n := 1
	for _, d := range s {
		if d < 0 {
			return fmt.Errorf("negative dimension in shape %v", []int(s))
		}
		if d != 0 && n > math.MaxInt32*64/d {
			return fmt.Errorf("shape %v has too many elements", []int(s))
		}
		n *= d
	}
	return nil
}
