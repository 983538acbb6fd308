package core

import (
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/core/types"
)

// Shape is the extent of each dimension. A nil or empty Shape is a scalar
// (core/types declares it, with its methods).
type Shape = types.Shape

// The shape rules below are core/oprules', repeated here for model code.

// ContiguousStrides returns row-major strides in elements.
func ContiguousStrides(s Shape) []int { return oprules.ContiguousStrides(s) }

// BroadcastShapes returns the NumPy broadcast of the given shapes.
func BroadcastShapes(shapes ...Shape) (Shape, error) { return oprules.BroadcastShapes(shapes...) }

// NormAxis maps a possibly negative axis into [0, rank).
func NormAxis(axis, rank int) (int, error) { return oprules.NormAxis(axis, rank) }

// NormAxes normalises a list of axes; nil means every axis. Duplicates are
// rejected. The result is sorted ascending.
func NormAxes(axes []int, rank int) ([]int, error) { return oprules.NormAxes(axes, rank) }

// ReduceShape is the shape after reducing axes (sorted, normalised).
func ReduceShape(s Shape, axes []int, keepdim bool) Shape {
	return oprules.ReduceShape(s, axes, keepdim)
}
