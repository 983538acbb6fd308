package webgpu

import (
	"fmt"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/wgsl"
)

// Shape copies (wgsl/shape.wgsl). Flip, roll, tile, repeat_interleave, pad
// and the slice gradient are one "remap" kernel: each output coordinate
// maps, dim by dim, to a source coordinate or to the fill value, and the
// source is then read through its own layout, so strided views cost no
// copy. Concat and stack copy each input into its slab of the output with
// one dispatch per input, so any number of inputs stays within the
// storage-buffer limit.

func init() {
	register("concat", sxJoinKernel)
	register("stack", sxJoinKernel)
	register("flip", sxFlipKernel)
	register("roll", sxRollKernel)
	register("tile", sxTileKernel)
	register("repeat_interleave", sxRepeatInterleaveKernel)
	register("pad", sxPadKernel)
	register("_slice_grad", sxSliceGradKernel)
	register("_pad_grad", sxPadGradKernel)
}

// sxRun dispatches threads threads of kind in the given family (shape or
// index) with ins bound read-only and outs read-write. extra holds the
// template fields of the kind (WGSL snippets); they and the physical types
// make the pipeline key.
func (b *Backend) sxRun(family, kind string, ins, outs []*core.Tensor, threads int, extra map[string]any, prm *params) error {
	if threads == 0 {
		return nil
	}
	inT, outT := make([]string, len(ins)), make([]string, len(outs))
	for i, t := range ins {
		inT[i] = physical(t.DType())
	}
	for i, t := range outs {
		outT[i] = physical(t.DType())
	}
	data := map[string]any{"WG": mapWG, "Kind": kind, "Ins": inT, "Outs": outT, "Checked": false}
	for k, v := range extra {
		data[k] = v
	}
	// fmt prints maps with sorted keys, so equal extras give equal keys.
	key := fmt.Sprintf("sx|%s|%s|%s|%s|%v", family, kind, strings.Join(inT, ","), strings.Join(outT, ","), extra)
	p, err := b.pipelineFor(key, len(ins), len(outs), func() (string, error) { return wgsl.Render(family, data) })
	if err != nil {
		return err
	}
	prm.setI(wgsl.SlotN, threads)
	bufs, err := buffers(append(append([]*core.Tensor{}, ins...), outs...)...)
	if err != nil {
		return err
	}
	return b.run(p, prm, threads, mapWG, bufs...)
}

// sxShape writes a thread shape (rank and dims) into the standard slots;
// the kernels that use it index dims directly, so it is not merged.
func sxShape(p *params, s core.Shape) error {
	if len(s) > wgsl.MaxRank {
		return fmt.Errorf("webgpu: shape %v has %d dims; the GPU kernels take at most %d", s, len(s), wgsl.MaxRank)
	}
	p.setI(wgsl.SlotRank, len(s))
	for d, n := range s {
		p.setI(wgsl.SlotShape+d, n)
	}
	return nil
}

// sxFillWord is value converted to d as the CPU backend does (numerics.PutF64),
// in d's GPU word.
func sxFillWord(d core.DType, value float64) (uint32, error) {
	raw := make([]byte, 8)
	numerics.PutF64(d, raw, 0, value)
	w, err := toPhysical(d, raw[:d.Size()])
	if err != nil {
		return 0, err
	}
	return uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24, nil
}

// Map kinds of the remap kernel (sx_map in shape.wgsl).
const (
	sxMapIdentity = iota
	sxMapFlip
	sxMapRoll      // a: (-shift) mod n
	sxMapTile      // source coordinate o mod n
	sxMapRepeat    // a: repeats
	sxMapConstant  // a: pad before; outside the source: fill
	sxMapReflect   // a: pad before
	sxMapReplicate // a: pad before
	sxMapSliceGrad // a: first, b: step, n: count
)

// sxDim is how one output dim maps to the source: kind, its parameters, the
// source size and the source's row-major stride along it (0: the dim does
// not exist in the source, as tile's leading dims).
type sxDim struct{ kind, a, b, n, stride int }

// sxIdentityDims maps every dim of a source of shape s to itself.
func sxIdentityDims(s core.Shape) []sxDim {
	st := core.ContiguousStrides(s)
	dims := make([]sxDim, len(s))
	for d, n := range s {
		dims[d] = sxDim{kind: sxMapIdentity, n: n, stride: st[d]}
	}
	return dims
}

