package ir

import "github.com/webtensor/webtensor/core"

// Static strides for the memory plan: a view op either shares its input's
// buffer or, for a reshape the strides forbid, copies into a new one, as
// core's view ops decide at run time. Following the strides through the
// graph (inputs, constants and computed values are contiguous) lets the
// plan count those copies.

// viewStrides is the strides of layout node n's output given its input's
// (nil when unknown), and whether the output is a view rather than a copy.
func viewStrides(n *Node, in []int) (out []int, view bool) {
	x, o := n.Inputs[0], n.Outputs[0]
	if in == nil {
		if reshapeLike[n.Op] {
			return nil, false // unknown layout: assume the copy
		}
		return nil, true
	}
	switch {
	case reshapeLike[n.Op]:
		st, ok := reshapeStrides(x.Shape, in, o.Shape)
		if !ok {
			return core.ContiguousStrides(o.Shape), false
		}
		return st, true
	case isPermute(n.Op):
		p, ok := permOf(n)
		if !ok {
			return nil, true
		}
		st := make([]int, len(p))
		for i, d := range p {
			st[i] = in[d]
		}
		return st, true
	case n.Op == "expand":
		st := make([]int, len(o.Shape))
		lead := len(o.Shape) - len(x.Shape)
		for i := range x.Shape {
			if x.Shape[i] == o.Shape[lead+i] {
				st[lead+i] = in[i]
			}
		}
		return st, true
	case n.Op == "slice":
		axis, ok1 := attrInt(n, "axis")
		step, ok2 := attrInt(n, "step")
		axis, err := core.NormAxis(axis, len(x.Shape))
		if !ok1 || !ok2 || err != nil {
			return nil, true
		}
		st := append([]int{}, in...)
		st[axis] *= step
		return st, true
	}
	return nil, true
}

// reshapeStrides is core's rule for a reshape without a copy: the strides
// of shape over a tensor of oldShape and oldStrides, if a view can have them.
func reshapeStrides(oldShape core.Shape, oldStrides []int, shape core.Shape) ([]int, bool) {
	if oldShape.Numel() == 0 || len(oldShape) == 0 {
		return core.ContiguousStrides(shape), true
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
