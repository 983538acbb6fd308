//go:build linux && cgo

package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Pooling and resampling, one thread per element of a contiguous result
// (indexed kernels): forward kernels per output element, backward kernels
// per input-gradient element gathering from the windows that cover it in
// the CPU's order, so there are no atomics and sums add up as the CPU's
// do (in f64). Geometry is resolved on the host by core (PoolGeom,
// InterpGeom), as every backend does; interpolate's taps are computed there
// too, by core's own NearestSource and LinearSource, and uploaded (a few
// numbers per output row and column).

// planes views a pooling operand (NCHW or CHW) as [N, C, H, W] strides.
func planeStrides(t *core.Tensor) []int {
	st := t.Strides()
	if len(st) == 3 {
		return append([]int{0}, st...)
	}
	return st
}

// poolParams puts a pooling geometry in A.s[10..].
func poolParams(k *genKernel, g *oprules.PoolGeom) {
	div := g.DivisorOverride
	cip := 0
	if g.CountIncludePad {
		cip = 1
	}
	for i, v := range []int{g.C, g.In[0], g.In[1], g.Out[0], g.Out[1], g.Kernel[0], g.Kernel[1], g.Stride[0],
		g.Stride[1], g.Padding[0], g.Padding[1], g.Dilation[0], g.Dilation[1], cip, div} {
		k.param(10+i, int64(v))
	}
}

// poolC declares the geometry's names and at(k, n, c, h, w), operand k's
// element position (its strides in A.st[k][0..3]).
const poolC = `const idx C = (idx)A.s[10], IH = (idx)A.s[11], IW = (idx)A.s[12], OH = (idx)A.s[13], OW = (idx)A.s[14];
const idx KH = (idx)A.s[15], KW = (idx)A.s[16], SH = (idx)A.s[17], SW = (idx)A.s[18], PH = (idx)A.s[19], PW = (idx)A.s[20];
const idx DH = (idx)A.s[21], DW = (idx)A.s[22], CIP = (idx)A.s[23], DIV = (idx)A.s[24];
auto at = [&](int k, idx n, idx c, idx h, idx w) -> idx {
	return (idx)A.off[k] + n * (idx)A.st[k][0] + c * (idx)A.st[k][1] + h * (idx)A.st[k][2] + w * (idx)A.st[k][3];
};
// maxAt finds the first maximum of window (oh, ow) of operand k in scan
// order, NaN winning, as the CPU's maxWindows: (-1, -1) for padding only.
auto maxAt = [&](auto *src, int k, idx n, idx c, idx oh, idx ow, idx &bh, idx &bw) {
	bh = -1; bw = -1;
	f64 best = 0;
	for (idx ki = 0; ki < KH; ki++) {
		const idx h = oh * SH - PH + ki * DH;
		if (h < 0 || h >= IH) continue;
		for (idx kj = 0; kj < KW; kj++) {
			const idx w = ow * SW - PW + kj * DW;
			if (w < 0 || w >= IW) continue;
			const f64 v = (f64)ld(src[at(k, n, c, h, w)]);
			if (bh < 0 || v > best || v != v) { best = v; bh = h; bw = w; }
		}
	}
};
// avgWindow clips window (oh, ow) to the input and gives its divisor.
auto avgWindow = [&](idx oh, idx ow, idx &h0, idx &h1, idx &w0, idx &w1) -> f64 {
	h0 = oh * SH - PH; w0 = ow * SW - PW;
	h1 = min(h0 + KH, IH + PH); w1 = min(w0 + KW, IW + PW);
	const idx padded = (h1 - h0) * (w1 - w0);
	h0 = max(h0, (idx)0); w0 = max(w0, (idx)0); h1 = min(h1, IH); w1 = min(w1, IW);
	if (DIV != 0) return (f64)DIV;
	return CIP != 0 ? (f64)padded : (f64)((h1 - h0) * (w1 - w0));
};
auto adaptive = [&](idx o, idx nin, idx nout, idx &lo, idx &hi) { lo = o * nin / nout; hi = ((o + 1) * nin + nout - 1) / nout; };
`

