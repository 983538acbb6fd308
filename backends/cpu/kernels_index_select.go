package cpu

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/numerics"
)

// Whole-slice indexing, masks, nonzero and one_hot. Dynamic ops (one_hot,
// masked_select, nonzero) count first, then allocate their outputs.

func init() {
	register("index_select", indexSelectKernel)
	register("index_add", indexAddKernel)
	register("embedding", embeddingKernel)
	register("one_hot", oneHotKernel)
	register("masked_fill", maskedFillKernel)
	register("masked_select", maskedSelectKernel)
	register("_masked_select_grad", maskedSelectGradKernel)
	register("nonzero", nonzeroKernel)
}

// selectWalk locates, for every element of a tensor shaped like x with the
// axis resized to len(iv), the element of the layout (offset, strides) it
// corresponds to, reading the axis coordinate through the index values.
func selectWalk(offset int, strides []int, shape core.Shape, ax int, iv []int64) []int {
	w := walkAlong(offset, strides, shape, ax)
	inner := shape[ax+1:].Numel()
	for i := range w.base {
		w.base[i] += int(iv[(i/inner)%len(iv)]) * w.stride
	}
	return w.base
}

func indexSelectKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	iv, err := checkedIndices(idx, x.Shape()[ax], ax)
	if err != nil || out.Numel() == 0 {
		return err
	}
	if ax == 0 && x.IsContiguous() {
		selectRows(x, iv, denseOut(out))
		return nil
	}
	srcAt := selectWalk(x.Offset(), x.Strides(), out.Shape(), ax, iv)
	copyElements(x.DType().Size(), denseOut(out), host(x), nil, srcAt, nil)
	return nil
}

// selectRows is index_select along axis 0 of a contiguous x: whole rows
// copied as bytes (the gather of message passing, E rows per layer).
func selectRows(x *core.Tensor, iv []int64, dst []byte) {
	size := x.DType().Size()
	row := x.Shape()[1:].Numel() * size
	src := host(x)[x.Offset()*size:]
	parallelFor(len(iv), row, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			at := int(iv[j]) * row
			copy(dst[j*row:(j+1)*row], src[at:at+row])
		}
	})
}

func indexAddKernel(k *core.KernelCall) error {
	x, idx, src, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	iv, err := checkedIndices(idx, x.Shape()[ax], ax)
	if err != nil {
		return err
	}
	if src.Numel() == 0 {
		copy(denseOut(out), rowMajorBytes(x))
		return nil
	}
	alpha := k.Attrs.Float("alpha")
	if ax == 0 && denseF32(x) && denseF32(src) && out.DType() == core.F32 {
		addRowsF32(f32s(out), f32s(x), f32s(src), iv, float32(alpha))
		return nil
	}
	dstAt := selectWalk(0, core.ContiguousStrides(x.Shape()), src.Shape(), ax, iv)
	if out.DType().IsFloat() {
		acc, sv := readF64(x), readF64(src)
		for i, t := range dstAt {
			acc[t] += alpha * sv[i]
		}
		writeF64(out, acc)
		return nil
	}
	acc, sv, a := readI64(x), readI64(src), int64(alpha)
	for i, t := range dstAt {
		acc[t] += a * sv[i]
	}
	writeI64(out, acc)
	return nil
}

func embeddingKernel(k *core.KernelCall) error {
	w, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ws, st := w.Shape(), w.Strides()
	iv, err := checkedIndices(idx, ws[0], 0)
	if err != nil {
		return err
	}
	dim := ws[1]
	srcAt := tempInts(len(iv) * dim)
	for j, v := range iv {
		row := w.Offset() + int(v)*st[0]
		for d := 0; d < dim; d++ {
			srcAt[j*dim+d] = row + d*st[1]
		}
	}
	copyElements(w.DType().Size(), denseOut(out), host(w), nil, srcAt, nil)
	return nil
}

func oneHotKernel(k *core.KernelCall) error {
	idx := k.Inputs[0]
	iv := readI64(idx)
	classes, err := kernelkit.OneHotClasses(k.Attrs, len(iv), func() (int64, error) { return slices.Max(iv), nil })
	if err != nil {
		return err
	}
	if err := kernelkit.CheckOneHot(iv, classes); err != nil {
		return err
	}
	out, err := k.Alloc(append(idx.Shape(), int(classes)), core.I64)
	if err != nil {
		return err
	}
	vals := tempI64(out.Numel())
	for i, v := range iv {
		vals[int64(i)*classes+v] = 1
	}
	writeI64(out, vals)
	k.SetOutputs(out)
	return nil
}

