package cpu

import (
	"unsafe"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Conversions between float32 and the dtypes the elementwise kernels
// compute through it: f16 and bf16 (every op on them runs in float32
// blocks, as PyTorch's CPU kernels do, rounding once on the store: for +,
// -, *, / and sqrt that is exactly the general path's float64 result
// rounded, since float32 has more than twice their precision) and int32.
// Each rounds exactly as core's scalar conversions, which the Go loops
// call.

// u16view, i32view and i64view reinterpret aligned storage bytes.
func u16view(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

func i32view(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func i64view(b []byte) []int64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// ewConv names a conversion with a vector kernel.
type ewConv int

const (
	convToF16 ewConv = iota
	convToBF16
	convFromF16
	convFromBF16
	convToI32
	convFromI32
)

// convertBlocks converts src into dst with conv's vector kernel: the body,
// a multiple of ewLanes, in place, the elements left over through padded
// buffers on the stack. Every conversion splits its input this way; the
// callers keep their own Go loop for CPUs without the kernels.
func convertBlocks[S, D uint16 | float32 | int32](conv ewConv, dst []D, src []S) {
	n := len(src)
	body := n &^ (ewLanes - 1)
	if body > 0 {
		vecConvert(conv, &dst[0], &src[0], body)
	}
	if body < n {
		var st [ewLanes]S
		var ot [ewLanes]D
		copy(st[:], src[body:])
		vecConvert(conv, &ot[0], &st[0], ewLanes)
		copy(dst[body:n], ot[:])
	}
}

// vecConvert calls conv's kernel directly, not through a func value: an
// indirect call would make convertBlocks' stack buffers escape to the
// heap. The pointers' types are conv's (convertBlocks' callers pair them).
func vecConvert[S, D uint16 | float32 | int32](conv ewConv, dst *D, src *S, n int) {
	switch conv {
	case convToF16, convToBF16:
		vecNarrow(wide(), conv == convToBF16, any(dst).(*uint16), any(src).(*float32), n)
	case convFromF16, convFromBF16:
		vecWiden(wide(), conv == convFromBF16, any(dst).(*float32), any(src).(*uint16), n)
	case convToI32:
		vecF32ToI32(wide(), any(dst).(*int32), any(src).(*float32), n)
	case convFromI32:
		vecI32ToF32(wide(), any(dst).(*float32), any(src).(*int32), n)
	}
}

// convertHalf converts to or from a 16-bit float (bf16 or f16), with the
// vector kernel or fn per element.
func convertHalf[S, D uint16 | float32](conv ewConv, fn func(S) D, dst []D, src []S) {
	if simdLevel == simdNone {
		for i, x := range src {
			dst[i] = fn(x)
		}
		return
	}
	convertBlocks(conv, dst, src)
}

func f32ToF16(dst []uint16, src []float32)  { convertHalf(convToF16, numerics.F16Bits, dst, src) }
func f32ToBF16(dst []uint16, src []float32) { convertHalf(convToBF16, numerics.BF16Bits, dst, src) }
func f16ToF32(dst []float32, src []uint16)  { convertHalf(convFromF16, numerics.F16Float, dst, src) }
func bf16ToF32(dst []float32, src []uint16) { convertHalf(convFromBF16, numerics.BF16Float, dst, src) }

// f32ToI32 is numerics.FloatToInt into int32: truncation, NaN to 0, saturation.
func f32ToI32(dst []int32, src []float32) {
	if simdLevel == simdNone {
		for i, x := range src {
			dst[i] = int32(numerics.FloatToInt(core.I32, float64(x)))
		}
		return
	}
	convertBlocks(convToI32, dst, src)
}

// i32ToF32 rounds each int32 to the nearest float32, ties to even.
func i32ToF32(dst []float32, src []int32) {
	if simdLevel == simdNone {
		for i, x := range src {
			dst[i] = float32(x)
		}
		return
	}
	convertBlocks(convFromI32, dst, src)
}

// halfFloat reports whether d is computed through float32 blocks.
func halfFloat(d core.DType) bool { return d == core.F16 || d == core.BF16 }

// floatBlock is a dtype the block kernels read and write as float32.
func floatBlock(d core.DType) bool { return d == core.F32 || halfFloat(d) }

// loadF32 converts n elements of a float-block dtype, starting at element
// pos of b and stepping by step (0: one value repeated, which it reads
// once into dst[0] and reports by returning a one-element slice), into
// dst. f32 data with step 1 is returned in place, without a copy.
func loadF32(dst []float32, d core.DType, b []byte, pos, step, n int) []float32 {
	if step == 0 {
		n = 1
	}
	switch d {
	case core.F32:
		v := f32view(b)
		if step <= 1 {
			return v[pos : pos+n]
		}
		for k := range n {
			dst[k] = v[pos+k*step]
		}
	case core.F16, core.BF16:
		v := u16view(b)
		bf16 := d == core.BF16
		switch {
		case step <= 1 && bf16:
			bf16ToF32(dst[:n], v[pos:pos+n])
		case step <= 1:
			f16ToF32(dst[:n], v[pos:pos+n])
		case bf16:
			for k := range n {
				dst[k] = numerics.BF16Float(v[pos+k*step])
			}
		default:
			for k := range n {
				dst[k] = numerics.F16Float(v[pos+k*step])
			}
		}
	}
	return dst[:n]
}

// storeF32 writes float32 values into a contiguous float-block output
// from element pos on (f32 outputs are written in place by the kernels
// and need no store).
func storeF32(d core.DType, b []byte, pos int, src []float32) {
	switch d {
	case core.F32:
		copy(f32view(b)[pos:], src)
	case core.F16:
		f32ToF16(u16view(b)[pos:pos+len(src)], src)
	case core.BF16:
		f32ToBF16(u16view(b)[pos:pos+len(src)], src)
	}
}

// castRange converts elements [lo, hi) for castFast.
func castRange(from, to core.DType, dst, src []byte, lo, hi int) {
	switch {
	case from == core.F32 && to == core.F16:
		f32ToF16(u16view(dst)[lo:hi], f32view(src)[lo:hi])
	case from == core.F32 && to == core.BF16:
		f32ToBF16(u16view(dst)[lo:hi], f32view(src)[lo:hi])
	case from == core.F32 && to == core.I32:
		f32ToI32(i32view(dst)[lo:hi], f32view(src)[lo:hi])
	case from == core.F16:
		f16ToF32(f32view(dst)[lo:hi], u16view(src)[lo:hi])
	case from == core.BF16:
		bf16ToF32(f32view(dst)[lo:hi], u16view(src)[lo:hi])
	case from == core.I8:
		i8ToF32(f32view(dst)[lo:hi], src[lo:hi])
	default:
		i32ToF32(f32view(dst)[lo:hi], i32view(src)[lo:hi])
	}
}

// i8ToF32 widens i8 values, exactly: int8 weights are dequantised this
// way at every layer call (diffuse's int8 weights), where the general
// path's float64 round trip was most of the dequantisation's time.
func i8ToF32(dst []float32, src []byte) {
	for i, v := range src[:len(dst)] {
		dst[i] = float32(int8(v))
	}
}

// castFast converts a contiguous input between f32 and f16, bf16 or i32
// (either way), or from i8 to f32, with the vector kernels (a plain loop
// for i8), in parallel, and reports whether it applied.
func castFast(in, out *core.Tensor) bool {
	from, to := in.DType(), out.DType()
	if !in.IsContiguous() || in.Numel() == 0 || (from != core.F32 && to != core.F32) {
		return false
	}
	other := from
	if from == core.F32 {
		other = to
	}
	if other != core.F16 && other != core.BF16 && other != core.I32 && (other != core.I8 || to != core.F32) {
		return false
	}
	n := in.Numel()
	src, dst := host(in)[in.Offset()*from.Size():], host(out)[out.Offset()*to.Size():]
	if n*2 < parallelMin || NumThreads() <= 1 {
		castRange(from, to, dst, src, 0, n) // no closure: nothing allocated
	} else {
		parallelFor(n, 2, func(lo, hi int) { castRange(from, to, dst, src, lo, hi) })
	}
	return true
}
