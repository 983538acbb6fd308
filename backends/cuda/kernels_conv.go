//go:build linux && cgo

package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Convolutions as cuBLAS products over unfolded windows (im2col), with
// oprules.ConvGeom's three directions (the same geometry shape inference and
// every other backend use):
//   grid from image (conv1d, conv2d, a transposed convolution's input
//     gradient): grid[n, g] = W[g] @ cols[n, g];
//   image from grid (conv_transpose2d): cols[n, g] = W[g]^T @ grid[n, g],
//     folded back (col2im, each image element gathering its windows, so no
//     atomics and a fixed summation order);
//   the weight gradient: dW[g] = grid[g] @ cols[g]^T with the batch folded
//     into the product's inner dim.
// Windows are unfolded a batch chunk at a time, so the unfolded copy stays
// under convChunkBytes however large the batch.

const convChunkBytes = 256 << 20

// convSizes are a geometry's per-group sizes.
type convSizes struct {
	batch, groups, cg, og, k, p int
}

func sizesOf(g *oprules.ConvGeom) convSizes {
	s := convSizes{batch: 1, groups: g.Groups, cg: g.ImageC / g.Groups, og: g.GridC / g.Groups,
		k: g.Kernel[0] * g.Kernel[1], p: g.Grid[0] * g.Grid[1]}
	if g.Batched {
		s.batch = g.Batch
	}
	return s
}

// nchw views t (laid out as the geometry's image or grid side, batched or
// not, 1-D or 2-D) as [N, C, H, W] strides.
func nchw(t *core.Tensor, g *oprules.ConvGeom) [4]int {
	st := t.Strides()
	var out [4]int
	i := 0
	if g.Batched {
		out[0], i = st[0], 1
	}
	out[1] = st[i]
	if g.Dims == 2 {
		out[2], out[3] = st[i+1], st[i+2]
	} else {
		out[3] = st[i+1]
	}
	return out
}

// geomParams puts the window geometry in A.s[10..] for the kernels.
func geomParams(k *genKernel, g *oprules.ConvGeom, s convSizes) {
	for i, v := range []int{s.k, g.Kernel[1], g.Grid[1], g.Stride[0], g.Stride[1], g.Dilation[0], g.Dilation[1],
		g.Padding[0], g.Padding[1], s.cg, g.Image[0], g.Image[1], g.Kernel[0], g.Grid[0], s.groups} {
		k.param(10+i, int64(v))
	}
}

// convGeomC declares the geometry's names from A.s.
const convGeomC = `const idx K_ = (idx)A.s[10], KW = (idx)A.s[11], GW = (idx)A.s[12], SH = (idx)A.s[13], SW = (idx)A.s[14];
const idx DH = (idx)A.s[15], DW = (idx)A.s[16], PH = (idx)A.s[17], PW = (idx)A.s[18], CG = (idx)A.s[19];
const idx IH = (idx)A.s[20], IW = (idx)A.s[21], KH = (idx)A.s[22], GH = (idx)A.s[23], NG = (idx)A.s[24];
`

// unfold writes the windows of image batch items [n0, n0+nb) into cols:
// element (n, g, ck, p) at cols' contiguous position for the iteration
// order given by batchInner (false: [nb, groups, cg*k, p]; true: [groups,
// cg*k, nb, p], the weight gradient's).
func (b *Backend) unfold(op string, g *oprules.ConvGeom, image, cols *core.Tensor, n0, nb int, batchInner bool) error {
	s := sizesOf(g)
	st := nchw(image, g)
	shape := []int{nb, s.groups, s.cg * s.k, s.p}
	dims := "const idx n = c0, grp = c1, ck = c2, q = c3;\n"
	if batchInner {
		shape = []int{s.groups, s.cg * s.k, nb, s.p}
		dims = "const idx grp = c0, ck = c1, n = c2, q = c3;\n"
	}
	k := &genKernel{op: op, shape: shape}
	k.ops = []genOp{written(core.NewView(cols, core.Shape(shape), contiguousStrides(shape), 0)),
		{t: image, offset: image.Offset() + n0*st[0], strides: st[:]}}
	geomParams(k, g, s)
	body := convGeomC + dims + `const idx cc = ck / K_, kk = ck % K_, kh = kk / KW, kw = kk % KW;
const idx ih = (q / GW) * SH + kh * DH - PH, iw = (q % GW) * SW + kw * DW - PW;
const idx c = grp * CG + cc;
p0[` + k.at(0) + `] = (ih >= 0 && ih < IH && iw >= 0 && iw < IW)
	? p1[(idx)A.off[1] + n * (idx)A.st[1][0] + c * (idx)A.st[1][1] + ih * (idx)A.st[1][2] + iw * (idx)A.st[1][3]]
	: ` + zeroElem(cols.DType()) + ";\n"
	return b.runIndexed(k, body)
}

