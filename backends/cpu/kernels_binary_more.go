package cpu

import (
	"errors"
	"math"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Kernels of the binary ops beyond add/sub/mul/div: Python-style division,
// powers, extrema and where, and the kernel builders of the comparisons and
// logical connectives (registered in kernels_compare.go and
// kernels_logical.go). Inputs of the promoted ops share a dtype; logical ops
// and where see their inputs as given.

func init() {
	// Unsigned floor division is plain division (the array API's rule:
	// no negative quotient to round toward minus infinity).
	register("floor_divide", rejectIntZeroDivisor(binaryKernel(binaryFns{f: floorDivF64, i: floorDivI64,
		u: func(a, b uint64) uint64 { return a / b }})))
	register("remainder", rejectIntZeroDivisor(binaryKernel(binaryFns{f: remainderF64, i: remainderI64,
		u: func(a, b uint64) uint64 { return a % b }})))
	register("pow", rejectZeroToNegativePower(binaryKernel(binaryFns{f: math.Pow, i: powI64, u: powU64})))
	registerBinary("maximum", binaryFns{vec: binMax, f: maximumOf[float64], i: maximumOf[int64], u: maximumOf[uint64]})
	registerBinary("minimum", binaryFns{vec: binMin, f: minimumOf[float64], i: minimumOf[int64], u: minimumOf[uint64]})
	registerBinary("atan2", binaryFns{f: atan2,
		f32: func(a, b float32) float32 { return float32(atan2(float64(a), float64(b))) }})
	register("where", ewWhereKernel)
}

// atan2 is math.Atan2 with the sign of y on the result, which atan2 has
// for every y but NaN: Go's loses it when y/x underflows to zero with x < 0
// (Atan2(-1e-300, -1e308) is +pi there, not -pi).
func atan2(y, x float64) float64 {
	r := math.Atan2(y, x)
	if math.IsNaN(r) {
		return r
	}
	return math.Copysign(r, y)
}

// Integer division by zero is an error wherever it hides: x // 0, x % 0
// and 0 ** -n, which is 1 / 0^n (the rule core's floor_divide, remainder
// and pow state, and every backend follows). PyTorch raises for the first
// two and gives 0 for the third; NumPy raises for every negative integer
// power.
var (
	errIntDivisionByZero   = errors.New("integer division by zero")
	errZeroToNegativePower = errors.New("integer division by zero: 0 to a negative power has no integer value")
)

// rejectIntZeroDivisor reports integer division by zero as an error, as
// PyTorch does, instead of letting the Go runtime panic.
func rejectIntZeroDivisor(k core.Kernel) core.Kernel {
	return func(kc *core.KernelCall) error {
		b := kc.Inputs[1]
		if !b.DType().IsFloat() && kc.Outputs[0].Numel() > 0 {
			for _, v := range readI64(b) {
				if v == 0 {
					return errIntDivisionByZero
				}
			}
		}
		return k(kc)
	}
}

// rejectZeroToNegativePower reports 0 ** -n on integers as the integer
// division by zero it is.
func rejectZeroToNegativePower(k core.Kernel) core.Kernel {
	return func(kc *core.KernelCall) error {
		a, b, out := kc.Inputs[0], kc.Inputs[1], kc.Outputs[0]
		// A u64 exponent is never negative (its bits may read so as int64).
		if out.DType().IsFloat() || out.DType().IsUnsigned64() || out.Numel() == 0 || !slices.ContainsFunc(readI64(b), func(v int64) bool { return v < 0 }) {
			return k(kc)
		}
		shape := out.Shape()
		av, bv := readI64As(a, shape), readI64As(b, shape)
		for i, e := range bv {
			if e < 0 && av[i] == 0 {
				return errZeroToNegativePower
			}
		}
		return k(kc)
	}
}

// floorDivF64 is PyTorch's div_floor for floats: it derives the quotient
// from fmod, which is exact, and so avoids floor(a/b) misrounding when a/b
// lands just beside an integer. Division by zero gives ±inf or NaN.
func floorDivF64(a, b float64) float64 {
	if b == 0 {
		return a / b
	}
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	q := math.Floor(div)
	if div-q > 0.5 {
		q++
	}
	return q
}

func floorDivI64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// remainderF64 gives the result the sign of b, a zero result included
// (the standard's remainder(+-0, b) is +0 for b > 0 and -0 for b < 0, as
// Python's %); a zero divisor gives NaN.
func remainderF64(a, b float64) float64 {
	mod := math.Mod(a, b)
	if mod == 0 {
		return math.Copysign(0, b)
	}
	if (b < 0) != (mod < 0) {
		mod += b
	}
	return mod
}

func remainderI64(a, b int64) int64 {
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// powI64 is exact integer exponentiation that wraps on overflow like the
// dtype does. A negative exponent gives 1 / a^-b truncated toward zero: 0
// unless |a| = 1 (PyTorch's rule); a is never 0 there
// (rejectZeroToNegativePower).
func powI64(a, b int64) int64 {
	if b < 0 {
		switch {
		case a == 1:
			return 1
		case a == -1 && b%2 == 0:
			return 1
		case a == -1:
			return -1
		}
		return 0
	}
	result := int64(1)
	for b > 0 {
		if b&1 == 1 {
			result *= a
		}
		a *= a
		b >>= 1
	}
	return result
}

// powU64 is powI64 for u64, whose exponents are never negative.
func powU64(a, b uint64) uint64 {
	result := uint64(1)
	for b > 0 {
		if b&1 == 1 {
			result *= a
		}
		a *= a
		b >>= 1
	}
	return result
}

type extremumElem interface {
	~float32 | ~float64 | ~int64 | ~uint64
}

// maximumOf returns a unless b is larger or NaN, so NaN wins and ties keep
// a (PyTorch gives maximum(-0, 0) = -0).
func maximumOf[T extremumElem](a, b T) T {
	if b > a || b != b {
		return b
	}
	return a
}

func minimumOf[T extremumElem](a, b T) T {
	if b < a || b != b {
		return b
	}
	return a
}

// ewCompareKernel compares promoted inputs: f32, f16 and bf16 in float32
// (exact: every such value is a float32) and i32 and i64 in their own type,
// into the bool output directly; other dtypes and layouts through the
// general path, integers exactly in int64 (float64 would merge large i64
// values), floats in float64.
func ewCompareKernel(op ewCmp, f func(a, b float64) bool, i func(a, b int64) bool, u func(a, b uint64) bool) core.Kernel {
	general := binaryKernel(binaryFns{
		f: func(a, b float64) float64 { return ewBool01(f(a, b)) },
		i: func(a, b int64) int64 {
			if i(a, b) {
				return 1
			}
			return 0
		},
		u: func(a, b uint64) uint64 {
			if u(a, b) {
				return 1
			}
			return 0
		},
	})
	return func(k *core.KernelCall) error {
		a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		if compareFloat(op, a, b, out) || compareInt(op, a, b, out) {
			return nil
		}
		return general(k)
	}
}

func ewByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// ewTruthAs reads t broadcast to shape as truth values: nonzero (NaN
// included) is true.
func ewTruthAs(t *core.Tensor, shape core.Shape) []bool {
	out := make([]bool, shape.Numel())
	if t.DType().IsFloat() {
		for i, v := range readF64As(t, shape) {
			out[i] = v != 0
		}
		return out
	}
	for i, v := range readI64As(t, shape) {
		out[i] = v != 0
	}
	return out
}

// ewBoolStorage is the storage of a contiguous bool tensor, one byte per element.
func ewBoolStorage(t *core.Tensor) []byte {
	return host(t)[t.Offset() : t.Offset()+t.Numel()]
}

func ewLogicalKernel(fn func(a, b bool) bool) core.Kernel {
	// The connective as a table of (a, b) -> result, for logicalBytes.
	var table [4]byte
	for i := range table {
		table[i] = byte(ewBool01(fn(i&2 != 0, i&1 != 0)))
	}
	return func(k *core.KernelCall) error {
		out := k.Outputs[0]
		if logicalBytes(table, k.Inputs[0], k.Inputs[1], out) {
			return nil
		}
		shape := out.Shape()
		av, bv := ewTruthAs(k.Inputs[0], shape), ewTruthAs(k.Inputs[1], shape)
		dst := ewBoolStorage(out)
		for i := range dst {
			dst[i] = byte(ewBool01(fn(av[i], bv[i])))
		}
		return nil
	}
}

// logicalBytes applies a connective to two operands of one byte per element
// (bool, u8, i8), broadcast and strided as they are, runs at a time: an
// attention mask's [1,1,L,1] & [B,1,1,S] took 2 ms through ewTruthAs,
// which widens both operands to int64 and to []bool first. It reports
// false for other dtypes.
func logicalBytes(table [4]byte, a, b, out *core.Tensor) bool {
	if a.DType().Size() != 1 || b.DType().Size() != 1 || a.DType().IsFloat() || b.DType().IsFloat() {
		return false
	}
	shape := out.Shape()
	ab, bb, dst := host(a), host(b), ewBoolStorage(out)
	w := walk{shape: shape.Clone(), strides: [][]int{viewStrides(a, shape), viewStrides(b, shape)}, base: []int{a.Offset(), b.Offset()}}
	w.coalesce()
	sa, sb := w.step(0), w.step(1)
	i := 0
	w.runs(func(pos []int, n int) {
		pa, pb := pos[0], pos[1]
		for j := range dst[i : i+n] {
			k := 0
			if ab[pa+j*sa] != 0 {
				k = 2
			}
			if bb[pb+j*sb] != 0 {
				k |= 1
			}
			dst[i+j] = table[k]
		}
		i += n
	})
	return true
}

// ewWhereKernel selects elementwise. A dense bool condition with dense or
// single-value operands of the output's dtype selects in place
// (ew_int.go); otherwise values are read in the output dtype's domain
// (int64 for integer and bool outputs, so no integer loses precision).
func ewWhereKernel(k *core.KernelCall) error {
	cond, a, b, out := k.Inputs[0], k.Inputs[1], k.Inputs[2], k.Outputs[0]
	if whereFast(cond, a, b, out) {
		return nil
	}
	shape := out.Shape()
	take := ewTruthAs(cond, shape)
	if !out.DType().IsFloat() {
		av, bv := readI64As(a, shape), readI64As(b, shape)
		for i, t := range take {
			if !t {
				av[i] = bv[i]
			}
		}
		writeI64(out, av)
		return nil
	}
	av, bv := readF64As(a, shape), readF64As(b, shape)
	for i, t := range take {
		if !t {
			av[i] = bv[i]
		}
	}
	writeF64(out, av)
	return nil
}
