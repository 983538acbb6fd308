package webgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
	"github.com/webtensor/webtensor/wgsl"
)

// Pooling and resampling kernels (pool.wgsl). Geometry is resolved on the
// host by core (PoolGeom, InterpGeom), as the CPU kernels do, and passed in
// uniform slots; every value is computed on the GPU. The backward kernels
// run one thread per input-gradient element and gather from the windows
// that cover it, so they need no float atomics and are deterministic.

// lpPoolWG is the workgroup size of the pooling kernels.
const lpPoolWG = 64

// lpGeomSlot is the first uniform slot of the pooling geometry, past the
// descriptors of operands 0 and 1 (see pool.wgsl).
const lpGeomSlot = 64

// lpPlaneOperand writes t's offset and its N, C, H, W strides (N's 0 for a
// CHW tensor) at operand k's descriptor.
func lpPlaneOperand(p *params, k int, t *core.Tensor) {
	st := t.Strides()
	if len(st) == 3 {
		st = append([]int{0}, st...)
	}
	writeOperand(p, wgsl.OperandSlot(k), t.Offset(), st)
}

// lpPoolParams fills the pooling geometry slots.
func lpPoolParams(p *params, g oprules.PoolGeom) {
	vals := []int{g.C, g.In[0], g.In[1], g.Out[0], g.Out[1], g.Kernel[0], g.Kernel[1], g.Stride[0], g.Stride[1],
		g.Padding[0], g.Padding[1], g.Dilation[0], g.Dilation[1], 0, g.DivisorOverride}
	if g.CountIncludePad {
		vals[13] = 1
	}
	for i, v := range vals {
		p.setI(lpGeomSlot+i, v)
	}
}

// lpLowest is the WGSL literal of the smallest value of d: a max window
// that only covers padding gives it.
func lpLowest(d core.DType) string {
	switch d {
	case core.I32, core.I64:
		return "i32(-2147483648)"
	case core.I16:
		return "i32(-32768)"
	case core.I8:
		return "i32(-128)"
	case core.U8, core.U32, core.Bool:
		return "0u"
	}
	return "-f_inf()"
}

// lpPoolRun runs pool.wgsl's kind over the call's output with the data
// input src (and the forward input x for max_bwd).
func lpPoolRun(k *core.KernelCall, kind string, bilinear bool, prm *params, src, x *core.Tensor) error {
	return gpuOf(k).lpPoolLaunch(kind, bilinear, prm, src, x, k.Outputs[0])
}

// lpPoolLaunch runs pool.wgsl's kind over out's elements.
func (b *Backend) lpPoolLaunch(kind string, bilinear bool, prm *params, src, x, out *core.Tensor) error {
	n := out.Numel()
	if n == 0 {
		return nil
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("webgpu: %d elements is more than the pooling kernels index", n)
	}
	t := physical(src.DType())
	data := map[string]any{"WG": lpPoolWG, "Kind": kind, "T": t, "Out": physical(out.DType()),
		"Store": storeExpr(out.DType(), "v"), "Lowest": lpLowest(src.DType()), "NaN": t == "f32", "Bilinear": bilinear}
	key := fmt.Sprintf("lp_pool|%s|%s|%s|%s|%s|%v", kind, t, data["Out"], data["Store"], data["Lowest"], bilinear)
	ts := []*core.Tensor{src}
	lpPlaneOperand(prm, 0, src)
	if x != nil {
		ts = append(ts, x)
		lpPlaneOperand(prm, 1, x)
	}
	p, err := b.pipelineFor(key, len(ts), 1, func() (string, error) { return wgsl.Render("pool", data) })
	if err != nil {
		return err
	}
	prm.setI(wgsl.SlotN, n)
	bufs, err := buffers(append(ts, out)...)
	if err != nil {
		return err
	}
	return b.run(p, prm, n, lpPoolWG, bufs...)
}

func lpMaxPool(k *core.KernelCall) error {
	g, err := oprules.Pool2dGeom(k.Inputs[0].Shape(), k.Attrs, true)
	if err != nil {
		return err
	}
	return gpuOf(k).lpPooled("max", g, k.Inputs[0], k.Outputs[0])
}

// lpPoolBackward runs the gradient kind over g, refused where its threads
// would pass the device's loop limit (what names the windows).
func lpPoolBackward(k *core.KernelCall, kind, what string, g oprules.PoolGeom, src, x *core.Tensor) error {
	if err := gpuOf(k).checkTrips(what, lpTrips(kind, g)); err != nil {
		return err
	}
	var prm params
	lpPoolParams(&prm, g)
	return lpPoolRun(k, kind, false, &prm, src, x)
}