// fold sums each image element's windows from cols [nb, groups, cg*k, p]
// (plus the bias of its channel) into out's batch items [n0, n0+nb).
func (b *Backend) fold(op string, g *oprules.ConvGeom, cols, bias, out *core.Tensor, n0, nb int) error {
	s := sizesOf(g)
	ost := nchw(out, g)
	shape := []int{nb, g.ImageC, g.Image[0], g.Image[1]}
	view := core.NewView(out, core.Shape(shape), ost[:], out.Offset()+n0*ost[0])
	k := &genKernel{op: op, shape: shape}
	k.ops = []genOp{{t: view, offset: view.Offset(), strides: ost[:], out: true}, {t: cols, offset: cols.Offset(), strides: make([]int, 4)}}
	biasTerm := ""
	if bias != nil {
		// Read by the body through A.st[2][0]; walked over nothing.
		k.ops = append(k.ops, genOp{t: bias, offset: bias.Offset(), strides: []int{bias.Strides()[0], 0, 0, 0}})
		biasTerm = "acc += (f64)ld(p2[(idx)A.off[2] + c * (idx)A.st[2][0]]);\n"
	}
	geomParams(k, g, s)
	body := convGeomC + `const idx n = c0, c = c1, ih = c2, iw = c3;
const idx grp = c / CG, cc = c % CG, P = GH * GW;
f64 acc = 0;
for (idx kh = 0; kh < KH; kh++) {
	const idx th = ih + PH - kh * DH;
	if (th < 0 || th % SH != 0 || th / SH >= GH) continue;
	for (idx kw = 0; kw < KW; kw++) {
		const idx tw = iw + PW - kw * DW;
		if (tw < 0 || tw % SW != 0 || tw / SW >= GW) continue;
		acc += (f64)ld(p1[(idx)A.off[1] + ((n * NG + grp) * CG * K_ + cc * K_ + kh * KW + kw) * P + (th / SH) * GW + tw / SW]);
	}
}
` + biasTerm + "put(&p0[" + k.at(0) + "], acc);\n"
	return b.runIndexed(k, body)
}

// chunk is how many batch items one unfolded copy of dtype d holds.
func (s convSizes) chunk(d core.DType) int {
	per := s.groups * s.cg * s.k * s.p * d.Size()
	return max(1, min(s.batch, convChunkBytes/max(per, 1)))
}