// poolRun runs body once per element of out ([N, C, H, W] or [C, H, W]),
// with operand 0 out, 1 src and 2 x (max_pool2d's input, for its gradient).
func (b *Backend) poolRun(op string, g *oprules.PoolGeom, out, src, x *core.Tensor, body string) error {
	st := planeStrides(out)
	shape := []int{max(g.Batch, 1), g.C, 0, 0}
	os := out.Shape()
	shape[2], shape[3] = os[len(os)-2], os[len(os)-1]
	if !g.Batched {
		shape[0] = 1
	}
	k := &genKernel{op: op, shape: shape}
	k.ops = []genOp{{t: out, offset: out.Offset(), strides: st, out: true}, {t: src, offset: src.Offset(), strides: planeStrides(src)}}
	if x != nil {
		k.ops = append(k.ops, genOp{t: x, offset: x.Offset(), strides: planeStrides(x)})
	}
	poolParams(k, g)
	return b.runIndexed(k, poolC+"const idx n = c0, c = c1, h = c2, w = c3;\n"+body)
}

// lowest is the C++ smallest value of an integer dtype's max window over
// padding only (as the CPU's lowestInt), -inf for floats.
func lowest(d core.DType) string {
	switch d {
	case core.I64:
		return "(f64)(-9223372036854775807LL - 1)"
	case core.I32:
		return "-2147483648.0"
	case core.I16:
		return "-32768.0"
	case core.I8:
		return "-128.0"
	case core.U8, core.U16, core.U32, core.Bool:
		return "0.0"
	}
	return "-wt_inf64()"
}

func maxPoolKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.Pool2dGeom(x.Shape(), k.Attrs, true)
	if err != nil {
		return err
	}
	body := "idx bh, bw;\nmaxAt(p1, 1, n, c, h, w, bh, bw);\n"
	if x.DType() == core.I64 {
		// i64 values pass through as bits: f64 would round them.
		body += "p0[at(0, n, c, h, w)] = bh < 0 ? (i64)(-9223372036854775807LL - 1) : p1[at(1, n, c, bh, bw)];\n"
	} else {
		body += "put(&p0[at(0, n, c, h, w)], bh < 0 ? " + lowest(x.DType()) + " : (f64)ld(p1[at(1, n, c, bh, bw)]));\n"
	}
	return cudaOf(k).poolRun("max_pool2d", &g, out, x, nil, body)
}

// maxPoolBackwardKernel: each input element sums the gradients of the
// windows (in increasing output order) whose maximum it is.
func maxPoolBackwardKernel(k *core.KernelCall) error {
	g, err := oprules.Pool2dGeom(k.Inputs[1].Shape(), k.Attrs, true)
	if err != nil {
		return err
	}
	// The windows covering (h, w), in increasing output order: ki falling.
	const body = `f64 acc = 0;
for (idx ki = KH - 1; ki >= 0; ki--) {
	const idx th = h + PH - ki * DH;
	if (th < 0 || th % SH != 0 || th / SH >= OH) continue;
	const idx oh = th / SH;
	for (idx kj = KW - 1; kj >= 0; kj--) {
		const idx tw = w + PW - kj * DW;
		if (tw < 0 || tw % SW != 0 || tw / SW >= OW) continue;
		const idx ow = tw / SW;
		idx bh, bw;
		maxAt(p2, 2, n, c, oh, ow, bh, bw);
		if (bh == h && bw == w) acc += (f64)ld(p1[at(1, n, c, oh, ow)]);
	}
}
put(&p0[at(0, n, c, h, w)], acc);
`
	return cudaOf(k).poolRun("_max_pool2d_backward", &g, k.Outputs[0], k.Inputs[0], k.Inputs[1], body)
}

func avgPoolKernel(k *core.KernelCall) error {
	g, err := oprules.Pool2dGeom(k.Inputs[0].Shape(), k.Attrs, false)
	if err != nil {
		return err
	}
	const body = `idx h0, h1, w0, w1;
const f64 div = avgWindow(h, w, h0, h1, w0, w1);
f64 sum = 0;
for (idx y = h0; y < h1; y++) for (idx x = w0; x < w1; x++) sum += (f64)ld(p1[at(1, n, c, y, x)]);
put(&p0[at(0, n, c, h, w)], (h0 < h1 && w0 < w1) ? sum / div : 0.0);
`
	return cudaOf(k).poolRun("avg_pool2d", &g, k.Outputs[0], k.Inputs[0], nil, body)
}

