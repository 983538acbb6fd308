//go:build linux && cgo

package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Shape copies with the CPU backend's semantics (backends/cpu/
// kernels_shape.go), one launch each where possible. Flip, tile and
// repeat_interleave are views of the input (negative or zero strides)
// copied by the elementwise map. Concat, stack, split and chunk copy up to
// eleven pieces per launch, the piece chosen by the axis coordinate. Roll,
// pad and the slice gradient are a remap: each output coordinate maps, dim
// by dim, to a source coordinate or to the fill value. The pad gradient
// sums, per input element, the padded positions that read it, in the CPU's
// order and in f64, so it needs no atomics and matches the CPU bit for bit.

func init() {
	register("concat", joinKernel)
	register("stack", joinKernel)
	register("split", splitKernel)
	register("chunk", splitKernel)
	register("flip", flipKernel)
	register("roll", rollKernel)
	register("tile", tileKernel)
	register("repeat_interleave", repeatInterleaveKernel)
	register("pad", padKernel)
	register("_slice_grad", sliceGradKernel)
	register("_pad_grad", padGradKernel)
}

// piece is one input of a join or output of a split: its layout as a
// slab of the whole tensor, which it occupies along the axis from start.
type piece struct {
	t       *core.Tensor
	shape   core.Shape
	strides []int
	start   int
}

// insertAt is s with v inserted at position at.
func insertAt(s []int, at, v int) []int {
	return append(append(append([]int{}, s[:at]...), v), s[at:]...)
}

// joinKernel serves concat and stack (a stacked input is a slab of size 1
// along the new axis, stride 0).
func joinKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), out.Rank())
	if err != nil {
		return err
	}
	stack := k.Op.Name == "stack"
	var ps []piece
	start := 0
	for _, in := range k.Inputs {
		p := piece{t: in, shape: in.Shape(), strides: in.Strides(), start: start}
		if stack {
			p.shape, p.strides = insertAt(p.shape, ax, 1), insertAt(p.strides, ax, 0)
		}
		if in.Numel() > 0 {
			ps = append(ps, p)
		}
		start += p.shape[ax]
	}
	return cudaOf(k).copyPieces(k.Op.Name, out, ps, ax, true)
}

// splitKernel serves split and chunk.
func splitKernel(k *core.KernelCall) error {
	in := k.Inputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), in.Rank())
	if err != nil {
		return err
	}
	var ps []piece
	start := 0
	for _, out := range k.Outputs {
		s := out.Shape()
		if out.Numel() > 0 {
			ps = append(ps, piece{t: out, shape: s, strides: core.ContiguousStrides(s), start: start})
		}
		start += s[ax]
	}
	return cudaOf(k).copyPieces(k.Op.Name, in, ps, ax, false)
}

// copyPieces copies the pieces into whole (join) or whole into the pieces
// (split), up to maxOps-1 pieces per launch. Each thread owns one element
// of the whole's slab the launch covers; its axis coordinate picks the
// piece, whose offset is moved back by its start so that the slab's
// coordinates address it.
func (b *Backend) copyPieces(op string, whole *core.Tensor, ps []piece, ax int, join bool) error {
	ws, wst := whole.Shape(), whole.Strides()
	for len(ps) > 0 {
		n := min(len(ps), maxOps-1)
		chunk := ps[:n]
		ps = ps[n:]
		lo := chunk[0].start
		hi := chunk[n-1].start + chunk[n-1].shape[ax]
		shape := append([]int{}, ws...)
		shape[ax] = hi - lo
		g := &genKernel{op: op, shape: shape}
		for j, p := range chunk {
			g.ops = append(g.ops, genOp{t: p.t, offset: p.t.Offset() - (p.start-lo)*p.strides[ax], strides: p.strides, out: !join})
			g.param(j, int64(p.start+p.shape[ax]-lo))
		}
		g.ops = append(g.ops, genOp{t: whole, offset: whole.Offset() + lo*wst[ax], strides: wst, out: join})
		a := g.coalesce(ax)
		body := func() string {
			var body strings.Builder
			fmt.Fprintf(&body, "const idx ca = c%d;\n", a)
			for j := range chunk {
				if j > 0 {
					body.WriteString("else ")
				}
				if j < n-1 {
					fmt.Fprintf(&body, "if (ca < (idx)A.s[%d]) ", j)
				}
				if join {
					fmt.Fprintf(&body, "p%d[%s] = p%d[%s];\n", n, g.at(n), j, g.at(j))
				} else {
					fmt.Fprintf(&body, "p%d[%s] = p%d[%s];\n", j, g.at(j), n, g.at(n))
				}
			}
			return body.String()
		}
		if err := b.runIndexedKeyed(g, "pieces|"+strconv.FormatBool(join)+"|"+strconv.Itoa(n)+"|"+strconv.Itoa(a), body); err != nil {
			return err
		}
	}
	return nil
}

