package numerics

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core/types"
)

// Element conversions between a dtype's little-endian bytes and float64 or
// int64. Core, the backends and SDK glue share them so every path rounds the
// same way: floats to narrower floats round to nearest even; floats to
// integers truncate toward zero, as NumPy's astype does; NaN becomes 0.

// GetF64 reads element i of a dtype's byte buffer as float64.
func GetF64(d types.DType, b []byte, i int) float64 {
	le := binary.LittleEndian
	switch d {
	case types.F32:
		return float64(math.Float32frombits(le.Uint32(b[4*i:])))
	case types.F64:
		return math.Float64frombits(le.Uint64(b[8*i:]))
	case types.F16:
		return float64(F16Float(le.Uint16(b[2*i:])))
	case types.BF16:
		return float64(BF16Float(le.Uint16(b[2*i:])))
	case types.I64:
		return float64(int64(le.Uint64(b[8*i:])))
	case types.I32:
		return float64(int32(le.Uint32(b[4*i:])))
	case types.U32:
		return float64(le.Uint32(b[4*i:]))
	case types.U16:
		return float64(le.Uint16(b[2*i:]))
	case types.U64:
		return float64(le.Uint64(b[8*i:]))
	case types.I16:
		return float64(int16(le.Uint16(b[2*i:])))
	case types.I8:
		return float64(int8(b[i]))
	case types.U8:
		return float64(b[i])
	case types.Bool:
		if b[i] != 0 {
			return 1
		}
		return 0
	case types.C64: // the real part
		return float64(math.Float32frombits(le.Uint32(b[8*i:])))
	case types.C128:
		return math.Float64frombits(le.Uint64(b[16*i:]))
	}
	return 0
}

// GetI64 reads element i as int64 (floats truncate toward zero). A u64
// comes back as its bit pattern, int64(v) (see types.U64): Uint64 of it is
// the value.
func GetI64(d types.DType, b []byte, i int) int64 {
	le := binary.LittleEndian
	switch d {
	case types.I64, types.U64:
		return int64(le.Uint64(b[8*i:]))
	case types.U16:
		return int64(le.Uint16(b[2*i:]))
	case types.I32:
		return int64(int32(le.Uint32(b[4*i:])))
	case types.U32:
		return int64(le.Uint32(b[4*i:]))
	case types.I16:
		return int64(int16(le.Uint16(b[2*i:])))
	case types.I8:
		return int64(int8(b[i]))
	case types.U8:
		return int64(b[i])
	case types.Bool:
		return int64(b[i] & 1)
	}
	return FloatToInt(types.I64, GetF64(d, b, i))
}

// FloatToInt is the one rule by which a float becomes a value of integer
// dtype d, in a cast and wherever else a float is stored into an integer
// element: NaN becomes 0, other values truncate toward zero and saturate at
// the ends of d's range (+-inf included). Every backend follows it (the
// GPU kernels through backends/lower's FloatToInt). PyTorch and NumPy
// leave out-of-range and NaN conversions undefined (they follow the C
// cast of the machine: x86 gives INT_MIN for NaN, then wraps to the
// width), and the array API calls them implementation-defined; saturating
// is what Rust's as, Java, WGSL and CUDA's conversions do, and what every
// backend can compute exactly. A u64 result is its bit pattern: f in
// [2^63, 2^64) gives a negative int64, Uint64 of which is the value, as
// NumPy's astype(uint64) gives wherever the value is representable.
func FloatToInt(d types.DType, f float64) int64 {
	if d == types.U64 {
		switch {
		case f != f || f <= 0:
			return 0
		case f >= 1<<64:
			return -1 // math.MaxUint64
		}
		return int64(uint64(f))
	}
	lo, hi := IntRange(d)
	switch {
	case f != f:
		return 0
	case f <= float64(lo):
		return lo
	case f >= float64(hi):
		// float64(hi) rounds up to 2^63 for i64, the first value past it.
		return hi
	}
	return int64(f)
}

// IntRange is the smallest and largest value of integer dtype d (bool: 0
// and 1). u64's top, 2^64-1, is past int64: IntRange gives math.MaxInt64
// for it, the part of its range an int64 attribute (a fill value, a bound)
// can name; FloatToInt converts into the whole.
func IntRange(d types.DType) (lo, hi int64) {
	switch d {
	case types.U16:
		return 0, math.MaxUint16
	case types.U64:
		return 0, math.MaxInt64
	case types.I32:
		return math.MinInt32, math.MaxInt32
	case types.U32:
		return 0, math.MaxUint32
	case types.I16:
		return math.MinInt16, math.MaxInt16
	case types.I8:
		return math.MinInt8, math.MaxInt8
	case types.U8:
		return 0, math.MaxUint8
	case types.Bool:
		return 0, 1
	}
	return math.MinInt64, math.MaxInt64
}

// PutF64 writes v into element i of a dtype's byte buffer.
func PutF64(d types.DType, b []byte, i int, v float64) {
	le := binary.LittleEndian
	switch d {
	case types.F32:
		le.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case types.F64:
		le.PutUint64(b[8*i:], math.Float64bits(v))
	case types.F16:
		le.PutUint16(b[2*i:], F16Bits(float32(v)))
	case types.BF16:
		le.PutUint16(b[2*i:], BF16Bits(float32(v)))
	case types.Bool:
		if v != 0 {
			b[i] = 1
		} else {
			b[i] = 0
		}
	case types.C64: // a real number: v + 0i
		le.PutUint64(b[8*i:], uint64(math.Float32bits(float32(v))))
	case types.C128:
		le.PutUint64(b[16*i:], math.Float64bits(v))
		le.PutUint64(b[16*i+8:], 0)
	default:
		// PutI64 comes back here for what it does not store itself: only
		// an integer dtype may go there, or the two would call each other
		// until the stack overflowed.
		if !d.IsInt() {
			panic(fmt.Sprintf("numerics: no element encoding for dtype %v", d))
		}
		PutI64(d, b, i, FloatToInt(d, v))
	}
}

// PutI64 writes an integer into element i (wrapping like a C cast).
func PutI64(d types.DType, b []byte, i int, v int64) {
	le := binary.LittleEndian
	switch d {
	case types.I64, types.U64:
		le.PutUint64(b[8*i:], uint64(v))
	case types.I32, types.U32:
		le.PutUint32(b[4*i:], uint32(v))
	case types.I16, types.U16:
		le.PutUint16(b[2*i:], uint16(v))
	case types.I8, types.U8:
		b[i] = byte(v)
	case types.Bool:
		if v != 0 {
			b[i] = 1
		} else {
			b[i] = 0
		}
	default:
		PutF64(d, b, i, float64(v))
	}
}
