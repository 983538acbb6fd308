//go:build linux && cgo

package cuda

import (
	"encoding/binary"
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Affine 8-bit quantisation as elementwise maps with oprules.QuantParams'
// arithmetic (so PyTorch's): x rounded to f32, times the f32 reciprocal of
// the scale, rounded half to even, clamped to the range less the zero
// point before it is added (so huge values never overflow the integer
// conversion), NaN to qmax. Per-tensor parameters travel in the scalar
// slots; per-channel ones are uploaded as two small tensors read through a
// view that steps along the channel axis only, so strided inputs cost no
// copy.

func init() {
	register("quantize", quantizeKernel)
	register("dequantize", dequantizeKernel)
}

// quantOperands uploads one parameter per channel (the scales, or their
// f32 reciprocals when inv) and the zero points (i32), as views
// broadcast over shape.
func quantOperands(b *Backend, p oprules.QuantParams, shape core.Shape, inv bool) (scale, zp *core.Tensor, err error) {
	c := len(p.Scales)
	fs, zs := make([]byte, 4*c), make([]byte, 4*c)
	for i, s := range p.Scales {
		if inv {
			s = 1 / s
		}
		binary.LittleEndian.PutUint32(fs[4*i:], math.Float32bits(s))
		binary.LittleEndian.PutUint32(zs[4*i:], uint32(int32(p.ZeroPoints[i])))
	}
	view := func(d core.DType, raw []byte) (*core.Tensor, error) {
		s, err := b.Upload(d, raw)
		if err != nil {
			return nil, err
		}
		vs, st := make(core.Shape, len(shape)), make([]int, len(shape))
		for i := range vs {
			vs[i] = 1
		}
		vs[p.Axis], st[p.Axis] = c, 1
		return core.WrapStorage(b, s, vs, st, 0, d), nil
	}
	if scale, err = view(core.F32, fs); err != nil {
		return nil, nil, err
	}
	if zp, err = view(core.I32, zs); err != nil {
		scale.Release()
		return nil, nil, err
	}
	return scale, zp, nil
}

// quantizeExpr is the quantised value of x0 with inverse scale inv and
// zero point zp (dialect expressions); pi(1) and pi(2) are qmin and qmax.
func quantizeExpr(inv, zp string) string {
	v := "(f32(x0) * " + inv + ")"
	return "select(i32(clamp(round(" + v + "), f32(pi(1) - " + zp + "), f32(pi(2) - " + zp + "))) + i32(" + zp + "), i32(pi(2)), is_nan(" + v + "))"
}

func quantizeKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	p, err := oprules.ParseQuantParams(x.Shape(), out.DType(), k.Attrs)
	if err != nil {
		return err
	}
	b := cudaOf(k)
	var sc lower.Scalars
	sc.SetI(1, p.QMin)
	sc.SetI(2, p.QMax)
	if p.Axis < 0 {
		sc.SetF(0, float64(1/p.Scales[0]))
		sc.SetI(0, p.ZeroPoints[0])
		return b.mapRun("quantize", []*core.Tensor{x}, out, quantizeExpr("f32(pf(0))", "pi(0)"), &sc)
	}
	scale, zp, err := quantOperands(b, p, x.Shape(), true)
	if err != nil {
		return err
	}
	defer scale.Release()
	defer zp.Release()
	return b.mapRun("quantize", []*core.Tensor{x, scale, zp}, out, quantizeExpr("x1", "x2"), &sc)
}

// dequantizeKernel is (q - zero_point) * scale in f32, as on the CPU.
func dequantizeKernel(k *core.KernelCall) error {
	q, out := k.Inputs[0], k.Outputs[0]
	p, err := oprules.ParseQuantParams(q.Shape(), q.DType(), k.Attrs)
	if err != nil {
		return err
	}
	b := cudaOf(k)
	if p.Axis < 0 {
		var sc lower.Scalars
		sc.SetF(0, float64(p.Scales[0]))
		sc.SetI(0, p.ZeroPoints[0])
		return b.mapRun("dequantize", []*core.Tensor{q}, out, "(f32(i32(x0) - i32(pi(0))) * f32(pf(0)))", &sc)
	}
	scale, zp, err := quantOperands(b, p, q.Shape(), false)
	if err != nil {
		return err
	}
	defer scale.Release()
	defer zp.Release()
	return b.mapRun("dequantize", []*core.Tensor{q, scale, zp}, out, "(f32(i32(x0) - x2) * x1)", nil)
}
