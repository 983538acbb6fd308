package cpu

import (
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/oprules"
)

// Kernels of the creation ops: ranges, identity matrices and fills.

func init() {
	register("arange", arangeKernel)
	register("linspace", linspaceKernel)
	register("eye", eyeKernel)
	kernelkit.RegisterFills(register, fillKernel)
}

// arangeKernel computes integer ranges in int64 (exact beyond 2^53, core
// checked that they fit the dtype) and others as start + i*step in float64,
// converted once.
func arangeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	if start, step, ok := oprules.ArangeInts(k.Attrs); ok {
		if out.DType().IsFloat() {
			vals := tempF64(out.Numel())
			for i := range vals {
				vals[i] = float64(oprules.ArangeAt(start, step, i))
			}
			writeF64(out, vals)
			return nil
		}
		b, d, off := host(out), out.DType(), out.Offset()
		for i := range out.Numel() {
			numerics.PutI64(d, b, off+i, oprules.ArangeAt(start, step, i))
		}
		return nil
	}
	start, step := k.Attrs.Float("start"), k.Attrs.Float("step")
	vals := tempF64(out.Numel())
	for i := range vals {
		vals[i] = start + float64(i)*step
	}
	writeF64(out, vals)
	return nil
}

// linspaceKernel fills from both ends towards the middle, as PyTorch does, so
// the last value is exactly stop. Integer dtypes truncate the bounds first,
// also like PyTorch.
func linspaceKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	n := out.Numel()
	start, stop, step := kernelkit.LinspaceBounds(k.Attrs, n, !out.DType().IsFloat())
	vals := make([]float64, n)
	if n == 1 {
		vals[0] = start
	}
	if n > 1 {
		half := n / 2
		for i := range vals {
			if i < half {
				vals[i] = start + step*float64(i)
			} else {
				vals[i] = stop - step*float64(n-1-i)
			}
		}
	}
	writeF64(out, vals)
	return nil
}

func eyeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	s := out.Shape()
	clear(host(out))
	b, d := host(out), out.DType()
	for i := 0; i < min(s[0], s[1]); i++ {
		numerics.PutF64(d, b, out.Offset()+i*s[1]+i, 1)
	}
	return nil
}

func fillKernel(value func(core.Attrs) float64) core.Kernel {
	return func(k *core.KernelCall) error {
		out := k.Outputs[0]
		v := value(k.Attrs)
		if v == 0 {
			clear(host(out))
			return nil
		}
		n := out.Numel()
		if out.DType() == core.F32 {
			d := f32s(out)
			for i := range d {
				d[i] = float32(v)
			}
			return nil
		}
		b, dt := host(out), out.DType()
		for i := 0; i < n; i++ {
			numerics.PutF64(dt, b, i, v)
		}
		return nil
	}
}
