package cpu

import (
	"github.com/webtensor/webtensor/core"
)

// binaryFns are the scalar functions of one elementwise binary op. f is
// required; i (exact integer math) and f32 (float32 fast path) are optional.
type binaryFns struct {
	f   func(a, b float64) float64
	i   func(a, b int64) int64
	f32 func(a, b float32) float32
}

func init() {
	register("add", binaryKernel(binaryFns{
		f: func(a, b float64) float64 { return a + b }, i: func(a, b int64) int64 { return a + b },
		f32: func(a, b float32) float32 { return a + b }}))
	register("sub", binaryKernel(binaryFns{
		f: func(a, b float64) float64 { return a - b }, i: func(a, b int64) int64 { return a - b },
		f32: func(a, b float32) float32 { return a - b }}))
	register("mul", binaryKernel(binaryFns{
		f: func(a, b float64) float64 { return a * b }, i: func(a, b int64) int64 { return a * b },
		f32: func(a, b float32) float32 { return a * b }}))
	register("div", binaryKernel(binaryFns{
		f: func(a, b float64) float64 { return a / b }, f32: func(a, b float32) float32 { return a / b }}))
}

// binaryKernel runs fns over broadcast inputs. Integer inputs with an integer
// output use int64 math; everything else goes through float64, except dense
// f32 operands of equal shape, which use the float32 fast path in parallel.
func binaryKernel(fns binaryFns) core.Kernel {
	return func(k *core.KernelCall) error {
		a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		n := out.Numel()
		if fns.f32 != nil && out.DType() == core.F32 && denseF32(a) && denseF32(b) {
			av, bv, ov := f32s(a), f32s(b), f32s(out)
			switch {
			case a.Numel() == n && b.Numel() == n && n < parallelMin:
				// Small operands: the loop itself, with no closure to allocate
				// (this is most of an op's cost at a few elements).
				for i := range ov {
					ov[i] = fns.f32(av[i], bv[i])
				}
				return nil
			case a.Numel() == n && b.Numel() == n:
				parallelFor(n, 1, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						ov[i] = fns.f32(av[i], bv[i])
					}
				})
				return nil
			case b.Numel() == 1 && a.Numel() == n:
				s := bv[0]
				parallelFor(n, 1, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						ov[i] = fns.f32(av[i], s)
					}
				})
				return nil
			case a.Numel() == n && isSuffix(b.Shape(), out.Shape()):
				// Row broadcast (a bias added to every row): b repeats
				// every nb elements of the output.
				nb := len(bv)
				parallelFor(n/max(nb, 1), nb, func(lo, hi int) {
					for r := lo; r < hi; r++ {
						row, out := av[r*nb:(r+1)*nb], ov[r*nb:(r+1)*nb]
						for j, x := range row {
							out[j] = fns.f32(x, bv[j])
						}
					}
				})
				return nil
			case a.Numel() == n && colInner(b.Shape(), out.Shape()) > 0:
				// Column broadcast (per-row scales, [E, F] * [E, 1]): one b
				// value per run of inner outputs.
				inner := colInner(b.Shape(), out.Shape())
				parallelFor(len(bv), inner, func(lo, hi int) {
					for r := lo; r < hi; r++ {
						s := bv[r]
						for j := r * inner; j < (r+1)*inner; j++ {
							ov[j] = fns.f32(av[j], s)
						}
					}
				})
				return nil
			case b.Numel() == n && colInner(a.Shape(), out.Shape()) > 0:
				inner := colInner(a.Shape(), out.Shape())
				parallelFor(len(av), inner, func(lo, hi int) {
					for r := lo; r < hi; r++ {
						s := av[r]
						for j := r * inner; j < (r+1)*inner; j++ {
							ov[j] = fns.f32(s, bv[j])
						}
					}
				})
				return nil
			}
		}
		shape := out.Shape()
		if fns.i != nil && !a.DType().IsFloat() && !out.DType().IsFloat() {
			av, bv := readI64As(a, shape), readI64As(b, shape)
			res := make([]int64, n)
			for i := range res {
				res[i] = fns.i(av[i], bv[i])
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

// isSuffix reports whether s (leading 1s ignored) equals the trailing dims of
// shape, so that a dense s repeats every s.Numel() elements of shape.
func isSuffix(s, shape core.Shape) bool {
	for len(s) > 0 && s[0] == 1 {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > len(shape) {
		return false
	}
	return core.Shape(shape[len(shape)-len(s):]).Equal(s)
}

// colInner reports, when b broadcasts against out only along trailing
// dims (b's shape is out's leading dims then 1s, e.g. [E, 1] against
// [E, F]), how many consecutive outputs share each b value; 0 otherwise.
func colInner(b, out core.Shape) int {
	if len(b) != len(out) || len(b) == 0 {
		return 0
	}
	k := len(b)
	for k > 0 && b[k-1] == 1 && out[k-1] != 1 {
		k--
	}
	if k == len(b) {
		return 0 // no broadcast dims at the end
	}
	for i := range k {
		if b[i] != out[i] {
			return 0
		}
	}
	for _, d := range b[k:] {
		if d != 1 {
			return 0
		}
	}
	return out[k:].Numel()
}
