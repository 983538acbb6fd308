package cuda

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// CUDA holds every dtype natively, at its own width: f16 and bf16 take two
// bytes, i64 and f64 eight, bool one. So uploads, downloads and DLPack
// exchange are plain copies (or none), and only kernels convert.

// unsupportedDType refuses u64: the kernels' dialect (backends/lower) has no
// unsigned type wider than u32 to compute it in, so it is refused rather
// than computed in the wrong width.
func unsupportedDType(d core.DType) error {
	if d == core.U64 {
		return fmt.Errorf("cuda: u64 is not supported yet on CUDA (the CPU backend has it); cast to i64 first, or use device cpu")
	}
	return nil
}

// storageType is the C type of one stored element (cu/prelude.cuh).
func storageType(d core.DType) string {
	switch d {
	case core.F32:
		return "f32"
	case core.F16:
		return "wt_half"
	case core.BF16:
		return "wt_bf16"
	case core.F64:
		return "f64"
	case core.I64:
		return "i64"
	case core.I32:
		return "i32"
	case core.U32:
		return "u32"
	case core.I16:
		return "short"
	case core.I8:
		return "signed char"
	case core.U8:
		return "unsigned char"
	case core.U16:
		return "unsigned short"
	case core.Bool:
		return "wt_bool"
	}
	panic(fmt.Sprintf("cuda: no storage type for %v", d))
}

// computeType is the dialect type a dtype is computed in: the narrow
// floats in f32, the narrow signed integers in i32, u8, u16 and bool in u32;
// f64 and i64 keep their width.
func computeType(d core.DType) string {
	switch d {
	case core.F32, core.F16, core.BF16:
		return lower.F32
	case core.F64:
		return lower.F64
	case core.I64:
		return lower.I64
	case core.U32, core.U16, core.U8, core.Bool:
		return lower.U32
	}
	return lower.I32
}

// single reports whether float literals in a kernel over these compute
// types should be single precision: unless one of them is f64.
func single(types ...string) bool {
	for _, t := range types {
		if t == lower.F64 {
			return false
		}
	}
	return true
}