func avgPoolBackwardKernel(k *core.KernelCall) error {
	g, err := oprules.Pool2dGeom(k.Attrs.Ints("input_shape"), k.Attrs, false)
	if err != nil {
		return err
	}
	const body = `f64 acc = 0;
const idx ohLo = max((idx)0, (h + PH - KH + SH) / SH), ohHi = min(OH - 1, (h + PH) / SH);
const idx owLo = max((idx)0, (w + PW - KW + SW) / SW), owHi = min(OW - 1, (w + PW) / SW);
for (idx oh = ohLo; oh <= ohHi; oh++) {
	for (idx ow = owLo; ow <= owHi; ow++) {
		idx h0, h1, w0, w1;
		const f64 div = avgWindow(oh, ow, h0, h1, w0, w1);
		if (h >= h0 && h < h1 && w >= w0 && w < w1) acc += (f64)ld(p1[at(1, n, c, oh, ow)]) / div;
	}
}
put(&p0[at(0, n, c, h, w)], acc);
`
	return cudaOf(k).poolRun("_avg_pool2d_backward", &g, k.Outputs[0], k.Inputs[0], nil, body)
}

func adaptivePoolKernel(k *core.KernelCall) error {
	g, err := oprules.AdaptivePool2dGeom(k.Inputs[0].Shape(), k.Attrs.Ints("output_size"))
	if err != nil {
		return err
	}
	const body = `idx h0, h1, w0, w1;
adaptive(h, IH, OH, h0, h1);
adaptive(w, IW, OW, w0, w1);
f64 sum = 0;
for (idx y = h0; y < h1; y++) for (idx x = w0; x < w1; x++) sum += (f64)ld(p1[at(1, n, c, y, x)]);
put(&p0[at(0, n, c, h, w)], sum / (f64)((h1 - h0) * (w1 - w0)));
`
	return cudaOf(k).poolRun("adaptive_avg_pool2d", &g, k.Outputs[0], k.Inputs[0], nil, body)
}

func adaptivePoolBackwardKernel(k *core.KernelCall) error {
	s := k.Inputs[0].Shape()
	g, err := oprules.AdaptivePool2dGeom(k.Attrs.Ints("input_shape"), s[len(s)-2:])
	if err != nil {
		return err
	}
	const body = `f64 acc = 0;
for (idx oh = h * OH / IH; oh <= min(OH - 1, ((h + 1) * OH - 1) / IH); oh++) {
	idx h0, h1;
	adaptive(oh, IH, OH, h0, h1);
	if (h < h0 || h >= h1) continue;
	for (idx ow = w * OW / IW; ow <= min(OW - 1, ((w + 1) * OW - 1) / IW); ow++) {
		idx w0, w1;
		adaptive(ow, IW, OW, w0, w1);
		if (w < w0 || w >= w1) continue;
		acc += (f64)ld(p1[at(1, n, c, oh, ow)]) / (f64)((h1 - h0) * (w1 - w0));
	}
}
put(&p0[at(0, n, c, h, w)], acc);
`
	return cudaOf(k).poolRun("_adaptive_avg_pool2d_backward", &g, k.Outputs[0], k.Inputs[0], nil, body)
}

// interpTaps uploads the taps of both dims as f64 [out, 4] tables (index
// 0, index 1, weight 0, weight 1; nearest has one tap, index 1 = -1), from
// core's own rules so every backend blends the same inputs, followed by
// each input index's range [lo, hi) of outputs that tap it (taps never
// decrease along a dim), for the gradient's gather.
func (b *Backend) interpTaps(g *oprules.InterpGeom) (*core.Tensor, error) {
	vals := make([]float64, 0, 4*(g.Out[0]+g.Out[1])+2*(g.In[0]+g.In[1]))
	var ranges []float64
	for d := range 2 {
		lo := make([]int, g.In[d])
		hi := make([]int, g.In[d])
		for i := range lo {
			lo[i] = g.Out[d]
		}
		for o := range g.Out[d] {
			var idx [2]int
			if g.Mode == "nearest" {
				idx = [2]int{g.NearestSource(d, o), -1}
				vals = append(vals, float64(idx[0]), -1, 1, 0)
			} else {
				i0, i1, w0, w1 := g.LinearSource(d, o)
				idx = [2]int{i0, i1}
				vals = append(vals, float64(i0), float64(i1), w0, w1)
			}
			for _, i := range idx {
				if i >= 0 && i < g.In[d] {
					lo[i], hi[i] = min(lo[i], o), max(hi[i], o+1)
				}
			}
		}
		for i := range lo {
			ranges = append(ranges, float64(lo[i]), float64(hi[i]))
		}
	}
	vals = append(vals, ranges...)
	t := core.FromSlice(vals, core.Shape{len(vals)}).To(b.Device())
	return t, t.Err()
}

