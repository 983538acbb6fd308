package types

import (
	"fmt"
	"strings"
)

// DType is the element type of a tensor.
type DType uint8

// The dtypes a tensor can hold. F64 and I64 exist for interop; a backend that
// cannot hold them says so when asked to allocate one.
const (
	Invalid DType = iota
	F32
	F16
	BF16
	F64
	I64
	I32
	U32
	I16
	I8
	U8
	Bool
	// C64 and C128 are complex numbers of two f32 or two f64, real part
	// first (the layout of NumPy, PyTorch, DLPack and C99). Every backend
	// stores one as two elements of its real dtype, so a complex tensor of
	// shape S is also a real tensor of shape S+[2] (core's view_as_real),
	// and complex ops are compositions of real ones: no kernel needs to
	// know them.
	C64
	C128
	// U16 and U64 came last (array API 2024.12 names them): the C ABI's
	// dtype codes are these numbers, so new dtypes append and none moves.
	// A u64 rides the integer paths that carry int64 as its bit pattern
	// (a C cast): modular arithmetic and bitwise ops are the same bits;
	// order, division, right shifts and float conversion are not, and the
	// kernels that do those ask IsUnsigned64.
	U16
	U64
)

var dtypeNames = [...]string{Invalid: "invalid", F32: "f32", F16: "f16", BF16: "bf16", F64: "f64",
	I64: "i64", I32: "i32", U32: "u32", I16: "i16", I8: "i8", U8: "u8", Bool: "bool", C64: "c64", C128: "c128",
	U16: "u16", U64: "u64"}

var dtypeSizes = [...]int{F32: 4, F16: 2, BF16: 2, F64: 8, I64: 8, I32: 4, U32: 4, I16: 2, I8: 1, U8: 1, Bool: 1, C64: 8, C128: 16, U16: 2, U64: 8}

// AllDTypes lists every valid dtype, floats first.
var AllDTypes = []DType{F32, F16, BF16, F64, I64, I32, U32, I16, I8, U8, Bool, U16, U64}

// ComplexDTypes lists the complex dtypes. They are not in AllDTypes: no
// kernel takes them (see C64), and loops over AllDTypes mean the kernels'.
var ComplexDTypes = []DType{C64, C128}

// FloatDTypes lists the floating-point dtypes.
var FloatDTypes = []DType{F32, F16, BF16, F64}

// IntDTypes lists the integer dtypes (bool excluded).
var IntDTypes = []DType{I64, I32, U32, I16, I8, U8, U16, U64}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the width of one element in bytes.
func (d DType) Size() int {
	if d == Invalid || int(d) >= len(dtypeSizes) {
		return 0
	}
	return dtypeSizes[d]
}

// Valid reports whether d is one of the defined dtypes.
func (d DType) Valid() bool { return d > Invalid && d <= U64 }

// IsInexact reports whether d is floating-point or complex (NumPy's
// "inexact"): the dtypes that can carry gradients.
func (d DType) IsInexact() bool { return d.IsFloat() || d.IsComplex() }

// IsComplex reports whether d is a complex dtype.
func (d DType) IsComplex() bool { return d == C64 || d == C128 }

// RealDType is the dtype of a complex dtype's parts (f32 for c64, f64 for
// c128); any other dtype is its own.
func (d DType) RealDType() DType {
	switch d {
	case C64:
		return F32
	case C128:
		return F64
	}
	return d
}

// ComplexDType is the complex dtype whose parts have dtype d: c128 for f64,
// c64 for the other floats (and for integers and bool, as NumPy promotes
// them with a complex64); a complex dtype is its own.
func ComplexDType(d DType) DType {
	switch {
	case d.IsComplex():
		return d
	case d == F64:
		return C128
	}
	return C64
}

// IsFloat reports whether d is a floating-point dtype.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// IsInt reports whether d is an integer dtype (bool excluded).
func (d DType) IsInt() bool { return (d >= I64 && d <= U8) || d == U16 || d == U64 }

// IsUnsigned64 reports whether d is u64: the one integer dtype whose values
// do not all fit int64, so the kernels that carry integers as int64 (its
// bit pattern) must compare, divide, shift right and convert it as uint64.
func (d DType) IsUnsigned64() bool { return d == U64 }