// sxRemap fills out (contiguous) from src through dims, one per dim of
// outShape (out's own shape, or a flattening of it); fill is the word of
// positions no source element maps to.
func (b *Backend) sxRemap(src, out *core.Tensor, outShape core.Shape, dims []sxDim, fill uint32) error {
	var prm params
	if err := sxShape(&prm, outShape); err != nil {
		return err
	}
	prm.setU(0, fill)
	for d, m := range dims {
		prm.setI(64+d, m.kind)
		prm.setI(72+d, m.a)
		prm.setI(80+d, m.b)
		prm.setI(88+d, m.n)
		prm.setI(96+d, m.stride)
	}
	// The source's own layout, merged, so a contiguous one is one dim.
	it := newIteration(src.Shape(), src)
	if len(it.Shape) > wgsl.MaxRank {
		return fmt.Errorf("webgpu: a %d-dim strided source; the GPU kernels take at most %d", len(it.Shape), wgsl.MaxRank)
	}
	prm.setI(104, len(it.Shape))
	for d, n := range it.Shape {
		prm.setI(105+d, n)
	}
	writeOperand(&prm, wgsl.OperandSlot(0), it.Offsets[0], it.Strides[0])
	store := storeExpr(out.DType(), lower.Conv("v", physical(src.DType()), physical(out.DType())))
	return b.sxRun("shape", "remap", []*core.Tensor{src}, []*core.Tensor{out}, out.Numel(), map[string]any{"Store": store}, &prm)
}

// sxJoinKernel serves concat and stack: input i is copied into the output
// view that starts at its offset along the axis (stack: at index i of the
// new axis, which the input lacks).
func sxJoinKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	os, ost := out.Shape(), out.Strides()
	ax, err := core.NormAxis(k.Attrs.Int("axis"), len(os))
	if err != nil {
		return err
	}
	stack := k.Op.Name == "stack"
	b := gpuOf(k)
	start := 0
	for _, in := range k.Inputs {
		slabStrides := ost
		if stack {
			slabStrides = append(append([]int{}, ost[:ax]...), ost[ax+1:]...)
		}
		slab := core.NewView(out, in.Shape(), slabStrides, start*ost[ax])
		if stack {
			start++
		} else {
			start += in.Shape()[ax]
		}
		n := in.Numel()
		if n == 0 {
			continue
		}
		var prm params
		it := newIteration(in.Shape(), in, slab)
		if err := it.write(&prm, n); err != nil {
			return err
		}
		store := storeExpr(out.DType(), lower.Conv("v", physical(in.DType()), physical(out.DType())))
		extra := map[string]any{"Store": store, "Rank": len(it.Shape)}
		if err := b.sxRun("shape", "copy", []*core.Tensor{in}, []*core.Tensor{slab}, n, extra, &prm); err != nil {
			return err
		}
	}
	return nil
}

func sxFlipKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	s := in.Shape()
	axes, err := core.NormAxes(k.Attrs.Ints("axes"), len(s))
	if err != nil {
		return err
	}
	dims := sxIdentityDims(s)
	for _, d := range axes {
		dims[d].kind = sxMapFlip
	}
	return gpuOf(k).sxRemap(in, out, out.Shape(), dims, 0)
}

// sxRolled is the roll map of a dim of size n: source (o - shift) mod n,
// written as (o + a) mod n with a in [0, n).
func sxRolled(n, shift, stride int) sxDim {
	a := 0
	if n > 0 {
		a = ((-shift)%n + n) % n
	}
	return sxDim{kind: sxMapRoll, a: a, n: n, stride: stride}
}

func sxRollKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	s := in.Shape()
	if in.Numel() == 0 {
		return nil
	}
	a := k.Attrs
	shifts := a.Ints("shifts")
	if !a.Has("axes") {
		// The flattened tensor rolls: one output dim over the row-major
		// order, which the source layout then resolves.
		n := in.Numel()
		return gpuOf(k).sxRemap(in, out, core.Shape{n}, []sxDim{sxRolled(n, shifts[0], 1)}, 0)
	}
	per := make([]int, len(s))
	for i, ax := range a.Ints("axes") {
		d, err := core.NormAxis(ax, len(s))
		if err != nil {
			return err
		}
		per[d] += shifts[i]
	}
	dims := sxIdentityDims(s)
	for d, n := range s {
		dims[d] = sxRolled(n, per[d], dims[d].stride)
	}
	return gpuOf(k).sxRemap(in, out, out.Shape(), dims, 0)
}

func sxTileKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	os := out.Shape()
	lead := len(os) - in.Rank()
	dims := make([]sxDim, len(os))
	for d, m := range sxIdentityDims(in.Shape()) {
		dims[lead+d] = sxDim{kind: sxMapTile, n: m.n, stride: m.stride}
	}
	return gpuOf(k).sxRemap(in, out, os, dims, 0)
}

func sxRepeatInterleaveKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	r := k.Attrs.Int("repeats")
	if out.Numel() == 0 {
		return nil
	}
	if !k.Attrs.Has("axis") {
		return gpuOf(k).sxRemap(in, out, out.Shape(), []sxDim{{kind: sxMapRepeat, a: r, n: in.Numel(), stride: 1}}, 0)
	}
	ax, err := core.NormAxis(k.Attrs.Int("axis"), in.Rank())
	if err != nil {
		return err
	}
	dims := sxIdentityDims(in.Shape())
	dims[ax].kind, dims[ax].a = sxMapRepeat, r
	return gpuOf(k).sxRemap(in, out, out.Shape(), dims, 0)
}

// sxSliceGradKernel writes g at the slice positions of a zero tensor: along
// the axis, output coordinate first+j*step reads g's coordinate j.
func sxSliceGradKernel(k *core.KernelCall) error {
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
	dims := sxIdentityDims(g.Shape())
	dims[ax] = sxDim{kind: sxMapSliceGrad, a: first, b: k.Attrs.Int("step"), n: g.Shape()[ax], stride: dims[ax].stride}
	return gpuOf(k).sxRemap(g, out, s, dims, 0)
}

// sxPadDims maps the padded output's dims to the input's; pads run from
// the last dim, as in torch.
func sxPadDims(in core.Shape, pads []int, mode string) []sxDim {
	dims := sxIdentityDims(in)
	kind := map[string]int{"reflect": sxMapReflect, "replicate": sxMapReplicate}[mode]
	if kind == 0 {
		kind = sxMapConstant
	}
	for p := 0; 2*p < len(pads); p++ {
		d := len(in) - 1 - p
		dims[d].kind, dims[d].a = kind, pads[2*p]
	}
	return dims
}

func sxPadKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	fill, err := sxFillWord(out.DType(), k.Attrs.Float("value"))
	if err != nil {
		return err
	}
	dims := sxPadDims(in.Shape(), k.Attrs.Ints("pads"), k.Attrs.String("mode"))
	return gpuOf(k).sxRemap(in, out, out.Shape(), dims, fill)
}

// sxPadGradKernel sums g back into the input positions a pad read: one
// thread per input element loops over the padded positions that read it
// (at most three per dim for reflect, an edge run for replicate), so the
// sum needs no atomics and has a fixed order.
func sxPadGradKernel(k *core.KernelCall) error {
	g, out := k.Inputs[0], k.Outputs[0]
	s, gs := out.Shape(), g.Shape()
	var prm params
	if err := sxShape(&prm, s); err != nil {
		return err
	}
	mode := map[string]int{"constant": 1, "reflect": 2, "replicate": 3}[k.Attrs.String("mode")]
	pads := k.Attrs.Ints("pads")
	for d := range s {
		prm.setI(72+d, gs[d])
		prm.setI(80+d, 1)
		if p := len(s) - 1 - d; 2*p < len(pads) {
			prm.setI(64+d, pads[2*p])
			prm.setI(80+d, mode)
		}
	}
	if err := gpuOf(k).checkTrips(fmt.Sprintf("a %s pad's gradient (pads %v)", k.Attrs.String("mode"), pads), sxPadGradTrips(s, pads, mode)); err != nil {
		return err
	}
	writeOperand(&prm, wgsl.OperandSlot(0), g.Offset(), g.Strides())
	store := storeExpr(out.DType(), "v")
	return gpuOf(k).sxRun("shape", "padgrad", []*core.Tensor{g}, []*core.Tensor{out}, out.Numel(), map[string]any{"Store": store}, &prm)
}

// sxPadGradTrips bounds the loop iterations of one padgrad thread over
// input shape s: per dim a count of the padded positions that read the
// element (one for constant, up to three for reflect, an edge element and
// its whole run for replicate), then a step per combination, each walking
// the dims. A replicate pad of 300 on both sides of an image gives its
// corners 90,601 combinations, past a software driver's loop limit
// (gpu_looplimit.go).
func sxPadGradTrips(s core.Shape, pads []int, mode int) int {
	combos, counting := 1, 0
	for d, n := range s {
		count := 1
		if p := len(s) - 1 - d; 2*p < len(pads) {
			before, after := max(pads[2*p], 0), max(pads[2*p+1], 0)
			switch {
			case mode == 2:
				count = 3
			case mode == 3 && n == 1:
				count = before + after + 1
			case mode == 3:
				count = max(before, after) + 1
			}
		}
		combos = min(combos, 1<<40/count) * count // saturates: a bound, not a count
		counting += count + 1
	}
	return counting + combos*(1+len(s)) + 16
}
