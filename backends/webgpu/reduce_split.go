package webgpu

import (
	"strings"

	"github.com/webtensor/webtensor/core"
)

// A sum with few groups and long ones (a loss summed to a scalar, a bias
// gradient summed over the batch) gives one thread each a long serial
// loop and leaves the GPU idle. sumRun splits each group into parts when
// that is so: one launch sums every part (Kahan, in order), a second sums
// each group's parts. The parts depend only on the shape, so results stay
// deterministic, and summing parts is at least as accurate as one pass.

const (
	splitMinMembers = 512  // shorter groups are summed in one pass
	splitThreads    = 2048 // parts enough for about this many threads
	splitMinPart    = 128  // members per part, at least
)

// splitParts is the number of parts each group of f is summed in; 1 means
// one pass.
func splitParts(f frame) int {
	groups, members := f.Groups(), f.Members()
	if members < splitMinMembers || groups >= splitThreads/2 {
		return 1
	}
	parts := min((splitThreads+groups-1)/groups, (members+splitMinPart-1)/splitMinPart)
	return max(parts, 1)
}

// sumRun writes into out, for each group o of f, final(acc, count) where
// acc is the f32 sum over the group's members r of expr (WGSL over
// v0(o, r).. for ins) and count is the group's size as an f32 expression.
func (b *Backend) sumRun(f frame, ins []*core.Tensor, out *core.Tensor, expr string, final func(acc, count string) string) error {
	parts := splitParts(f)
	if parts == 1 {
		body := kahanSum("acc", expr) + "\tout0[o] = " + storeExpr(out.DType(), final("acc", "f32(R)")) + ";\n"
		return b.reduceRun(f, ins, out, false, body, nil)
	}
	groups, members := f.Groups(), f.Members()
	partial, err := core.Empty(b, core.Shape{groups, parts}, core.F32)
	if err != nil {
		return err
	}
	defer partial.Release()
	chunk := (members + parts - 1) / parts
	body := strings.Replace(kahanSum("acc", expr), "for (var r = 0u; r < R; r++)",
		"for (var r = part * pu(51u); r < min(R, part * pu(51u) + pu(51u)); r++)", 1) + "\tout0[t] = acc;\n"
	if err := b.splitRun(f, ins, partial, body, parts, chunk); err != nil {
		return err
	}
	whole := kahanSum("acc", "v0(o, r)") + "\tout0[o] = " + storeExpr(out.DType(), final("acc", "f32(pu(0u))")) + ";\n"
	return b.reduceRun(newFrame(partial.Shape(), []int{1}), []*core.Tensor{partial}, out, false, whole,
		func(p *params) { p.setU(0, uint32(members)) })
}

// splitRun is the first launch of a split sum: one thread per part of
// each group, writing partial (contiguous, groups x parts).
func (b *Backend) splitRun(f frame, ins []*core.Tensor, partial *core.Tensor, body string, parts, chunk int) error {
	set := func(p *params) {
		p.setU(50, uint32(parts))
		p.setU(51, uint32(chunk))
	}
	return b.launchReduce(f, ins, partial, body, set, f.Groups()*parts, 64, reduceMode{split: true})
}
