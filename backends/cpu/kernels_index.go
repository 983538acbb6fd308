package cpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Gather and scatter along an axis. Every kernel reads and checks all index
// values before it writes, so a bad index is an error naming the index and
// the size, never a panic. Copies move raw element bytes; additions and
// reductions run in int64 for integer dtypes (wrapping like torch) and in
// float64 for floating dtypes.

func init() {
	register("gather", gatherKernel)
	register("scatter", scatterKernel)
	register("scatter_add", func(k *core.KernelCall) error { return scatterReduceKernel(k, "sum", true) })
	// amax and amin order u64 by its keys; sum and mean need its bits
	// (scatterReduceKernel divides a u64 mean as uint64).
	extremum := func(a core.Attrs) bool { return a.String("reduce") == "amax" || a.String("reduce") == "amin" }
	register("scatter_reduce", unsignedOrder(func(k *core.KernelCall) error {
		return scatterReduceKernel(k, k.Attrs.String("reduce"), k.Attrs.Bool("include_self"))
	}, extremum, []int{0, 2}, []int{0}))
	register("_scatter_extremum_grad", scatterExtremumGradKernel)
	register("take_along_axis", takeAlongAxisKernel)
	register("_wrap_index", wrapIndexKernel)
}

// copyElements sets element dstAt[i] of dst (element i when dstAt is nil)
// to element srcAt[i] of src, or to fill (zero when nil) where srcAt[i] is
// negative. Elements are size bytes wide.
func copyElements(size int, dst, src []byte, dstAt, srcAt []int, fill []byte) {
	switch size {
	case 1:
		copyTyped(elemsOf[uint8](dst), elemsOf[uint8](src), dstAt, srcAt, fillValue[uint8](fill))
	case 2:
		copyTyped(elemsOf[uint16](dst), elemsOf[uint16](src), dstAt, srcAt, fillValue[uint16](fill))
	case 4:
		copyTyped(elemsOf[uint32](dst), elemsOf[uint32](src), dstAt, srcAt, fillValue[uint32](fill))
	default:
		copyTyped(elemsOf[uint64](dst), elemsOf[uint64](src), dstAt, srcAt, fillValue[uint64](fill))
	}
}

func fillValue[T any](fill []byte) T {
	var z T
	if fill == nil {
		return z
	}
	return elemsOf[T](fill)[0]
}

func copyTyped[T any](dst, src []T, dstAt, srcAt []int, fill T) {
	if dstAt == nil {
		// Distinct destinations: safe to split over the cores.
		parallelFor(len(srcAt), 1, func(lo, hi int) {
			for i, p := range srcAt[lo:hi] {
				if p >= 0 {
					dst[lo+i] = src[p]
				} else {
					dst[lo+i] = fill
				}
			}
		})
		return
	}
	// Scatter targets may repeat (the last write wins): stay serial.
	for i, p := range srcAt {
		v := fill
		if p >= 0 {
			v = src[p]
		}
		dst[dstAt[i]] = v
	}
}

// axisWalk locates, for every element of an index tensor (row-major), the
// data element at the same coordinates with the axis coordinate 0; adding
// index*stride gives the element the index names.
type axisWalk struct {
	base   []int
	stride int
}

func walkAlong(offset int, strides []int, idxShape core.Shape, axis int) axisWalk {
	st := append([]int{}, strides...)
	w := axisWalk{stride: st[axis]}
	st[axis] = 0
	w.base = stridedPositions(offset, idxShape, st)
	return w
}

// at is the position of element i of the walk with index value v.
func (w axisWalk) at(i int, v int64) int { return w.base[i] + int(v)*w.stride }

// checkedIndices reads an index tensor and rejects values outside [0, size).
func checkedIndices(idx *core.Tensor, size, axis int) ([]int64, error) {
	v := readI64(idx)
	for _, x := range v {
		if x < 0 || x >= int64(size) {
			if idx.DType().IsUnsigned64() {
				return nil, fmt.Errorf("index %d is out of bounds for axis %d with size %d", uint64(x), axis, size)
			}
			return nil, fmt.Errorf("index %d is out of bounds for axis %d with size %d", x, axis, size)
		}
	}
	return v, nil
}

