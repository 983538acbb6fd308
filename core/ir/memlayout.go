package ir

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

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
		st, ok := oprules.ReshapeStrides(x.Shape, in, o.Shape)
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
