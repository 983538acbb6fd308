package webgpu

import (
	"strings"

	"github.com/webtensor/webtensor/core"
)

// Long rows. Softmax and the norms run one thread per row (a frame group)
// that reads the row two to five times, so on a device with a loop limit
// (gpu_looplimit.go) a row past about 13,000 to 32,000 members would stop
// short: a batch norm over 16 images of 64x64, a group norm of 10 channels
// of 64x64, a softmax over a 128k vocabulary. Such rows take the path
// below instead: each statistic a row needs (its maximum, mean, rstd or a
// sum of products) is a reduction of its own, split into parts as
// reductions are (launch_reduce.go), and the result is an elementwise map
// over x that reads the statistics broadcast. The one-thread-per-row
// kernels stay where they fit: a row is read in one launch there.

// frameFits says whether a frame kernel of body over f's groups stays
// within the device's loop limit (checkLoops's estimate, with f's reduced
// rank unmerged, which errs long).
func (b *Backend) frameFits(body string, f frame) bool {
	return b.checkLoops(body, f.Members(), len(f.Reduced)) == nil
}

// statShape is f's shape with its reduced dims 1: one statistic per group,
// broadcasting against the frame.
func statShape(f frame) core.Shape {
	s := f.Shape.Clone()
	for _, d := range f.Reduced {
		s[d] = 1
	}
	return s
}

// groupReduce writes, per group of f, final(acc, count) of the f32 sum acc
// of expr (WGSL over v0(o, r).. for ins) into a new f32 tensor of
// statShape(f).
func (b *Backend) groupReduce(f frame, ins []*core.Tensor, expr string, final func(acc, count string) string) (*core.Tensor, error) {
	out, err := core.Empty(b, statShape(f), core.F32)
	if err != nil {
		return nil, err
	}
	if err := b.sumRun(f, ins, out, expr, final); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// groupMeanRstd is the mean and 1/sqrt(biased variance + eps) of x over
// each group of f (meanRstdWGSL's statistics), by two split sums.
func (b *Backend) groupMeanRstd(f frame, x *core.Tensor, eps float64) (mean, rstd *core.Tensor, err error) {
	if mean, err = b.groupReduce(f, []*core.Tensor{x}, "v0(o, r)", sumFinal(true)); err != nil {
		return nil, nil, err
	}
	rstd, err = b.groupReduce(f, []*core.Tensor{x, mean}, "(v0(o, r) - v1(o, r)) * (v0(o, r) - v1(o, r))", rsqrtMean(eps))
	if err != nil {
		mean.Release()
		return nil, nil, err
	}
	return mean, rstd, nil
}

// releaseAll releases the tensors of ts that are not nil.
func releaseAll(ts ...*core.Tensor) {
	for _, t := range ts {
		if t != nil {
			t.Release()
		}
	}
}

// mapExpr renames a map expression's operands: x<i> becomes names[i]
// (x0, x1, ... by their place among the present inputs).
func mapExpr(expr string, names map[string]string) string {
	var pairs []string
	for from, to := range names {
		pairs = append(pairs, "{"+from+"}", to)
	}
	return strings.NewReplacer(pairs...).Replace(expr)
}
