package cpu

// Kernels of the comparison ops (eq, ne, lt, le, gt, ge); ewCompareKernel
// is in kernels_binary_more.go.

func init() {
	register("eq", ewCompareKernel(cmpEq, func(a, b float64) bool { return a == b }, func(a, b int64) bool { return a == b }, func(a, b uint64) bool { return a == b }))
	register("ne", ewCompareKernel(cmpNe, func(a, b float64) bool { return a != b }, func(a, b int64) bool { return a != b }, func(a, b uint64) bool { return a != b }))
	register("lt", ewCompareKernel(cmpLt, func(a, b float64) bool { return a < b }, func(a, b int64) bool { return a < b }, func(a, b uint64) bool { return a < b }))
	register("le", ewCompareKernel(cmpLe, func(a, b float64) bool { return a <= b }, func(a, b int64) bool { return a <= b }, func(a, b uint64) bool { return a <= b }))
	register("gt", ewCompareKernel(cmpGt, func(a, b float64) bool { return a > b }, func(a, b int64) bool { return a > b }, func(a, b uint64) bool { return a > b }))
	register("ge", ewCompareKernel(cmpGe, func(a, b float64) bool { return a >= b }, func(a, b int64) bool { return a >= b }, func(a, b uint64) bool { return a >= b }))
}
