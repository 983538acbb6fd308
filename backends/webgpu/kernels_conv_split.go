package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// A convolution's thread loops over every term of its output element: the
// input channels of its group times the kernel window (grid and image
// directions), or the batch times the grid (the weight gradient, where a
// 1x1 kernel over a 260x260 image already loops 67,600 times). On a device
// with a loop limit (gpu_looplimit.go) such loops would stop short without an
// error, so a convolution whose threads would pass the limit runs in two
// launches: each thread of the first sums one part of one element's terms
// (a flat range of at most half the limit), and the second adds each
// element's parts in order, then the bias and the epilogue.

// convTerms is how many terms an output element of mode sums, and how
// many loop iterations its thread runs doing so in the nested loops (each
// loop level counts), with room for the epilogue's indexing.
func convTerms(g *oprules.ConvGeom, mode string) (terms, trips int) {
	kh, kw := g.Kernel[0], g.Kernel[1]
	switch mode {
	case "image":
		n := g.GridC / g.Groups
		return n * kh * kw, n*(1+kh*(1+kw)) + 64
	case "wgrad":
		b := g.Batch
		if !g.Batched {
			b = 1
		}
		gh, gw := g.Grid[0], g.Grid[1]
		return b * gh * gw, b*(1+gh*(1+gw)) + 64
	}
	n := g.ImageC / g.Groups
	return n * kh * kw, n*(1+kh*(1+kw)) + 64
}

// convSplit runs a convolution of terms terms per output element as
// partial sums and their sum (see the file comment).
func (gb *Backend) convSplit(g *oprules.ConvGeom, mode string, terms int, a, b, third *core.Tensor, hasBias bool, out *core.Tensor, ep *epilogue) error {
	n := out.Numel()
	chunk := max(gb.loopLimit()/2, 1)
	parts := (terms + chunk - 1) / chunk
	if err := gb.checkTrips(fmt.Sprintf("a convolution summing %d parts of %d terms per output element", parts, chunk), parts+64); err != nil {
		return err
	}
	partials, err := core.Empty(gb, core.Shape{parts * n}, core.F32)
	if err != nil {
		return err
	}
	defer partials.Release()
	prm := convParams(g, a, b, third)
	prm.setN(32, n)
	prm.setN(33, chunk)
	prm.setN(34, terms)
	if err := gb.convLaunch(mode, true, &prm, []*core.Tensor{a, b, third}, partials, nil, parts*n); err != nil {
		return err
	}
	// The sum's bias channel: the grid's (conv2d) or the image's
	// (conv_transpose2d); the weight gradient has none.
	plane, chans := g.Grid[0]*g.Grid[1], g.GridC
	if mode == "image" {
		plane, chans = g.Image[0]*g.Image[1], g.ImageC
	}
	sum := convParams(g, a, b, third)
	sum.setN(32, plane)
	sum.setN(33, chans)
	sum.setN(35, parts)
	if hasBias {
		sum.setI(31, 1)
	}
	return gb.convLaunch("sum", false, &sum, []*core.Tensor{partials, b, third}, out, ep, n)
}
