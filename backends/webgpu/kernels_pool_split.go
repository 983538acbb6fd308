package webgpu

import (
	"fmt"
	"math/bits"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Pooling threads loop over a window (forward) or over the windows that
// cover an element (backward), so a window of 260x260 - global pooling of
// a large feature map - loops 67,860 times, past the loop limit of a
// software driver (gpu_looplimit.go), and came out wrong without an error.
// Windows are rectangles, so max, average and adaptive pooling, and the
// gradient of interpolation (whose taps are a product of per-dim taps),
// also run as two passes, one per spatial dim, each looping over one side
// of the window: a 260x260 window costs 260 iterations per pass. That
// route is taken only where the one-pass kernel would pass the limit; the
// other gradients, whose covering windows stay few for any usual stride,
// are refused there.

// lpTrips bounds the loop iterations one thread of pool.wgsl's kind runs
// over g: every level of a nested loop counts.
func lpTrips(kind string, g oprules.PoolGeom) int {
	k0, k1 := g.Kernel[0], g.Kernel[1]
	window := k0 * (1 + k1)
	switch kind {
	case "max", "avg":
		return window + 16
	case "adaptive":
		return lpCover(g.In[0], g.Out[0])*(1+lpCover(g.In[1], g.Out[1])) + 16
	case "max_bwd":
		// The covering windows, each scanned again for its maximum.
		cover := func(d int) int { return ((g.Kernel[d]-1)*g.Dilation[d])/g.Stride[d] + 1 }
		return cover(0)*(1+cover(1)*(1+window)) + 16
	case "avg_bwd":
		cover := func(d int) int { return (g.Kernel[d]+g.Stride[d]-1)/g.Stride[d] + 1 }
		return cover(0)*(1+cover(1)) + 16
	case "adaptive_bwd":
		return lpCover(g.Out[0], g.In[0])*(1+lpCover(g.Out[1], g.In[1])) + 16
	}
	return 16
}

// lpCover bounds how many of n elements one of m evenly spread windows
// over them holds (adaptive pooling's ranges, or the outputs whose taps
// reach one input).
func lpCover(n, m int) int { return (n+m-1)/m + 1 }

// lpPooled writes pooling kind ("max", "avg", "adaptive") of src over g
// into out: in one pass, or in one pass per dim where one pass would pass
// the device's loop limit.
func (b *Backend) lpPooled(kind string, g oprules.PoolGeom, src, out *core.Tensor) error {
	if b.loopsFit(lpTrips(kind, g)) {
		var prm params
		lpPoolParams(&prm, g)
		return b.lpPoolLaunch(kind, false, &prm, src, nil, out)
	}
	rows, cols := lpSeparate(kind, g)
	what := fmt.Sprintf("%s pooling over %v windows, one dim at a time,", kind, g.Kernel)
	if kind == "adaptive" {
		what = fmt.Sprintf("adaptive pooling from %v to %v, one dim at a time,", g.In, g.Out)
	}
	if err := b.checkTrips(what, max(lpTrips(kind, rows), lpTrips(kind, cols))); err != nil {
		return err
	}
	mid, err := core.Empty(b, rows.OutShape(), src.DType())
	if err != nil {
		return err
	}
	defer mid.Release()
	var p1, p2 params
	lpPoolParams(&p1, rows)
	if err := b.lpPoolLaunch(kind, false, &p1, src, nil, mid); err != nil {
		return err
	}
	lpPoolParams(&p2, cols)
	return b.lpPoolLaunch(kind, false, &p2, mid, nil, out)
}

// lpSeparate splits pooling g into a pass over rows (the window's height,
// each column on its own) and one over columns of the first's result. An
// override of the divisor divides once: the rows are summed.
func lpSeparate(kind string, g oprules.PoolGeom) (rows, cols oprules.PoolGeom) {
	rows, cols = g, g
	rows.Out[1] = g.In[1]
	cols.In[0] = g.Out[0]
	if kind == "adaptive" {
		return rows, cols
	}
	rows.Kernel[1], rows.Stride[1], rows.Padding[1], rows.Dilation[1] = 1, 1, 0, 1
	cols.Kernel[0], cols.Stride[0], cols.Padding[0], cols.Dilation[0] = 1, 1, 0, 1
	if g.DivisorOverride != 0 {
		rows.DivisorOverride = 1
	}
	return rows, cols
}

// lpInterpTrips bounds the loop iterations of one thread of interpolate's
// gradient over g: a binary search per dim for the first output that
// reaches the element, then the outputs from there until one lies past it.
// Along a dim, an input is reached from up to three cells of out/(in-1)
// outputs (bilinear's two taps, a clamped half cell at either edge; with
// aligned corners the cells are (out-1)/(in-1)): on lavapipe 2x3 to
// 270x301, 68,000 iterations, came out wrong.
func lpInterpTrips(g oprules.InterpGeom) int {
	search := bits.Len(uint(g.Out[0])) + bits.Len(uint(g.Out[1])) + 4
	reach := func(d int) int {
		cell := (g.Out[d] + max(g.In[d]-1, 1) - 1) / max(g.In[d]-1, 1)
		return min(g.Out[d], 3*cell+3) + 1
	}
	return search + reach(0)*(1+reach(1)) + 16
}

// lpInterpBackward writes interpolate's gradient of grad over g into out:
// in one pass, or where that would pass the device's loop limit, through
// the columns first (an [H_out, W_in] intermediate) and then the rows.
func (b *Backend) lpInterpBackward(g oprules.InterpGeom, grad, out *core.Tensor) error {
	bilinear := g.Mode == "bilinear"
	if b.loopsFit(lpInterpTrips(g)) {
		var prm params
		lpInterpParams(&prm, g)
		return b.lpPoolLaunch("interp_bwd", bilinear, &prm, grad, nil, out)
	}
	// Along a dim whose sizes agree and with no scale factor, the taps are
	// the identity.
	cols, rows := g, g
	cols.In[0], cols.ScaleFactor[0] = g.Out[0], 0
	rows.Out[1], rows.ScaleFactor[1] = g.In[1], 0
	what := fmt.Sprintf("interpolate's gradient from %v to %v, one dim at a time,", g.Out, g.In)
	if err := b.checkTrips(what, max(lpInterpTrips(cols), lpInterpTrips(rows))); err != nil {
		return err
	}
	mid, err := core.Empty(b, cols.InShape(), grad.DType())
	if err != nil {
		return err
	}
	defer mid.Release()
	var p1, p2 params
	lpInterpParams(&p1, cols)
	if err := b.lpPoolLaunch("interp_bwd", bilinear, &p1, grad, nil, mid); err != nil {
		return err
	}
	lpInterpParams(&p2, rows)
	return b.lpPoolLaunch("interp_bwd", bilinear, &p2, mid, nil, out)
}
