package cpu

import "math"

// Kernels of the logical ops: the connectives (ewLogicalKernel, in
// kernels_binary_more.go), logical_not, isnan and isinf (elementwise unary,
// kernels_unary.go).

func init() {
	register("logical_and", ewLogicalKernel(func(a, b bool) bool { return a && b }))
	register("logical_or", ewLogicalKernel(func(a, b bool) bool { return a || b }))
	register("logical_xor", ewLogicalKernel(func(a, b bool) bool { return a != b }))
	registerFixedUnary("logical_not", unaryFns{f: func(x float64) float64 { return ewBool01(x == 0) },
		i: func(x int64) int64 { return int64(ewBool01(x == 0)) }})
	registerFixedUnary("isnan", unaryFns{f: func(x float64) float64 { return ewBool01(x != x) },
		i: func(int64) int64 { return 0 }})
	registerFixedUnary("isinf", unaryFns{f: func(x float64) float64 { return ewBool01(math.IsInf(x, 0)) },
		i: func(int64) int64 { return 0 }})
}