// interpRun runs body per element of out with operand 0 out, 1 src, 2 the
// taps (rows first, then columns from 4*OH), geometry in A.s.
func (b *Backend) interpRun(op string, g *oprules.InterpGeom, out, src *core.Tensor, body string) error {
	taps, err := b.interpTaps(g)
	if err != nil {
		return err
	}
	defer taps.Release()
	os := out.Shape()
	k := &genKernel{op: op, shape: []int{os[0], os[1], os[2], os[3]}}
	k.ops = []genOp{{t: out, offset: out.Offset(), strides: out.Strides(), out: true},
		{t: src, offset: src.Offset(), strides: src.Strides()}, {t: taps, offset: 0, strides: make([]int, 4)}}
	for i, v := range []int{g.C, g.In[0], g.In[1], g.Out[0], g.Out[1]} {
		k.param(10+i, int64(v))
	}
	const head = `const idx IH = (idx)A.s[11], IW = (idx)A.s[12], OH = (idx)A.s[13], OW = (idx)A.s[14];
const idx n = c0, c = c1, h = c2, w = c3;
auto at = [&](int k, idx h, idx w) -> idx { return (idx)A.off[k] + n * (idx)A.st[k][0] + c * (idx)A.st[k][1] + h * (idx)A.st[k][2] + w * (idx)A.st[k][3]; };
auto tap = [&](int d, idx o, int j) -> f64 { return p2[(d == 0 ? 0 : 4 * OH) + 4 * o + j]; };
// cover is input index i's range of outputs of dim d: [lo, hi).
auto cover = [&](int d, idx i, int j) -> idx { return (idx)p2[4 * (OH + OW) + (d == 0 ? 0 : 2 * IH) + 2 * i + j]; };
`
	return b.runIndexed(k, head+body)
}

func interpolateKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	g, err := oprules.InterpolateGeom(x.Shape(), k.Attrs)
	if err != nil {
		return err
	}
	body := `f64 acc = 0;
for (int a = 0; a < 2; a++) {
	const idx ih = (idx)tap(0, h, a);
	if (ih < 0) continue;
	for (int bb = 0; bb < 2; bb++) {
		const idx iw = (idx)tap(1, w, bb);
		if (iw < 0) continue;
		acc += (tap(0, h, 2 + a) * tap(1, w, 2 + bb)) * (f64)ld(p1[at(1, ih, iw)]);
	}
}
put(&p0[at(0, h, w)], acc);
`
	if g.Mode == "nearest" {
		// A copy, not a weighted sum, so -0 and NaN payloads pass through.
		body = "p0[at(0, h, w)] = p1[at(1, (idx)tap(0, h, 0), (idx)tap(1, w, 0))];\n"
	}
	return cudaOf(k).interpRun("interpolate", &g, out, x, body)
}

// interpolateBackwardKernel gathers, per input element, the outputs whose
// taps reach it, in increasing output order as the CPU scatters them.
func interpolateBackwardKernel(k *core.KernelCall) error {
	g, err := oprules.InterpolateGeom(k.Attrs.Ints("input_shape"), k.Attrs)
	if err != nil {
		return err
	}
	const body = `f64 acc = 0;
for (idx oh = cover(0, h, 0); oh < cover(0, h, 1); oh++) {
	for (int a = 0; a < 2; a++) {
		if ((idx)tap(0, oh, a) != h) continue;
		for (idx ow = cover(1, w, 0); ow < cover(1, w, 1); ow++) {
			for (int bb = 0; bb < 2; bb++) {
				if ((idx)tap(1, ow, bb) != w) continue;
				acc += (tap(0, oh, 2 + a) * tap(1, ow, 2 + bb)) * (f64)ld(p1[at(1, oh, ow)]);
			}
		}
	}
}
put(&p0[at(0, h, w)], acc);
`
	out := k.Outputs[0]
	if out.Rank() != 4 {
		return fmt.Errorf("cuda: _interpolate_backward of a %d-dim gradient", out.Rank())
	}
	return cudaOf(k).interpRun("_interpolate_backward", &g, out, k.Inputs[0], body)
}

func init() {
	register("max_pool2d", maxPoolKernel)
	register("_max_pool2d_backward", maxPoolBackwardKernel)
	register("avg_pool2d", avgPoolKernel)
	register("_avg_pool2d_backward", avgPoolBackwardKernel)
	register("adaptive_avg_pool2d", adaptivePoolKernel)
	register("_adaptive_avg_pool2d_backward", adaptivePoolBackwardKernel)
	register("interpolate", interpolateKernel)
	register("_interpolate_backward", interpolateBackwardKernel)
}