// maskBits reads a bool mask broadcast to shape.
func maskBits(mask *core.Tensor, shape core.Shape) []bool {
	b := host(mask)
	at := indexMap(mask, shape)
	bits := make([]bool, len(at))
	for i, p := range at {
		bits[i] = b[p] != 0
	}
	return bits
}

func maskedFillKernel(k *core.KernelCall) error {
	x, mask, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	shape := out.Shape()
	srcAt := indexMap(x, shape)
	for i, on := range maskBits(mask, shape) {
		if on {
			srcAt[i] = -1
		}
	}
	fill := alignedBytes(8)
	numerics.PutF64(out.DType(), fill, 0, k.Attrs.Float("value"))
	copyElements(out.DType().Size(), denseOut(out), host(x), nil, srcAt, fill)
	return nil
}

func maskedSelectKernel(k *core.KernelCall) error {
	x, mask := k.Inputs[0], k.Inputs[1]
	shape, err := core.BroadcastShapes(x.Shape(), mask.Shape())
	if err != nil {
		return err
	}
	xAt := indexMap(x, shape)
	var srcAt []int
	for i, on := range maskBits(mask, shape) {
		if on {
			srcAt = append(srcAt, xAt[i])
		}
	}
	out, err := k.Alloc(core.Shape{len(srcAt)}, x.DType())
	if err != nil {
		return err
	}
	copyElements(x.DType().Size(), denseOut(out), host(x), nil, srcAt, nil)
	k.SetOutputs(out)
	return nil
}

func maskedSelectGradKernel(k *core.KernelCall) error {
	g, mask, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	gAt := indexMap(g, g.Shape())
	bits := maskBits(mask, out.Shape())
	srcAt := tempInts(len(bits))
	next := 0
	for i, on := range bits {
		srcAt[i] = -1
		if on {
			if next == len(gAt) {
				return fmt.Errorf("g has %d elements, the mask selects more", len(gAt))
			}
			srcAt[i] = gAt[next]
			next++
		}
	}
	if next != len(gAt) {
		return fmt.Errorf("g has %d elements, the mask selects %d", len(gAt), next)
	}
	copyElements(out.DType().Size(), denseOut(out), host(g), nil, srcAt, nil)
	return nil
}

// nonzeroKernel streams x twice: to count (a dim x broadcasts is read once
// and its copies counted, so a huge view is counted in the time of its
// distinct elements and its too large output refused by the allocator), then
// to write the coordinates, which it tracks as one position per dim.
func nonzeroKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	shape := x.Shape()
	rank := len(shape)
	count := walk{shape: shape.Clone(), strides: [][]int{x.Strides()}, base: []int{x.Offset()}}
	mult := 1
	for d, st := range x.Strides() {
		if st == 0 && shape[d] > 1 {
			mult *= shape[d]
			count.shape[d] = 1
		}
	}
	count.coalesce()
	n := 0
	runsF64(&count, x, func(_ []int, v []float64) {
		for _, e := range v {
			if e != 0 {
				n++
			}
		}
	})
	n *= mult
	out, err := k.Alloc(core.Shape{n, rank}, core.I64)
	if err != nil {
		return err
	}
	k.SetOutputs(out)
	if n == 0 || rank == 0 {
		return nil
	}
	w := walk{shape: shape.Clone(), strides: [][]int{x.Strides()}, base: make([]int, rank+1)}
	w.base[0] = x.Offset()
	for d := range rank {
		coord := make([]int, rank)
		coord[d] = 1
		w.strides = append(w.strides, coord)
	}
	w.coalesce()
	steps := make([]int, rank+1)
	for s := range steps {
		steps[s] = w.step(s)
	}
	b, at := host(out), out.Offset()
	runsF64(&w, x, func(pos []int, v []float64) {
		for j, e := range v {
			if e == 0 {
				continue
			}
			for d := range rank {
				numerics.PutI64(core.I64, b, at+d, int64(pos[1+d]+j*steps[1+d]))
			}
			at += rank
		}
	})
	return nil
}

// addRowsF32 is index_add along axis 0 in f32 (the backward of the gather
// above): out = x, then row iv[j] of out += alpha * row j of src, in index
// order, so the result does not depend on the core count.
func addRowsF32(out, x, src []float32, iv []int64, alpha float32) {
	copy(out, x)
	if len(iv) == 0 {
		return
	}
	row := len(src) / len(iv)
	for j, v := range iv {
		d := out[int(v)*row : int(v)*row+row]
		s := src[j*row : j*row+row]
		if alpha == 1 {
			for c := range d {
				d[c] += s[c]
			}
		} else {
			for c := range d {
				d[c] += alpha * s[c]
			}
		}
	}
}
