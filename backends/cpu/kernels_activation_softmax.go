package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Softmax-family kernels (activation ops). Softmax of dense f32 over
// the last axis, the shape of every attention and classifier head, runs on
// float32 rows in parallel through the row kernels (rows_simd.go): float32
// exponentials, float64 sums; everything else goes through float64 lines
// of any stride.

func init() {
	register("softmax", softmaxKernel(false))
	register("log_softmax", softmaxKernel(true))
	register("_softmax_backward", softmaxBackwardKernel(false))
	register("_log_softmax_backward", softmaxBackwardKernel(true))
}

// nnForLines calls fn for every line along the split axis: the offset of
// its first element in row-major order; elements are inner apart.
func nnForLines(outer, n, inner int, fn func(base int)) {
	parallelFor(outer*inner, n*8, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			fn((l/inner)*n*inner + l%inner)
		}
	})
}

func softmaxKernel(logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axis, err := oprules.SoftmaxAxis(in.Shape(), k.Attrs)
		if err != nil {
			return err
		}
		outer, n, inner := axisSplit(in.Shape(), axis)
		if inner == 1 && denseF32(in) {
			src, dst := f32s(in), f32s(out)
			parallelFor(outer, n*8, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					softmaxRowF32(src[r*n:(r+1)*n], dst[r*n:(r+1)*n], logOut)
				}
			})
			return nil
		}
		x := readF64(in)
		y := tempF64(len(x))
		nnForLines(outer, n, inner, func(base int) { softmaxLine(x, y, base, n, inner, logOut) })
		writeF64(out, y)
		return nil
	}
}

// softmaxRowF32 is the dense fast path. NaN wins the max so that a NaN
// anywhere in the row makes the whole row NaN, as in PyTorch.
func softmaxRowF32(x, y []float32, logOut bool) {
	if len(x) == 0 {
		return
	}
	if hostKernels && !logOut {
		if _, ok := hostSoftmaxRowF32(y[:len(x)], x, true, false); ok {
			return
		}
	}
	m, nan := extremeF32(true, false, x)
	if nan {
		m = float32(math.NaN())
	}
	if logOut {
		s := expSumF32(nil, x, m)
		sub2F32(y, x, m, float32(math.Log(s)))
		return
	}
	s := expSumF32(y, x, m)
	axpbF32(y, y, float32(1/s), 0)
}

// softmaxLine is softmax (or log_softmax) of n elements stride apart; x and
// y may be the same slice.
func softmaxLine(x, y []float64, base, n, stride int, logOut bool) {
	if n == 0 {
		return
	}
	m := x[base]
	for j := 1; j < n; j++ {
		if v := x[base+j*stride]; v > m || v != v {
			m = v
		}
	}
	var sum float64
	if logOut {
		for j := 0; j < n; j++ {
			sum += math.Exp(x[base+j*stride] - m)
		}
		shift := m + math.Log(sum)
		for j := 0; j < n; j++ {
			p := base + j*stride
			y[p] = x[p] - shift
		}
		return
	}
	for j := 0; j < n; j++ {
		p := base + j*stride
		e := math.Exp(x[p] - m)
		y[p] = e
		sum += e
	}
	inv := 1 / sum
	for j := 0; j < n; j++ {
		y[base+j*stride] *= inv
	}
}

// softmaxBackwardKernel computes y*(g - sum(g*y)) for softmax and
// g - exp(y)*sum(g) for log_softmax, from the forward output y.
func softmaxBackwardKernel(logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		yt, gt, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		axis, err := oprules.SoftmaxAxis(yt.Shape(), k.Attrs)
		if err != nil {
			return err
		}
		outer, n, inner := axisSplit(yt.Shape(), axis)
		if inner == 1 && denseF32(yt) && denseF32(gt) {
			y, g, dst := f32s(yt), f32s(gt), f32s(out)
			parallelFor(outer, n*4, func(lo, hi int) {
				for r := lo; r < hi; r++ {
					softmaxBackwardRowF32(y[r*n:(r+1)*n], g[r*n:(r+1)*n], dst[r*n:(r+1)*n], logOut)
				}
			})
			return nil
		}
		y, g := readF64(yt), readF64(gt)
		dx := tempF64(len(y))
		nnForLines(outer, n, inner, func(base int) {
			var s float64
			for j := 0; j < n; j++ {
				p := base + j*inner
				if logOut {
					s += g[p]
				} else {
					s += g[p] * y[p]
				}
			}
			for j := 0; j < n; j++ {
				p := base + j*inner
				if logOut {
					dx[p] = g[p] - math.Exp(y[p])*s
				} else {
					dx[p] = y[p] * (g[p] - s)
				}
			}
		})
		writeF64(out, dx)
		return nil
	}
}

func softmaxBackwardRowF32(y, g, dx []float32, logOut bool) {
	if logOut {
		softmaxGradF32(true, dx, y, g, float32(sumF32(formSum, g)))
		return
	}
	_, gy := normDotsF32(y, g, nil, 0)
	softmaxGradF32(false, dx, y, g, float32(gy))
}
