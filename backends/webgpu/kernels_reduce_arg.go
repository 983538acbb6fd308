package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// argmax and argmin find the first index of the best value; the first NaN
// wins and ends the search. Parts of a split group each find their best
// member, then a pass over each group's parts, in order, keeps the first
// best of theirs, reading the values again through the input: so the
// first of equal values and the first NaN win across parts too. Over the
// distinct members of a broadcast view, the index found is mapped back to
// the full view (remapSlots).

func argExtremeKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axis, flat, err := oprules.ArgReduceAxis(in.Rank(), k.Attrs)
		if err != nil {
			return err
		}
		axes := []int{axis}
		if flat {
			axes = make([]int, in.Rank())
			for i := range axes {
				axes[i] = i
			}
		}
		return gpuOf(k).argRun(in, axes, out, op)
	}
}

func (b *Backend) argRun(in *core.Tensor, axes []int, out *core.Tensor, op string) error {
	d := distinctFrame(in.Shape(), axes, in)
	nan := "false"
	if physical(in.DType()) == "f32" {
		nan = "is_nan(v)"
	}
	// search scans indices lo+1..hi-1 given as member indices by at(p).
	search := func(at string) string {
		return fmt.Sprintf(`	var at = %[1]s;
	var best = v0(o, at);
	for (var p = lo + 1u; p < hi; p++) {
		if %[2]s { break; }
		let r = %[3]s;
		let v = v0(o, r);
		if %[4]s || v %[5]s best { best = v; at = r; }
	}
`, at0(at), replaceV(nan, "best"), at, nan, op)
	}
	store := func(last bool) string {
		if !last {
			return "\tout0[t] = i32(at);\n"
		}
		s := ""
		if d.mult > 1 {
			s = remapWGSL
		}
		return s + "\tout0[o] = i32(at);\n"
	}
	set := func(p *params) {
		if d.mult > 1 {
			d.remapSlots(p)
		}
	}
	groups, members := d.f.Groups(), d.f.Members()
	// Level one: members directly.
	plan := b.planSplit(groups, members)
	if plan.parts == 1 {
		body := "\tlet lo = 0u;\n\tlet hi = R;\n" + search("p") + store(true)
		return b.launchReduce(d.f, d.ins, out, body, set, groups, mapWG, reduceMode{})
	}
	partial, err := core.Empty(b, core.Shape{groups * plan.parts}, core.I32)
	if err != nil {
		return err
	}
	defer func() { partial.Release() }()
	body := "\tlet lo = part * pu(51u);\n\tlet hi = min(R, lo + pu(51u));\n" + search("p") + store(false)
	err = b.launchReduce(d.f, d.ins, partial, body, chainSet(set, func(p *params) {
		p.setN(50, plan.parts)
		p.setN(51, plan.chunk)
	}), groups*plan.parts, mapWG, reduceMode{split: true})
	if err != nil {
		return err
	}
	// Later levels: the best members of the parts, read as in1 (a raw
	// operand: viewed with stride 0, its frame descriptor stays unused).
	n := plan.parts
	for {
		ones := make(core.Shape, len(d.f.Shape))
		for i := range ones {
			ones[i] = 1
		}
		ins := []*core.Tensor{d.ins[0], core.NewView(partial, ones, make([]int, len(ones)), 0)}
		at := "u32(in1[o * pu(53u) + p])"
		plan := b.planSplit(groups, n)
		perGroup := func(p *params) { p.setN(53, n) }
		if plan.parts == 1 {
			body := "\tlet lo = 0u;\n\tlet hi = pu(53u);\n" + search(at) + store(true)
			return b.launchReduce(d.f, ins, out, body, chainSet(set, perGroup), groups, mapWG, reduceMode{trips: n})
		}
		next, err := core.Empty(b, core.Shape{groups * plan.parts}, core.I32)
		if err != nil {
			return err
		}
		body := "\tlet lo = part * pu(51u);\n\tlet hi = min(pu(53u), lo + pu(51u));\n" + search(at) + store(false)
		err = b.launchReduce(d.f, ins, next, body, chainSet(set, perGroup, func(p *params) {
			p.setN(50, plan.parts)
			p.setN(51, plan.chunk)
		}), groups*plan.parts, mapWG, reduceMode{split: true, trips: plan.chunk})
		partial.Release()
		partial, n = next, plan.parts
		if err != nil {
			return err
		}
	}
}

// at0 is the member index at the start of a search: at(p) for p = lo.
func at0(at string) string {
	if at == "p" {
		return "lo"
	}
	return "u32(in1[o * pu(53u) + lo])"
}

// replaceV is a NaN test of another variable.
func replaceV(test, name string) string {
	if test == "false" {
		return test
	}
	return "is_nan(" + name + ")"
}
