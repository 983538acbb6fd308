package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Reductions run in levels. A group is split into parts when it has too
// many members for one thread: few long groups (a loss summed to a
// scalar, a bias gradient summed over the batch) would leave the GPU idle
// in long serial loops, and a device with a loop limit (gpu_looplimit.go) would
// stop such loops short. One launch reduces every part to a partial, the
// partials are reduced the same way (split again while there are more
// than one thread may loop over), and the last launch writes the result.
// The parts depend only on the shape, so results are deterministic, and a
// sum of parts is at least as accurate as one pass.

const (
	splitMinMembers = 512  // shorter groups are reduced in one pass unless a loop limit says otherwise
	splitThreads    = 2048 // parts enough for about this many threads
	splitMinPart    = 128  // members per part, at least
)

// splitPlan is how a frame's groups are cut: parts of chunk members.
type splitPlan struct{ parts, chunk int }

func (b *Backend) planSplit(groups, members int) splitPlan {
	parts := 1
	if members >= splitMinMembers && groups < splitThreads/2 {
		parts = min((splitThreads+groups-1)/groups, (members+splitMinPart-1)/splitMinPart)
	}
	if budget := b.loopBudget(); budget > 0 {
		parts = max(parts, (members+budget-1)/budget)
	}
	if parts <= 1 {
		return splitPlan{1, members}
	}
	chunk := (members + parts - 1) / parts
	return splitPlan{(members + chunk - 1) / chunk, chunk}
}

// The loop over a thread's members: all of its group, or its part's range.
const (
	wholeLoop = "for (var r = 0u; r < R; r++)"
	partLoop  = "for (var r = part * pu(51u); r < min(R, part * pu(51u) + pu(51u)); r++)"
)

// reducer is one reduction as the levels run it. Its accumulator takes
// values through read expressions (one per word of a partial), which are
// the op's input expressions at the first level and the partial's words
// later.
type reducer struct {
	partial core.DType                              // dtype of the partials
	words   int                                     // words per partial: 1, or 2 (kept in two halves of the partial tensor)
	accum   func(read []string, loop string) string // declares and fills the accumulator over loop
	keep    string                                  // stores the accumulator as partial t: out0[t] (and out0[t + pu(52u)])
	final   string                                  // stores the result of group o
	next    []string                                // read expressions of a partial, over v0 (and v1)
	flagged bool                                    // the final level may call fail()
	set     func(*params)                           // slots every level's bodies read
}

// runReducer reduces frame f of inputs ins into out by red; first are the
// read expressions of the inputs. A reducer that may fail gets a flag, and
// op fails with errI64Range when its last level marked it.
func (b *Backend) runReducer(op string, f frame, ins []*core.Tensor, out *core.Tensor, red reducer, first []string) error {
	var flag *core.Tensor
	if red.flagged && f.Groups() > 0 {
		var err error
		if flag, err = b.newFlag(); err != nil {
			return err
		}
	}
	err := b.reduceLevels(f, ins, out, red, first, flag)
	if flag == nil {
		return err
	}
	if err != nil {
		flag.Release()
		return err
	}
	return b.checkFlag(op, flag, errI64Range)
}

// reduceLevels runs one level, splitting f's groups when planSplit says
// so, and recurses on the partials.
func (b *Backend) reduceLevels(f frame, ins []*core.Tensor, out *core.Tensor, red reducer, read []string, flag *core.Tensor) error {
	groups, members := f.Groups(), f.Members()
	plan := b.planSplit(groups, members)
	if plan.parts == 1 {
		body := red.accum(read, wholeLoop) + red.final
		return b.launchReduce(f, ins, out, body, red.set, groups, mapWG, reduceMode{flag: flag})
	}
	half := groups * plan.parts
	partial, err := core.Empty(b, core.Shape{red.words * half}, red.partial)
	if err != nil {
		return err
	}
	defer partial.Release()
	set := func(p *params) {
		if red.set != nil {
			red.set(p)
		}
		p.setN(50, plan.parts)
		p.setN(51, plan.chunk)
		p.setN(52, half)
	}
	if err := b.launchReduce(f, ins, partial, red.accum(read, partLoop)+red.keep, set, half, mapWG, reduceMode{split: true}); err != nil {
		return err
	}
	views := make([]*core.Tensor, red.words)
	for w := range views {
		views[w] = core.NewView(partial, core.Shape{groups, plan.parts}, []int{plan.parts, 1}, w*half)
	}
	return b.reduceLevels(newFrame(core.Shape{groups, plan.parts}, []int{1}), views, out, red, red.next, flag)
}

// kahan is WGSL that sums expr over loop into name with Kahan's
// compensation, so a long f32 sum stays within the tolerance of the CPU's
// f64 accumulation.
func kahan(name, expr, loop string) string {
	return fmt.Sprintf(`	var %[1]s = 0.0;
	var %[1]s_c = 0.0;
	%[3]s {
		let ky = (%[2]s) - %[1]s_c;
		let ks = %[1]s + ky;
		%[1]s_c = select((ks - %[1]s) - ky, 0.0, is_inf(ks));
		%[1]s = ks;
	}
`, name, expr, loop)
}

// kahanSum is kahan over a whole group, for the kernels that sum inside a
// larger body.
func kahanSum(name, expr string) string { return kahan(name, expr, wholeLoop) }

// sumReducer sums f32 values; final makes the result from acc and the
// group's member count, both as f32 expressions (the count and the repeat
// count are at slots 40 and 41, see sumRun).
func sumReducer(out core.DType, final func(acc, count string) string, set func(*params)) reducer {
	return reducer{partial: core.F32, words: 1,
		accum: func(read []string, loop string) string { return kahan("acc", read[0], loop) },
		keep:  "\tout0[t] = acc;\n",
		final: "\tout0[o] = " + storeExpr(out, final("(acc * pf(41u))", "(pf(40u) * pf(41u))")) + ";\n",
		next:  []string{"v0(o, r)"},
		set:   set,
	}
}

// sumRun writes into out, for each group o of f, final(acc, count) where
// acc is the f32 sum over the group's members r of expr (WGSL over
// v0(o, r).. for ins) and count is the group's size, as f32 expressions.
// Reduced dims that every input broadcasts are read once.
func (b *Backend) sumRun(f frame, ins []*core.Tensor, out *core.Tensor, expr string, final func(acc, count string) string) error {
	d := distinctFrame(f.Shape, f.Reduced, ins...)
	set := func(p *params) {
		p.setF(40, float64(d.f.Members()))
		d.setRepeat(p)
	}
	return b.runReducer("sum", d.f, d.ins, out, sumReducer(out.DType(), final, set), []string{expr})
}