// scatterSetup copies x into the output and returns the normalised axis,
// the checked index values and the walk of the output along the axis.
func scatterSetup(k *core.KernelCall) (int, []int64, axisWalk, error) {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return 0, nil, axisWalk{}, err
	}
	iv, err := checkedIndices(idx, x.Shape()[ax], ax)
	if err != nil {
		return 0, nil, axisWalk{}, err
	}
	copy(denseOut(out), rowMajorBytes(x))
	return ax, iv, walkAlong(0, core.ContiguousStrides(out.Shape()), idx.Shape(), ax), nil
}

func gatherKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	iv, err := checkedIndices(idx, x.Shape()[ax], ax)
	if err != nil {
		return err
	}
	w := walkAlong(x.Offset(), x.Strides(), idx.Shape(), ax)
	srcAt := tempInts(len(iv))
	for i, v := range iv {
		srcAt[i] = w.at(i, v)
	}
	copyElements(x.DType().Size(), denseOut(out), host(x), nil, srcAt, nil)
	return nil
}

func scatterKernel(k *core.KernelCall) error {
	src, idx, out := k.Inputs[2], k.Inputs[1], k.Outputs[0]
	_, iv, w, err := scatterSetup(k)
	if err != nil {
		return err
	}
	dstAt := tempInts(len(iv))
	for i, v := range iv {
		dstAt[i] = w.at(i, v)
	}
	srcAt := stridedPositions(src.Offset(), idx.Shape(), src.Strides())
	copyElements(out.DType().Size(), denseOut(out), host(src), dstAt, srcAt, nil)
	return nil
}

// scatterTargets lists, for every index element, the flat output position it
// writes to and the storage position in src of the value it carries.
func scatterTargets(k *core.KernelCall, iv []int64, w axisWalk) (dstAt, srcAt []int) {
	src, idx := k.Inputs[2], k.Inputs[1]
	dstAt = tempInts(len(iv))
	for i, v := range iv {
		dstAt[i] = w.at(i, v)
	}
	return dstAt, stridedPositions(src.Offset(), idx.Shape(), src.Strides())
}

func scatterReduceKernel(k *core.KernelCall, reduce string, include bool) error {
	x, src, out := k.Inputs[0], k.Inputs[2], k.Outputs[0]
	_, iv, w, err := scatterSetup(k)
	if err != nil {
		return err
	}
	dstAt, srcAt := scatterTargets(k, iv, w)
	sb, sd := host(src), src.DType()
	if out.DType().IsFloat() {
		acc := readF64(x)
		vals := tempF64(len(srcAt))
		for i, p := range srcAt {
			vals[i] = numerics.GetF64(sd, sb, p)
		}
		reduceInto(acc, dstAt, vals, reduce, include, floatCombiner(reduce),
			func(sum float64, n int) float64 { return sum / float64(n) })
		writeF64(out, acc)
		return nil
	}
	acc := readI64(x)
	vals := tempI64(len(srcAt))
	for i, p := range srcAt {
		vals[i] = numerics.GetI64(sd, sb, p)
	}
	mean := floorDiv
	if out.DType().IsUnsigned64() {
		mean = func(sum int64, n int) int64 { return int64(uint64(sum) / uint64(n)) }
	}
	reduceInto(acc, dstAt, vals, reduce, include, intCombiner(reduce), mean)
	writeI64(out, acc)
	return nil
}

// reduceInto folds vals into acc at their targets. Without include_self the
// first value that reaches a target replaces x's value there; mean divides
// by the number of values that met (x's value counting as one).
func reduceInto[T int64 | float64](acc []T, targets []int, vals []T, reduce string, include bool,
	combine func(a, b T) T, mean func(sum T, n int) T) {
	counts := make([]int, len(acc))
	for i, t := range targets {
		if !include && counts[t] == 0 {
			acc[t] = vals[i]
		} else {
			acc[t] = combine(acc[t], vals[i])
		}
		counts[t]++
	}
	if reduce != "mean" {
		return
	}
	for t, c := range counts {
		if c == 0 {
			continue
		}
		if include {
			c++
		}
		acc[t] = mean(acc[t], c)
	}
}

// floatCombiner combines two values; amax and amin propagate NaN as torch.
func floatCombiner(reduce string) func(a, b float64) float64 {
	switch reduce {
	case "amax":
		return func(a, b float64) float64 {
			if a != a || b != b {
				return math.NaN()
			}
			return max(a, b)
		}
	case "amin":
		return func(a, b float64) float64 {
			if a != a || b != b {
				return math.NaN()
			}
			return min(a, b)
		}
	}
	return func(a, b float64) float64 { return a + b }
}