// copyView copies src (a view over out's shape) into the contiguous out.
func (b *Backend) copyView(op string, src, out *core.Tensor) error {
	return b.mapRun(op, []*core.Tensor{src}, out, "x0", nil)
}

// viewRank is the number of dims the elementwise map would walk src and
// out (shaped alike) in.
func viewRank(src, out *core.Tensor) int {
	return len(lower.NewIteration(out.Shape(), src, out).Shape)
}

// flipKernel reads the input through negative strides on the flipped axes.
func flipKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	s := in.Shape()
	axes, err := core.NormAxes(k.Attrs.Ints("axes"), len(s))
	if err != nil || in.Numel() == 0 {
		return err
	}
	st, off := in.Strides(), in.Offset()
	for _, d := range axes {
		off += (s[d] - 1) * st[d]
		st[d] = -st[d]
	}
	return cudaOf(k).copyView("flip", core.NewView(in, s, st, off), out)
}

// tileKernel walks the output as [reps0, n0, reps1, n1, ...]: the input is
// a view with stride 0 along every reps dim. Inputs whose dims cannot merge
// into few enough for that take the remap.
func tileKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	os := out.Shape()
	if out.Numel() == 0 {
		return nil
	}
	lead := len(os) - in.Rank()
	is, ist := append(make([]int, lead), in.Shape()...), append(make([]int, lead), in.Strides()...)
	var split core.Shape
	var st []int
	for d := range os {
		n := max(is[d], 1)
		split = append(split, os[d]/n, n)
		st = append(st, 0, ist[d])
	}
	src := core.NewView(in, split, st, in.Offset())
	dst := core.NewView(out, split, core.ContiguousStrides(split), out.Offset())
	if viewRank(src, dst) <= maxRank {
		return cudaOf(k).copyView("tile", src, dst)
	}
	dims := make([]remapDim, len(os))
	for d := range os {
		dims[d] = remapDim{kind: remapTile, n: max(is[d], 1), stride: ist[d]}
	}
	return cudaOf(k).remap("tile", in, out, dims, 0)
}

// repeatInterleaveKernel walks the output with a repeats dim after the
// axis (or after every dim of the flattened input) that the input view
// steps by 0.
func repeatInterleaveKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	r := k.Attrs.Int("repeats")
	if out.Numel() == 0 {
		return nil
	}
	shape, st := in.Shape(), in.Strides()
	at, flat := len(shape), !k.Attrs.Has("axis")
	if !flat {
		ax, err := core.NormAxis(k.Attrs.Int("axis"), in.Rank())
		if err != nil {
			return err
		}
		at = ax + 1
	}
	split := core.Shape(insertAt(shape, at, r))
	src := core.NewView(in, split, insertAt(st, at, 0), in.Offset())
	dst := core.NewView(out, split, core.ContiguousStrides(split), out.Offset())
	if flat || viewRank(src, dst) <= maxRank {
		return cudaOf(k).copyView("repeat_interleave", src, dst)
	}
	dims := make([]remapDim, len(shape))
	for d, n := range shape {
		dims[d] = remapDim{kind: remapIdentity, n: n, stride: st[d]}
	}
	dims[at-1] = remapDim{kind: remapRepeat, a: r, n: shape[at-1], stride: st[at-1]}
	return cudaOf(k).remap("repeat_interleave", in, out, dims, 0)
}

// remapDim is how one output dim reads the source: a kind, its
// parameters, the source's size and its stride along the dim.
type remapDim struct {
	kind, a, b, n, stride int
}

const (
	remapIdentity  = iota
	remapRoll      // s = c + a, wrapped below n (a = -shift mod n)
	remapConstant  // s = c - a; outside [0, n) the fill
	remapReflect   // s = c - a mirrored into [0, n) without repeating the edge
	remapReplicate // s = c - a clamped into [0, n)
	remapSliceGrad // t = c - a; s = t / b where b divides t and s < n, else the fill
	remapTile      // s = c mod n
	remapRepeat    // s = c / a
)