// convGrid computes the grid (out) from image a and weight w, adding bias.
func (b *Backend) convGrid(op string, g *oprules.ConvGeom, a, w, bias, out *core.Tensor) error {
	s := sizesOf(g)
	wv := core.NewView(w, core.Shape{s.groups, s.og, s.cg * s.k}, []int{s.og * s.cg * s.k, s.cg * s.k, 1}, w.Offset())
	if !w.IsContiguous() {
		wc := core.Call1("contiguous", nil, w)
		if err := wc.Err(); err != nil {
			return err
		}
		defer wc.Release()
		wv = core.NewView(wc, wv.Shape(), wv.Strides(), wc.Offset())
	}
	chunk := s.chunk(a.DType())
	cols, err := core.Empty(b, core.Shape{chunk * s.groups * s.cg * s.k * s.p}, a.DType())
	if err != nil {
		return err
	}
	defer cols.Release()
	for n0 := 0; n0 < s.batch; n0 += chunk {
		nb := min(chunk, s.batch-n0)
		if err := b.unfold(op, g, a, cols, n0, nb, false); err != nil {
			return err
		}
		cv := core.NewView(cols, core.Shape{nb, s.groups, s.cg * s.k, s.p}, []int{s.groups * s.cg * s.k * s.p, s.cg * s.k * s.p, s.p, 1}, 0)
		ov := core.NewView(out, core.Shape{nb, s.groups, s.og, s.p}, []int{g.GridC * s.p, s.og * s.p, s.p, 1}, out.Offset()+n0*g.GridC*s.p)
		if err := b.matmulInto(op, wv, cv, ov, core.Shape{nb, s.groups}, s.og, s.cg*s.k, s.p, 1); err != nil {
			return err
		}
	}
	if bias == nil {
		return nil
	}
	shape := core.Shape{s.batch, g.GridC, s.p}
	ov := core.NewView(out, shape, []int{g.GridC * s.p, s.p, 1}, out.Offset())
	bv := core.NewView(bias, shape, []int{0, bias.Strides()[0], 0}, bias.Offset())
	return b.mapRun(op, []*core.Tensor{ov, bv}, ov, "x0 + x1", nil)
}

// convImage computes the image (out) from grid a and weight w (a
// transposed convolution), adding bias.
func (b *Backend) convImage(op string, g *oprules.ConvGeom, a, w, bias, out *core.Tensor) error {
	s := sizesOf(g)
	wc := w
	if !w.IsContiguous() {
		if wc = core.Call1("contiguous", nil, w); wc.Err() != nil {
			return wc.Err()
		}
		defer wc.Release()
	}
	// W[g]^T: [cg*k, og] read through the weight's own layout.
	wt := core.NewView(wc, core.Shape{s.groups, s.cg * s.k, s.og}, []int{s.og * s.cg * s.k, 1, s.cg * s.k}, wc.Offset())
	ast := nchw(a, g)
	chunk := s.chunk(out.DType())
	cols, err := core.Empty(b, core.Shape{chunk * s.groups * s.cg * s.k * s.p}, out.DType())
	if err != nil {
		return err
	}
	defer cols.Release()
	for n0 := 0; n0 < s.batch; n0 += chunk {
		nb := min(chunk, s.batch-n0)
		gv := core.NewView(a, core.Shape{nb, s.groups, s.og, s.p},
			[]int{ast[0], s.og * ast[1], ast[1], ast[3]}, a.Offset()+n0*ast[0])
		if g.Dims == 2 && ast[2] != g.Grid[1]*ast[3] {
			// The grid's positions are not one stride apart: copy it first.
			c := core.Call1("contiguous", nil, a)
			if err := c.Err(); err != nil {
				return err
			}
			defer c.Release()
			return b.convImage(op, g, c, w, bias, out)
		}
		cv := core.NewView(cols, core.Shape{nb, s.groups, s.cg * s.k, s.p}, []int{s.groups * s.cg * s.k * s.p, s.cg * s.k * s.p, s.p, 1}, 0)
		if err := b.matmulInto(op, wt, gv, cv, core.Shape{nb, s.groups}, s.cg*s.k, s.og, s.p, 1); err != nil {
			return err
		}
		if err := b.fold(op, g, cols, bias, out, n0, nb); err != nil {
			return err
		}
	}
	return nil
}

