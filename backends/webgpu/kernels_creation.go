package webgpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/oprules"
)

// Creation ops write their output from the thread index alone (map kernels
// with no inputs; i is the element index).

// fill writes v, converted to out's dtype on the host exactly as the CPU
// backend converts it, into every element.
func (g *Backend) fill(out *core.Tensor, v float64) error {
	word, err := toPhysical(out.DType(), core.EncodeF64(out.DType(), []float64{v}))
	if err != nil {
		return err
	}
	w := binary.LittleEndian.Uint32(word)
	e := "bitcast<" + physical(out.DType()) + ">(pu(0u))"
	return g.mapRun(nil, out, e, func(p *params) { p.setU(0, w) })
}

func fillKernel(value func(core.Attrs) float64) core.Kernel {
	return func(k *core.KernelCall) error { return gpuOf(k).fill(k.Outputs[0], value(k.Attrs)) }
}

// arangeKernel is start + i*step; integer ranges compute in i32 (exact),
// which holds i64 here, so one with a value outside int32 is refused rather
// than wrapped.
func arangeKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	ct := physical(out.DType())
	var prm params
	var e string
	if start, step, ok := oprules.ArangeInts(k.Attrs); ok && ct != "f32" {
		if n := out.Numel(); n > 0 {
			first, last := start, oprules.ArangeAt(start, step, n-1)
			if out.DType() == core.I64 && (min(first, last) < math.MinInt32 || max(first, last) > math.MaxInt32) {
				return fmt.Errorf("values from %d to %d do not fit the 32-bit integers WebGPU holds i64 in; make the range on the CPU", first, last)
			}
		}
		prm.setI(0, int(start))
		prm.setI(1, int(step))
		e = lower.Conv("(pi(0u) + i32(i) * pi(1u))", "i32", ct)
	} else {
		start, step := k.Attrs.Float("start"), k.Attrs.Float("step")
		if ct != "f32" {
			last := start + float64(max(out.Numel()-1, 0))*step
			if math.Abs(start) > math.MaxInt32 || math.Abs(last) > math.MaxInt32 {
				return fmt.Errorf("values from %v to %v do not fit the 32-bit integers WebGPU computes %s in; make the range on the CPU", start, last, out.DType())
			}
		}
		prm.setF(0, start)
		prm.setF(1, step)
		e = "(pf(0u) + f32(i) * pf(1u))"
		if ct != "f32" {
			e = lower.Conv("trunc("+e+")", "f32", "i32")
			e = lower.Conv(e, "i32", ct)
		}
	}
	return gpuOf(k).mapRun(nil, out, e, func(p *params) { *p = prm })
}

// linspaceKernel fills from both ends towards the middle, as PyTorch does,
// so the last value is exactly stop; integer dtypes truncate the bounds.
func linspaceKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	n := out.Numel()
	ct := physical(out.DType())
	start, stop, step := kernelkit.LinspaceBounds(k.Attrs, n, ct != "f32")
	var prm params
	prm.setF(0, start)
	prm.setF(1, stop)
	prm.setF(2, step)
	prm.setI(3, n/2)
	prm.setI(4, n-1)
	e := "select(pf(1u) - pf(2u) * f32(pu(4u) - i), pf(0u) + pf(2u) * f32(i), i < pu(3u) || pu(4u) == 0u)"
	if ct != "f32" {
		e = lower.Conv(lower.Conv("trunc("+e+")", "f32", "i32"), "i32", ct)
	}
	return gpuOf(k).mapRun(nil, out, e, func(p *params) { *p = prm })
}

func init() {
	kernelkit.RegisterFills(register, fillKernel)
	register("arange", arangeKernel)
	register("linspace", linspaceKernel)
}