func lpMaxPoolBackward(k *core.KernelCall) error {
	g, err := oprules.Pool2dGeom(k.Inputs[1].Shape(), k.Attrs, true)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("max pooling's gradient over %v windows with stride %v", g.Kernel, g.Stride)
	return lpPoolBackward(k, "max_bwd", what, g, k.Inputs[0], k.Inputs[1])
}

func lpAvgPool(k *core.KernelCall) error {
	g, err := oprules.Pool2dGeom(k.Inputs[0].Shape(), k.Attrs, false)
	if err != nil {
		return err
	}
	return gpuOf(k).lpPooled("avg", g, k.Inputs[0], k.Outputs[0])
}

func lpAvgPoolBackward(k *core.KernelCall) error {
	g, err := oprules.Pool2dGeom(k.Attrs.Ints("input_shape"), k.Attrs, false)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("average pooling's gradient over %v windows with stride %v", g.Kernel, g.Stride)
	return lpPoolBackward(k, "avg_bwd", what, g, k.Inputs[0], nil)
}

func lpAdaptivePool(k *core.KernelCall) error {
	g, err := oprules.AdaptivePool2dGeom(k.Inputs[0].Shape(), k.Attrs.Ints("output_size"))
	if err != nil {
		return err
	}
	return gpuOf(k).lpPooled("adaptive", g, k.Inputs[0], k.Outputs[0])
}

func lpAdaptivePoolBackward(k *core.KernelCall) error {
	s := k.Inputs[0].Shape()
	g, err := oprules.AdaptivePool2dGeom(k.Attrs.Ints("input_shape"), s[len(s)-2:])
	if err != nil {
		return err
	}
	what := fmt.Sprintf("adaptive pooling's gradient from %v to %v", g.In, g.Out)
	return lpPoolBackward(k, "adaptive_bwd", what, g, k.Inputs[0], nil)
}

// lpInterpParams fills the geometry slots of interpolate: per dim the rule
// core's NearestSource or LinearSource applies and its scale, rounded to
// f32 as PyTorch's nearest rule is (bilinear's float64 scale loses its low
// bits here, a difference far inside the f32 tolerance).
func lpInterpParams(p *params, g oprules.InterpGeom) {
	for i, v := range []int{g.C, g.In[0], g.In[1], g.Out[0], g.Out[1]} {
		p.setI(lpGeomSlot+i, v)
	}
	if g.AlignCorners {
		p.setI(lpGeomSlot+15, 1)
	}
	for d := range 2 {
		in, out := g.In[d], g.Out[d]
		rule, slot := 0, lpGeomSlot+16+2*d
		var scale float64
		switch {
		case g.Mode == "nearest" && out == in:
			rule = 1
		case g.Mode == "nearest" && out == 2*in:
			rule = 2
		case g.Mode == "nearest":
			scale = float64(float32(in) / float32(out))
			if g.ScaleFactor[d] > 0 {
				scale = float64(float32(1 / g.ScaleFactor[d]))
			}
		case g.AlignCorners:
			if out > 1 {
				scale = float64(in-1) / float64(out-1)
			}
		default:
			scale = float64(in) / float64(out)
			if g.ScaleFactor[d] > 0 {
				scale = 1 / g.ScaleFactor[d]
			}
		}
		p.setI(slot, rule)
		p.setF(slot+1, scale)
	}
}

func lpInterpolate(k *core.KernelCall) error {
	g, err := oprules.InterpolateGeom(k.Inputs[0].Shape(), k.Attrs)
	if err != nil {
		return err
	}
	var prm params
	lpInterpParams(&prm, g)
	return lpPoolRun(k, "interp", g.Mode == "bilinear", &prm, k.Inputs[0], nil)
}

func lpInterpolateBackward(k *core.KernelCall) error {
	g, err := oprules.InterpolateGeom(k.Attrs.Ints("input_shape"), k.Attrs)
	if err != nil {
		return err
	}
	return gpuOf(k).lpInterpBackward(g, k.Inputs[0], k.Outputs[0])
}

func init() {
	register("max_pool2d", lpMaxPool)
	register("_max_pool2d_backward", lpMaxPoolBackward)
	register("avg_pool2d", lpAvgPool)
	register("_avg_pool2d_backward", lpAvgPoolBackward)
	register("adaptive_avg_pool2d", lpAdaptivePool)
	register("_adaptive_avg_pool2d_backward", lpAdaptivePoolBackward)
	register("interpolate", lpInterpolate)
	register("_interpolate_backward", lpInterpolateBackward)
}
