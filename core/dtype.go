package core

import "github.com/webtensor/webtensor/core/types"

// DType is the element type of a tensor (core/types declares it, with its
// methods).
type DType = types.DType

// The dtypes a tensor can hold. F64 and I64 exist for interop; a backend that
// cannot hold them says so when asked to allocate one.
const (
	Invalid = types.Invalid
	F32     = types.F32
	F16     = types.F16
	BF16    = types.BF16
	F64     = types.F64
	I64     = types.I64
	I32     = types.I32
	U32     = types.U32
	I16     = types.I16
	I8      = types.I8
	U8      = types.U8
	Bool    = types.Bool
	C64     = types.C64
	C128    = types.C128
	U16     = types.U16
	U64     = types.U64
)

// ComplexDTypes lists the complex dtypes (not in AllDTypes: see types.C64).
var ComplexDTypes = types.ComplexDTypes

// AllDTypes lists every valid dtype, floats first.
var AllDTypes = types.AllDTypes

// FloatDTypes lists the floating-point dtypes.
var FloatDTypes = types.FloatDTypes

// IntDTypes lists the integer dtypes (bool excluded).
var IntDTypes = types.IntDTypes

// ParseDType accepts our names and the common NumPy/PyTorch spellings.
func ParseDType(s string) (DType, error) { return types.ParseDType(s) }

// PromoteTypes returns the dtype two operands are computed in, following
// PyTorch's rules for tensors of equal standing: a higher category wins, and
// within a category the wider type wins (f16 with bf16 gives f32; a signed
// with an unsigned integer gives the next signed type wide enough).
// It is Invalid for a pair Promote refuses.
func PromoteTypes(a, b DType) DType { return types.PromoteTypes(a, b) }

// Promote is PromoteTypes with the reason a pair has no common dtype (u64
// with a signed integer).
func Promote(a, b DType) (DType, error) { return types.Promote(a, b) }

// ComplexDType is the complex dtype with parts of dtype d (c128 for f64,
// else c64).
func ComplexDType(d DType) DType { return types.ComplexDType(d) }