func intCombiner(reduce string) func(a, b int64) int64 {
	switch reduce {
	case "amax":
		return func(a, b int64) int64 { return max(a, b) }
	case "amin":
		return func(a, b int64) int64 { return min(a, b) }
	}
	return func(a, b int64) int64 { return a + b }
}

// floorDiv rounds toward negative infinity, as torch's integer scatter mean.
func floorDiv(sum int64, n int) int64 {
	q := sum / int64(n)
	if sum%int64(n) != 0 && sum < 0 {
		q--
	}
	return q
}

// scatterExtremumGradKernel is torch's rule for amax/amin: at each target,
// N counts x's value (when equal to the result) and the src values equal to
// it; each of them gets g/N. Without include_self, x gets nothing at
// scattered positions (N still counts it, as in torch).
func scatterExtremumGradKernel(k *core.KernelCall) error {
	g, x, idx, src, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Inputs[3], k.Inputs[4]
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	iv, err := checkedIndices(idx, x.Shape()[ax], ax)
	if err != nil {
		return err
	}
	gv, xv, ov := readF64(g), readF64(x), readF64(out)
	w := walkAlong(0, core.ContiguousStrides(x.Shape()), idx.Shape(), ax)
	srcPos := stridedPositions(src.Offset(), idx.Shape(), src.Strides())
	srcFlat := stridedPositions(0, idx.Shape(), core.ContiguousStrides(src.Shape()))
	sb, sd := host(src), src.DType()
	eq := func(a, b float64) float64 {
		if a == b {
			return 1
		}
		return 0
	}
	count := tempF64(len(xv))
	for t := range xv {
		count[t] = eq(xv[t], ov[t])
	}
	targets, sv := tempInts(len(iv)), tempF64(len(iv))
	for i, v := range iv {
		targets[i], sv[i] = w.at(i, v), numerics.GetF64(sd, sb, srcPos[i])
		count[targets[i]] += eq(sv[i], ov[targets[i]])
	}
	gx, gs := tempF64(len(xv)), tempF64(src.Numel())
	for t := range xv {
		gx[t] = eq(xv[t], ov[t]) * (gv[t] / count[t])
	}
	for i, t := range targets {
		gs[srcFlat[i]] = eq(sv[i], ov[t]) * (gv[t] / count[t])
		if !k.Attrs.Bool("include_self") {
			gx[t] = 0
		}
	}
	writeF64(k.Outputs[0], gx)
	writeF64(k.Outputs[1], gs)
	return nil
}

// wrapIndex maps v into [0, size), counting negatives from the end.
func wrapIndex(v int64, size, axis int) (int64, error) {
	w := v
	if w < 0 {
		w += int64(size)
	}
	if w < 0 || w >= int64(size) {
		return 0, fmt.Errorf("index %d is out of bounds for axis %d with size %d", v, axis, size)
	}
	return w, nil
}

func takeAlongAxisKernel(k *core.KernelCall) error {
	x, idx, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
	os, xs := out.Shape(), x.Shape()
	ax, err := core.NormAxis(k.Attrs.Int("axis"), x.Rank())
	if err != nil {
		return err
	}
	strides := x.Strides()
	for d := range strides {
		if xs[d] == 1 && d != ax {
			strides[d] = 0
		}
	}
	w := walkAlong(x.Offset(), strides, os, ax)
	iv := readI64As(idx, os)
	srcAt := tempInts(len(iv))
	for i, v := range iv {
		wv, err := wrapIndex(v, xs[ax], ax)
		if err != nil {
			return err
		}
		srcAt[i] = w.at(i, wv)
	}
	copyElements(x.DType().Size(), denseOut(out), host(x), nil, srcAt, nil)
	return nil
}

func wrapIndexKernel(k *core.KernelCall) error {
	size := k.Attrs.Int("size")
	v := readI64(k.Inputs[0])
	for i := range v {
		w, err := wrapIndex(v[i], size, 0)
		if err != nil {
			return err
		}
		v[i] = w
	}
	writeI64(k.Outputs[0], v)
	return nil
}
