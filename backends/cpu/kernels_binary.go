package cpu

import (
	"github.com/webtensor/webtensor/core"
)

// binaryFns are the scalar functions of one elementwise binary op. f is
// required; i (exact integer math), f32 (the float32 path, also taken by
// f16 and bf16) and vec (the op's vector kernel, which then replaces f32)
// are optional. u is i for u64 operands (carried as their int64 bit
// pattern, see core.U64), required where the unsigned result differs:
// order, division, right shifts; without it i's bits are the answer, as
// for add, mul and the bitwise ops.
type binaryFns struct {
	f   func(a, b float64) float64
	i   func(a, b int64) int64
	u   func(a, b uint64) uint64
	f32 func(a, b float32) float32
	vec ewBin
}

func init() {
	registerBinary("add", binaryFns{vec: binAdd,
		f: func(a, b float64) float64 { return a + b }, i: func(a, b int64) int64 { return a + b }})
	registerBinary("sub", binaryFns{vec: binSub,
		f: func(a, b float64) float64 { return a - b }, i: func(a, b int64) int64 { return a - b }})
	registerBinary("mul", binaryFns{vec: binMul,
		f: func(a, b float64) float64 { return a * b }, i: func(a, b int64) int64 { return a * b }})
	registerBinary("div", binaryFns{vec: binDiv, f: func(a, b float64) float64 { return a / b }})
}

// binaryKernel runs fns over broadcast inputs. Inputs and output of one
// float dtype below f64 run in float32 (ew_plan.go), i32 and i64 in their
// own type (ew_int.go), with their vector kernels where they have one;
// everything else reads int64 (integer math into an integer output) or
// float64 in logical order and rounds once, on the write.
func binaryKernel(fns binaryFns) core.Kernel {
	return func(k *core.KernelCall) error {
		a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		if binaryFloat(fns.vec, fns.f32, a, b, out) {
			return nil
		}
		if fns.i != nil && binaryInt(fns.vec, a, b, out) {
			return nil
		}
		n := out.Numel()
		shape := out.Shape()
		if fns.i != nil && !a.DType().IsFloat() && !out.DType().IsFloat() {
			av, bv := readI64As(a, shape), readI64As(b, shape)
			res := make([]int64, n)
			if fns.u != nil && a.DType().IsUnsigned64() {
				for i := range res {
					res[i] = int64(fns.u(uint64(av[i]), uint64(bv[i])))
				}
			} else {
				for i := range res {
					res[i] = fns.i(av[i], bv[i])
				}
			}
			writeI64(out, res)
			return nil
		}
		av, bv := readF64As(a, shape), readF64As(b, shape)
		parallelFor(n, 4, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				av[i] = fns.f(av[i], bv[i])
			}
		})
		writeF64(out, av)
		return nil
	}
}
