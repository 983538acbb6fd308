package lower

import "github.com/webtensor/webtensor/core"

// Frame splits a shape into kept dims (which index the groups, one output
// each) and reduced dims (the members of a group), for reductions, scans,
// normalisations and sorts. Operands are walked through their own strides
// in both parts, so strided and broadcast views need no copy.
type Frame struct {
	Shape   core.Shape
	Kept    []int // dims of Shape that index the groups, in order
	Reduced []int // dims reduced inside each group, in order
}

// NewFrame reduces axes of shape.
func NewFrame(shape core.Shape, axes []int) Frame {
	f := Frame{Shape: shape}
	isRed := map[int]bool{}
	for _, a := range axes {
		isRed[a] = true
	}
	for d := range shape {
		if isRed[d] {
			f.Reduced = append(f.Reduced, d)
		} else {
			f.Kept = append(f.Kept, d)
		}
	}
	return f
}

// Groups is the number of groups (outputs).
func (f Frame) Groups() int {
	n := 1
	for _, d := range f.Kept {
		n *= f.Shape[d]
	}
	return n
}

// Members is the number of elements in each group.
func (f Frame) Members() int {
	n := 1
	for _, d := range f.Reduced {
		n *= f.Shape[d]
	}
	return n
}

// FrameLayout is a frame as kernels index it: the kept and reduced shapes
// and, for each operand, its strides over both, with dims merged where
// every operand allows (group and member indexes stay row-major, so merging
// changes no kernel body, only the cost of indexing).
type FrameLayout struct {
	KeptShape, RedShape     []int
	KeptStrides, RedStrides [][]int
	Offsets                 []int
}

// Layout lays out operands ts, each broadcast to the frame's shape.
func (f Frame) Layout(ts ...*core.Tensor) FrameLayout {
	var l FrameLayout
	l.KeptShape, l.RedShape = make([]int, len(f.Kept)), make([]int, len(f.Reduced))
	for i, d := range f.Kept {
		l.KeptShape[i] = f.Shape[d]
	}
	for i, d := range f.Reduced {
		l.RedShape[i] = f.Shape[d]
	}
	l.KeptStrides, l.RedStrides = make([][]int, len(ts)), make([][]int, len(ts))
	l.Offsets = make([]int, len(ts))
	for k, t := range ts {
		st := BroadcastStrides(t, f.Shape)
		l.KeptStrides[k], l.RedStrides[k] = make([]int, len(f.Kept)), make([]int, len(f.Reduced))
		for i, d := range f.Kept {
			l.KeptStrides[k][i] = st[d]
		}
		for i, d := range f.Reduced {
			l.RedStrides[k][i] = st[d]
		}
		l.Offsets[k] = t.Offset()
	}
	l.KeptShape, l.KeptStrides = Coalesce(l.KeptShape, l.KeptStrides)
	l.RedShape, l.RedStrides = Coalesce(l.RedShape, l.RedStrides)
	return l
}