// IsSigned reports whether d can hold negative values.
func (d DType) IsSigned() bool {
	return d.IsFloat() || d.IsComplex() || d == I64 || d == I32 || d == I16 || d == I8
}

// ParseDType accepts our names and the common NumPy/PyTorch spellings.
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(strings.TrimPrefix(s, "torch.")) {
	case "f32", "float32", "float":
		return F32, nil
	case "f16", "float16", "half":
		return F16, nil
	case "bf16", "bfloat16":
		return BF16, nil
	case "f64", "float64", "double":
		return F64, nil
	case "i64", "int64", "long":
		return I64, nil
	case "i32", "int32", "int":
		return I32, nil
	case "u32", "uint32":
		return U32, nil
	case "i16", "int16", "short":
		return I16, nil
	case "i8", "int8":
		return I8, nil
	case "u8", "uint8":
		return U8, nil
	case "u16", "uint16":
		return U16, nil
	case "u64", "uint64":
		return U64, nil
	case "bool", "b8":
		return Bool, nil
	case "c64", "complex64", "cfloat":
		return C64, nil
	case "c128", "complex128", "cdouble", "complex":
		return C128, nil
	}
	return Invalid, fmt.Errorf("unknown dtype %q (want one of f32 f16 bf16 f64 i64 i32 u32 i16 i8 u8 u16 u64 bool c64 c128)", s)
}

// category orders dtype kinds for promotion: bool < int < float < complex.
func (d DType) category() int {
	switch {
	case d == Bool:
		return 0
	case d.IsInt():
		return 1
	case d.IsComplex():
		return 3
	default:
		return 2
	}
}

// PromoteTypes is Promote without the error: Invalid for the pairs Promote
// refuses (u64 with a signed integer), so an Infer that uses it must check.
func PromoteTypes(a, b DType) DType {
	d, err := Promote(a, b)
	if err != nil {
		return Invalid
	}
	return d
}

// Promote returns the dtype two operands are computed in, following
// PyTorch's rules for tensors of equal standing: a higher category wins, and
// within a category the wider type wins (f16 with bf16 gives f32; a signed
// with an unsigned integer gives the next signed type wide enough, which is
// also the array API standard's table).
//
// u64 with a signed integer has no such type. The array API leaves it
// undefined and array-api-strict raises; PyTorch 2.x raises ("Promotion for
// uint16, uint32, uint64 types is not supported"); NumPy gives f64, which
// silently rounds every value above 2^53, the values u64 exists to hold.
// We refuse with the fix, as PyTorch and array-api-strict do.
func Promote(a, b DType) (DType, error) {
	if a == b {
		return a, nil
	}
	if a.IsComplex() || b.IsComplex() {
		// The parts promote as the real dtypes would (c64 with f64 gives
		// c128, as in NumPy and PyTorch); an integer or bool joins as f32.
		ra, rb := a.RealDType(), b.RealDType()
		if !ra.IsFloat() {
			ra = F32
		}
		if !rb.IsFloat() {
			rb = F32
		}
		return ComplexDType(PromoteTypes(ra, rb)), nil
	}
	if a.category() != b.category() {
		if a.category() > b.category() {
			return a, nil
		}
		return b, nil
	}
	if a.IsFloat() {
		if (a == F16 && b == BF16) || (a == BF16 && b == F16) {
			return F32, nil
		}
		if a.Size() >= b.Size() {
			return a, nil
		}
		return b, nil
	}
	// integers
	if a.IsSigned() == b.IsSigned() {
		if a.Size() >= b.Size() {
			return a, nil
		}
		return b, nil
	}
	s, u := a, b
	if !a.IsSigned() {
		s, u = b, a
	}
	if s.Size() > u.Size() {
		return s, nil
	}
	switch u.Size() {
	case 1:
		return I16, nil
	case 2:
		return I32, nil
	case 4:
		return I64, nil
	}
	return Invalid, fmt.Errorf("cannot promote %s with %s: no integer dtype holds both ranges "+
		"(the array API leaves it undefined and PyTorch refuses it; NumPy's f64 would round values above 2^53): "+
		"cast one operand first: the u64 one to i64 if its values stay below 2^63, or both to f64 if rounding is acceptable", a, b)
}
