package webgpu

import (
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// A view can broadcast a few elements to more than a GPU thread can count
// (expand(ones(1), [2^32+5]) has 2^32+5 members), so a reduced dim that
// every input broadcasts (stride 0) is read once, as the CPU backend does
// (backends/cpu/stream.go): the group's distinct members are reduced, and
// the result accounts for the repeats - sums times the repeat count m,
// products to the m-th power, means, extrema, any and all unchanged, an
// argmax's index mapped back to the full view.

// distinct is a reduction frame over the distinct members of its inputs.
type distinct struct {
	f    frame
	ins  []*core.Tensor // the inputs with the repeated dims cut to one element
	mult int            // how many times each distinct member repeats
	cut  []bool         // per dim of the full shape: a repeated dim, cut
	full core.Shape
}

// distinctFrame reduces axes of shape over inputs ins (each broadcast to
// shape), with the reduced dims they all broadcast cut out.
func distinctFrame(shape core.Shape, axes []int, ins ...*core.Tensor) distinct {
	d := distinct{ins: ins, mult: 1, cut: make([]bool, len(shape)), full: shape}
	strides := make([][]int, len(ins))
	for i, t := range ins {
		strides[i] = lower.BroadcastStrides(t, shape)
	}
	cutShape := shape.Clone()
	for _, a := range axes {
		if shape[a] <= 1 {
			continue
		}
		repeated := true
		for i := range ins {
			repeated = repeated && strides[i][a] == 0
		}
		if repeated {
			d.cut[a], d.mult, cutShape[a] = true, d.mult*shape[a], 1
		}
	}
	if d.mult == 1 {
		d.f = newFrame(shape, axes)
		return d
	}
	d.ins = make([]*core.Tensor, len(ins))
	for i, t := range ins {
		d.ins[i] = cutView(t, shape, d.cut)
	}
	d.f = newFrame(cutShape, axes)
	return d
}

// cutView is t with its dims that align with the cut dims of shape at
// size 1 (t broadcasts them, so no element is lost).
func cutView(t *core.Tensor, shape core.Shape, cut []bool) *core.Tensor {
	ts := t.Shape()
	lead := len(shape) - len(ts)
	for d := range ts {
		if cut[d+lead] {
			ts[d] = 1
		}
	}
	return core.NewView(t, ts, t.Strides(), t.Offset())
}

// setRepeat puts the repeat count where the reduce bodies read it: as an
// f32 at slot 41; for powers as a u32 at slot 43 (past 2^32, a count of
// the same parity: a product repeated that often has already reached its
// limit, 0, +-1 or +-inf); capped at 2^31-1 at slot 44 (a nonzero i32
// scaled further cannot fit); and mod 2^32 at slot 45.
func (d distinct) setRepeat(p *params) {
	p.setF(41, float64(d.mult))
	m := uint64(d.mult)
	if m > math.MaxUint32 {
		m = math.MaxUint32 - 1 + m&1
	}
	p.setU(43, uint32(m))
	p.setN(44, min(d.mult, math.MaxInt32)) // integer scaling: at most i32's range matters
	p.setU(45, uint32(d.mult))             // and wrapping u32 sums: the count mod 2^32
}

// keptView is a tensor of one value per group (contiguous, groups long),
// viewed over the frame's shape with the reduced dims at size 1, so a
// second pass can read each group's statistic as an operand.
func keptView(stat *core.Tensor, f frame) *core.Tensor {
	shape := f.Shape.Clone()
	strides := make([]int, len(shape))
	acc := 1
	red := map[int]bool{}
	for _, a := range f.Reduced {
		red[a] = true
	}
	for d := len(shape) - 1; d >= 0; d-- {
		if red[d] {
			shape[d] = 1
			continue
		}
		strides[d] = acc
		acc *= shape[d]
	}
	return core.NewView(stat, shape, strides, stat.Offset())
}

// remapSlots writes, for an argmax over the distinct members, how a member
// index maps back to the full view: for each uncut reduced dim in order,
// its size (slots 18..25) and its row-major stride over the full reduced
// dims (slots 26..33); their count at slot 34. The first of equal members
// has index 0 in every cut dim, so no other term enters.
func (d distinct) remapSlots(p *params) {
	n := 0
	for i, a := range d.f.Reduced {
		if d.cut[a] {
			continue
		}
		stride := 1
		for _, b := range d.f.Reduced[i+1:] {
			stride *= d.full[b]
		}
		p.setN(18+n, d.full[a])
		p.setN(26+n, stride)
		n++
	}
	p.setN(34, n)
}

// remapWGSL maps a member index at (u32) of the distinct frame to the full
// view's reduced index (remapSlots).
const remapWGSL = `	var rem = at;
	var full = 0u;
	for (var j = pu(34u); j > 0u; j--) {
		let s = pu(17u + j);
		full += (rem % s) * pu(25u + j);
		rem /= s;
	}
	at = full;
`
