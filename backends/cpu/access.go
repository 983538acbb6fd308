package cpu

import (
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// host returns the raw bytes of t's storage.
func host(t *core.Tensor) []byte { return t.Storage().(core.HostStorage).Host() }

// indexMap lists, for every element of shape (row-major), the storage index
// of t's element broadcast to shape. Broadcast dims get stride 0.
func indexMap(t *core.Tensor, shape core.Shape) []int {
	ts, st := t.Shape(), t.Strides()
	rank := len(shape)
	strides := make([]int, rank)
	off := rank - len(ts)
	for i := range ts {
		if ts[i] != 1 {
			strides[off+i] = st[i]
		}
	}
	return stridedPositions(t.Offset(), shape, strides)
}

// stridedPositions lists the storage index of every element of a layout in
// row-major order over shape (indexMap with explicit strides; a stride of 0
// repeats an element).
func stridedPositions(offset int, shape core.Shape, strides []int) []int {
	out := tempInts(shape.Numel())
	fillStridedPositions(out, offset, shape, strides)
	return out
}

// fillStridedPositions is stridedPositions into out, which has one slot
// per element of shape (matrixBatchOffsets keeps its list, so it cannot
// take a temporary one).
func fillStridedPositions(out []int, offset int, shape core.Shape, strides []int) {
	if len(out) == 0 {
		return
	}
	idx := make([]int, len(shape))
	pos := offset
	for i := range out {
		out[i] = pos
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			pos += strides[d]
			if idx[d] < shape[d] {
				break
			}
			pos -= strides[d] * shape[d]
			idx[d] = 0
		}
	}
}

// axisSplit views shape as outer x n x inner around axis, the layout of a
// scan, search or normalisation along one axis of a row-major array; a
// scalar is one element.
func axisSplit(shape core.Shape, axis int) (outer, n, inner int) {
	if len(shape) == 0 {
		return 1, 1, 1
	}
	return shape[:axis].Numel(), shape[axis], shape[axis+1:].Numel()
}

// isDense reports whether t is contiguous with exactly shape.
func isDense(t *core.Tensor, shape core.Shape) bool {
	return t.IsContiguous() && t.Shape().Equal(shape)
}

// readF64 returns t's elements in logical order as float64.
func readF64(t *core.Tensor) []float64 { return readF64As(t, t.Shape()) }

// readF64As reads t broadcast to shape into a checked temporary, walking
// t's layout (no index map).
func readF64As(t *core.Tensor, shape core.Shape) []float64 {
	b, d := host(t), t.DType()
	out := tempF64(shape.Numel())
	if len(out) == 0 {
		return out
	}
	if isDense(t, shape) {
		off := t.Offset()
		if d == core.F32 {
			for i, v := range f32view(b)[off : off+len(out)] {
				out[i] = float64(v)
			}
			return out
		}
		for i := range out {
			out[i] = numerics.GetF64(d, b, off+i)
		}
		return out
	}
	w := walk{shape: shape.Clone(), strides: [][]int{viewStrides(t, shape)}, base: []int{t.Offset()}}
	w.coalesce()
	i, step := 0, w.step(0)
	w.runs(func(pos []int, n int) {
		gatherF64(out[i:i+n], d, b, pos[0], step)
		i += n
	})
	return out
}

// readI64 returns t's elements in logical order as int64.
func readI64(t *core.Tensor) []int64 { return readI64As(t, t.Shape()) }

// readI64As is readF64As in int64.
func readI64As(t *core.Tensor, shape core.Shape) []int64 {
	b, d := host(t), t.DType()
	out := tempI64(shape.Numel())
	if len(out) == 0 {
		return out
	}
	w := walk{shape: shape.Clone(), strides: [][]int{viewStrides(t, shape)}, base: []int{t.Offset()}}
	w.coalesce()
	i, step := 0, w.step(0)
	w.runs(func(pos []int, n int) {
		gatherI64(out[i:i+n], d, b, pos[0], step)
		i += n
	})
	return out
}

// readInts reads an index tensor as ints. A u64 index past 2^63 (a
// negative int64 bit pattern) becomes math.MaxInt, out of every range, so
// the kernel's range check refuses it instead of counting from the end.
func readInts(t *core.Tensor) []int {
	v := readI64(t)
	out := tempInts(len(v))
	unsigned := t.DType().IsUnsigned64()
	for i, x := range v {
		if unsigned && x < 0 {
			x = math.MaxInt64
		}
		out[i] = int(x)
	}
	return out
}

// writeF64 stores values into a freshly allocated (contiguous) output.
func writeF64(t *core.Tensor, vals []float64) {
	if len(vals) == 0 {
		return
	}
	b, d := host(t), t.DType()
	off := t.Offset()
	if d == core.F32 {
		dst := f32view(b)[off : off+len(vals)]
		for i, v := range vals {
			dst[i] = float32(v)
		}
		return
	}
	for i, v := range vals {
		numerics.PutF64(d, b, off+i, v)
	}
}

// writeI64 stores integers into a contiguous output.
func writeI64(t *core.Tensor, vals []int64) {
	b, d := host(t), t.DType()
	off := t.Offset()
	for i, v := range vals {
		numerics.PutI64(d, b, off+i, v)
	}
}

// f32view reinterprets aligned storage bytes as float32.
func f32view(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// f32s is the dense float32 data of a contiguous f32 tensor.
func f32s(t *core.Tensor) []float32 {
	if t.Numel() == 0 {
		return nil // an empty view may sit at an offset past its empty storage
	}
	off := t.Offset()
	return f32view(host(t))[off : off+t.Numel()]
}

// denseF32 reports whether t is a contiguous f32 tensor.
func denseF32(t *core.Tensor) bool { return t.DType() == core.F32 && t.IsContiguous() }