// convWeightGrad computes dW (out) from image a and grid gradient gr,
// summing over the batch in the product's inner dim (chunk by chunk).
func (b *Backend) convWeightGrad(op string, g *oprules.ConvGeom, a, gr, out *core.Tensor) error {
	s := sizesOf(g)
	gst := nchw(gr, g)
	chunk := s.chunk(a.DType())
	cols, err := core.Empty(b, core.Shape{chunk * s.groups * s.cg * s.k * s.p}, a.DType())
	if err != nil {
		return err
	}
	defer cols.Release()
	grid, err := core.Empty(b, core.Shape{s.groups, s.og, chunk, s.p}, gr.DType())
	if err != nil {
		return err
	}
	defer grid.Release()
	dw := core.NewView(out, core.Shape{s.groups, s.og, s.cg * s.k}, []int{s.og * s.cg * s.k, s.cg * s.k, 1}, out.Offset())
	for n0 := 0; n0 < s.batch; n0 += chunk {
		nb := min(chunk, s.batch-n0)
		if err := b.unfold(op, g, a, cols, n0, nb, true); err != nil {
			return err
		}
		// The gradient as [groups, og, nb, p], one contiguous run per group.
		src := core.NewView(gr, core.Shape{s.groups, s.og, nb, s.p}, []int{s.og * gst[1], gst[1], gst[0], gst[3]}, gr.Offset()+n0*gst[0])
		if g.Dims == 2 && gst[2] != g.Grid[1]*gst[3] {
			c := core.Call1("contiguous", nil, gr)
			if err := c.Err(); err != nil {
				return err
			}
			defer c.Release()
			return b.convWeightGrad(op, g, a, c, out)
		}
		gv := core.NewView(grid, core.Shape{s.groups, s.og, nb, s.p}, []int{s.og * nb * s.p, nb * s.p, s.p, 1}, 0)
		if err := b.mapRun(op, []*core.Tensor{src}, gv, "x0", nil); err != nil {
			return err
		}
		gm := core.NewView(grid, core.Shape{s.groups, s.og, nb * s.p}, []int{s.og * nb * s.p, nb * s.p, 1}, 0)
		ct := core.NewView(cols, core.Shape{s.groups, nb * s.p, s.cg * s.k}, []int{s.cg * s.k * nb * s.p, 1, nb * s.p}, 0)
		if n0 == 0 {
			if err := b.matmulInto(op, gm, ct, dw, core.Shape{s.groups}, s.og, nb*s.p, s.cg*s.k, 1); err != nil {
				return err
			}
			continue
		}
		part, err := core.Empty(b, dw.Shape(), out.DType())
		if err != nil {
			return err
		}
		err = b.matmulInto(op, gm, ct, part, core.Shape{s.groups}, s.og, nb*s.p, s.cg*s.k, 1)
		if err == nil {
			err = b.mapRun(op, []*core.Tensor{dw, part}, dw, "x0 + x1", nil)
		}
		part.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

type convGeomFunc func(a, b core.Shape, attrs core.Attrs) (oprules.ConvGeom, error)

func convKernel(op string, geom convGeomFunc, mode string) core.Kernel {
	return func(k *core.KernelCall) error {
		a, w := k.Inputs[0], k.Inputs[1]
		g, err := geom(a.Shape(), w.Shape(), k.Attrs)
		if err != nil {
			return err
		}
		if g.Groups <= 0 || g.ImageC%g.Groups != 0 || g.GridC%g.Groups != 0 {
			return fmt.Errorf("cuda: %s with %d groups over %d and %d channels", op, g.Groups, g.ImageC, g.GridC)
		}
		var bias *core.Tensor
		if len(k.Inputs) > 2 {
			bias = k.Inputs[2]
		}
		out := k.Outputs[0]
		if out.Numel() == 0 {
			return nil
		}
		b := cudaOf(k)
		switch mode {
		case "grid":
			return b.convGrid(op, &g, a, w, bias, out)
		case "image":
			return b.convImage(op, &g, a, w, bias, out)
		}
		return b.convWeightGrad(op, &g, a, w, out)
	}
}

func init() {
	register("conv2d", convKernel("conv2d", oprules.Conv2dGeom, "grid"))
	register("conv1d", convKernel("conv1d", oprules.Conv1dGeom, "grid"))
	register("_conv_transpose2d_input_grad", convKernel("_conv_transpose2d_input_grad", oprules.ConvTransposeInputGradGeom, "grid"))
	register("conv_transpose2d", convKernel("conv_transpose2d", oprules.ConvTranspose2dGeom, "image"))
	register("_conv2d_weight_grad", convKernel("_conv2d_weight_grad", oprules.ConvWeightGradGeom, "wgrad"))
}