// remapCode is the C++ of a kind for dim %[1]d: it declares s%[1]d and
// may set fill. Parameters a, b, n sit in A.s[3d], A.s[3d+1], A.s[3d+2].
var remapCode = map[int]string{
	remapIdentity: "const idx s%[1]d = c%[1]d;\n",
	remapRoll:     "idx s%[1]d = c%[1]d + (idx)A.s[%[2]d];\nif (s%[1]d >= (idx)A.s[%[4]d]) s%[1]d -= (idx)A.s[%[4]d];\n",
	remapConstant: "const idx s%[1]d = c%[1]d - (idx)A.s[%[2]d];\nfill = fill || s%[1]d < 0 || s%[1]d >= (idx)A.s[%[4]d];\n",
	remapReflect: "idx s%[1]d = c%[1]d - (idx)A.s[%[2]d];\n" +
		"if (s%[1]d < 0) s%[1]d = -s%[1]d;\nelse if (s%[1]d >= (idx)A.s[%[4]d]) s%[1]d = 2 * ((idx)A.s[%[4]d] - 1) - s%[1]d;\n",
	remapReplicate: "idx s%[1]d = c%[1]d - (idx)A.s[%[2]d];\n" +
		"if (s%[1]d < 0) s%[1]d = 0;\nif (s%[1]d >= (idx)A.s[%[4]d]) s%[1]d = (idx)A.s[%[4]d] - 1;\n",
	remapSliceGrad: "const idx t%[1]d = c%[1]d - (idx)A.s[%[2]d];\nconst idx s%[1]d = t%[1]d >= 0 ? t%[1]d / (idx)A.s[%[3]d] : 0;\n" +
		"fill = fill || t%[1]d < 0 || t%[1]d %% (idx)A.s[%[3]d] != 0 || s%[1]d >= (idx)A.s[%[4]d];\n",
	remapTile:   "const idx s%[1]d = c%[1]d %% (idx)A.s[%[4]d];\n",
	remapRepeat: "const idx s%[1]d = c%[1]d / (idx)A.s[%[2]d];\n",
}

// mergeIdentity drops size-1 identity dims and merges runs of identity
// dims the source walks evenly (the contiguous output always does), so
// fewer divisions index each element.
func mergeIdentity(shape []int, dims []remapDim) ([]int, []remapDim) {
	var s []int
	var ds []remapDim
	for d, m := range dims {
		if m.kind == remapIdentity && shape[d] == 1 {
			continue
		}
		if last := len(ds) - 1; last >= 0 && m.kind == remapIdentity && ds[last].kind == remapIdentity &&
			ds[last].stride == m.stride*shape[d] {
			s[last] *= shape[d]
			ds[last].n *= shape[d]
			ds[last].stride = m.stride
			continue
		}
		s = append(s, shape[d])
		ds = append(ds, m)
	}
	return s, ds
}

// remap fills the contiguous out from src through one remapDim per dim of
// out; fill holds the raw bits of positions no source element maps to.
func (b *Backend) remap(op string, src, out *core.Tensor, dims []remapDim, fill int64) error {
	shape, dims := mergeIdentity(out.Shape(), dims)
	st := make([]int, len(dims))
	for d, m := range dims {
		st[d] = m.stride
	}
	g := &genKernel{op: op, shape: shape, ops: []genOp{
		{t: src, offset: src.Offset(), strides: st},
		{t: out, offset: out.Offset(), strides: core.ContiguousStrides(shape), out: true},
	}}
	g.param(31, fill)
	kinds := make([]byte, len(dims))
	for d, m := range dims {
		g.param(3*d, int64(m.a))
		g.param(3*d+1, int64(m.b))
		g.param(3*d+2, int64(m.n))
		kinds[d] = byte('a' + m.kind)
	}
	return b.runIndexedKeyed(g, "remap|"+string(kinds), func() string {
		var body strings.Builder
		body.WriteString("bool fill = false;\n")
		pos := "(idx)A.off[0]"
		for d, m := range dims {
			fmt.Fprintf(&body, remapCode[m.kind], d, 3*d, 3*d+1, 3*d+2)
			pos += fmt.Sprintf(" + s%d * (idx)A.st[0][%d]", d, d)
		}
		t := storageType(out.DType())
		fmt.Fprintf(&body, "if (fill) p1[%s] = wt_from_bits<%s>(A.s[31]);\nelse p1[%s] = p0[%s];\n", g.at(1), t, g.at(1), pos)
		return body.String()
	})
}

// rolled is the remap of a dim of size n rolled by shift.
func rolled(n, shift, stride int) remapDim {
	a := 0
	if n > 0 {
		a = ((-shift)%n + n) % n
	}
	return remapDim{kind: remapRoll, a: a, n: n, stride: stride}
}

func rollKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	s := in.Shape()
	if in.Numel() == 0 {
		return nil
	}
	b, shifts := cudaOf(k), k.Attrs.Ints("shifts")
	if !k.Attrs.Has("axes") {
		return b.rollFlat(in, out, shifts[0])
	}
	per := make([]int, len(s))
	for i, ax := range k.Attrs.Ints("axes") {
		d, err := core.NormAxis(ax, len(s))
		if err != nil {
			return err
		}
		per[d] += shifts[i]
	}
	st := in.Strides()
	dims := make([]remapDim, len(s))
	for d, n := range s {
		dims[d] = rolled(n, per[d], st[d])
		if dims[d].a == 0 {
			dims[d].kind = remapIdentity
		}
	}
	return b.remap("roll", in, out, dims, 0)
}

// rollFlat rolls the flattened input: output element i reads row-major
// element (i - shift) mod n, which a source of one merged dim reads
// through its stride and any other source through its coordinates.
func (b *Backend) rollFlat(in, out *core.Tensor, shift int) error {
	n := in.Numel()
	it := lower.NewIteration(in.Shape(), in)
	flat := core.NewView(out, core.Shape{n}, []int{1}, out.Offset())
	if len(it.Shape) <= 1 {
		stride := 1
		if len(it.Shape) == 1 {
			stride = it.Strides[0][0]
		}
		return b.remap("roll", core.NewView(in, core.Shape{n}, []int{stride}, it.Offsets[0]), flat, []remapDim{rolled(n, shift, stride)}, 0)
	}
	if len(it.Shape) > maxRank {
		return fmt.Errorf("cuda: roll: a %d-dim strided input; kernels take at most %d", len(it.Shape), maxRank)
	}
	r := rolled(n, shift, 1)
	g := &genKernel{op: "roll", shape: []int{n}, ops: []genOp{
		{t: in, offset: it.Offsets[0], strides: it.Strides[0]},
		written(flat),
	}}
	g.param(0, int64(r.a))
	g.param(1, int64(n))
	for d, m := range it.Shape {
		g.param(8+d, int64(m))
	}
	rank := len(it.Shape)
	return b.runIndexedKeyed(g, "rollflat|"+strconv.Itoa(rank), func() string {
		var body strings.Builder
		body.WriteString("idx q = i + (idx)A.s[0];\nif (q >= (idx)A.s[1]) q -= (idx)A.s[1];\nidx src = (idx)A.off[0];\n")
		for d := rank - 1; d >= 0; d-- {
			fmt.Fprintf(&body, "src += (q %% (idx)A.s[%d]) * (idx)A.st[0][%d];\nq /= (idx)A.s[%d];\n", 8+d, d, 8+d)
		}
		fmt.Fprintf(&body, "p1[%s] = p0[src];\n", g.at(1))
		return body.String()
	})
}

// sliceGradKernel writes g at the slice positions of a zero tensor: along
// the axis, output coordinate first+j*step reads g's coordinate j.
func sliceGradKernel(k *core.KernelCall) error {
	g, out := k.Inputs[0], k.Outputs[0]
	s := out.Shape()
	ax, err := core.NormAxis(k.Attrs.Int("axis"), len(s))
	if err != nil {
		return err
	}
	first := k.Attrs.Int("start")
	if first < 0 {
		first += s[ax]
	}
	first = min(max(first, 0), s[ax])
	gs, st := g.Shape(), g.Strides()
	dims := make([]remapDim, len(s))
	for d, n := range gs {
		dims[d] = remapDim{kind: remapIdentity, n: n, stride: st[d]}
	}
	dims[ax] = remapDim{kind: remapSliceGrad, a: first, b: k.Attrs.Int("step"), n: gs[ax], stride: st[ax]}
	return cudaOf(k).remap("_slice_grad", g, out, dims, 0)
}

// padKinds maps pad modes to remap kinds.
var padKinds = map[string]int{"constant": remapConstant, "reflect": remapReflect, "replicate": remapReplicate}

// padDims maps the padded output's dims to the input's (pads run from the
// last dim, as in torch).
func padDims(in *core.Tensor, pads []int, mode string) []remapDim {
	s, st := in.Shape(), in.Strides()
	dims := make([]remapDim, len(s))
	for d, n := range s {
		dims[d] = remapDim{kind: remapIdentity, n: n, stride: st[d]}
	}
	for p := 0; 2*p < len(pads); p++ {
		d := len(s) - 1 - p
		dims[d].kind, dims[d].a = padKinds[mode], pads[2*p]
	}
	return dims
}

func padKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	dims := padDims(in, k.Attrs.Ints("pads"), k.Attrs.String("mode"))
	return cudaOf(k).remap("pad", in, out, dims, fillBits(out.DType(), k.Attrs.Float("value")))
}

// padGradCode declares, for input coordinate c%[1]d, the ranges
// [lo, hi) of padded coordinates that read it, in increasing order (at
// most three: the mirrored copy before, the element itself, the mirrored
// copy after). Parameters: before in A.s[3d], the input size n in
// A.s[3d+1], the padded size in A.s[3d+2].
var padGradCode = map[int]string{
	remapIdentity: "lo%[1]d[0] = c%[1]d; hi%[1]d[0] = c%[1]d + 1; nr%[1]d = 1;\n",
	remapConstant: "{ const idx o = c%[1]d + a%[1]d; if (o >= 0 && o < m%[1]d) { lo%[1]d[0] = o; hi%[1]d[0] = o + 1; nr%[1]d = 1; } }\n",
	remapReflect: "if (c%[1]d >= 1 && c%[1]d <= a%[1]d) { lo%[1]d[nr%[1]d] = a%[1]d - c%[1]d; hi%[1]d[nr%[1]d] = a%[1]d - c%[1]d + 1; nr%[1]d++; }\n" +
		"lo%[1]d[nr%[1]d] = a%[1]d + c%[1]d; hi%[1]d[nr%[1]d] = a%[1]d + c%[1]d + 1; nr%[1]d++;\n" +
		"{ const idx o = a%[1]d + 2 * (n%[1]d - 1) - c%[1]d; if (c%[1]d <= n%[1]d - 2 && o < m%[1]d) { lo%[1]d[nr%[1]d] = o; hi%[1]d[nr%[1]d] = o + 1; nr%[1]d++; } }\n",
	remapReplicate: "lo%[1]d[0] = c%[1]d == 0 ? 0 : a%[1]d + c%[1]d; hi%[1]d[0] = c%[1]d == n%[1]d - 1 ? m%[1]d : a%[1]d + c%[1]d + 1; nr%[1]d = 1;\n",
}

// padGradKernel sums g into the input positions the pad read it from: one
// thread per input element adds the padded positions that read it in g's
// row-major order, in f64, as the CPU does.
func padGradKernel(k *core.KernelCall) error {
	g, out := k.Inputs[0], k.Outputs[0]
	s := out.Shape()
	dims := padDims(out, k.Attrs.Ints("pads"), k.Attrs.String("mode"))
	gk := &genKernel{op: "_pad_grad", shape: s, ops: []genOp{
		{t: g, offset: g.Offset(), strides: g.Strides()},
		written(out),
	}}
	gs := g.Shape()
	kinds := make([]byte, len(s))
	for d := range s {
		gk.param(3*d, int64(dims[d].a))
		gk.param(3*d+1, int64(s[d]))
		gk.param(3*d+2, int64(gs[d]))
		kinds[d] = byte('a' + dims[d].kind)
	}
	return cudaOf(k).runIndexedKeyed(gk, "padgrad|"+string(kinds), func() string {
		var body, loops strings.Builder
		pos := "(idx)A.off[0]"
		for d := range s {
			fmt.Fprintf(&body, "const idx a%[1]d = (idx)A.s[%[2]d], n%[1]d = (idx)A.s[%[3]d], m%[1]d = (idx)A.s[%[4]d];\n"+
				"idx lo%[1]d[3], hi%[1]d[3];\nint nr%[1]d = 0;\n", d, 3*d, 3*d+1, 3*d+2)
			fmt.Fprintf(&body, padGradCode[dims[d].kind], d)
			fmt.Fprintf(&loops, "for (int q%[1]d = 0; q%[1]d < nr%[1]d; q%[1]d++) for (idx g%[1]d = lo%[1]d[q%[1]d]; g%[1]d < hi%[1]d[q%[1]d]; g%[1]d++)\n", d)
			pos += fmt.Sprintf(" + g%d * (idx)A.st[0][%d]", d, d)
		}
		body.WriteString("f64 acc = 0.0;\n")
		body.WriteString(loops.String())
		fmt.Fprintf(&body, "acc += (f64)ld(p0[%s]);\nput(&p1[%s], acc);\n", pos, gk.at(1))
		return body.String()
	})
}
