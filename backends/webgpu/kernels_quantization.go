package webgpu

import (
	"encoding/binary"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Affine 8-bit quantisation as elementwise maps. The per-channel scales
// (as f32 reciprocals for quantize, which multiplies by them exactly as
// oprules.QuantParams does) and zero points are uploaded as small tensors and
// read through a view that steps along the channel axis only, so per-tensor
// and per-channel parameters take one path and strided inputs cost no copy.

// spQuantOperands uploads one parameter per channel (inverse scales when
// inv is set, else scales, then zero points) as views broadcast over shape.
func spQuantOperands(k *core.KernelCall, p oprules.QuantParams, shape core.Shape, inv bool) (scale, zp *core.Tensor, err error) {
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
		s, err := k.Backend.Upload(d, raw)
		if err != nil {
			return nil, err
		}
		vs, st := make(core.Shape, len(shape)), make([]int, len(shape))
		for i := range vs {
			vs[i] = 1
		}
		if p.Axis >= 0 {
			vs[p.Axis], st[p.Axis] = c, 1
		}
		return core.WrapStorage(k.Backend, s, vs, st, 0, d), nil
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

// spQuantizeKernel: NaN saturates to qmax; round(x * (1/scale)) (WGSL's
// round is half to even) saturates at the ends of the range before the zero
// point is added, so huge values never overflow the conversion to i32.
func spQuantizeKernel(k *core.KernelCall) error {
	x, out := k.Inputs[0], k.Outputs[0]
	p, err := oprules.ParseQuantParams(x.Shape(), out.DType(), k.Attrs)
	if err != nil {
		return err
	}
	scale, zp, err := spQuantOperands(k, p, x.Shape(), true)
	if err != nil {
		return err
	}
	defer scale.Release()
	defer zp.Release()
	v := "(x0 * x1)"
	e := "select(select(select(i32(round(" + v + ")) + x2, pi(0u), round(" + v + ") <= f32(pi(0u) - x2)), pi(1u), round(" + v +
		") >= f32(pi(1u) - x2)), pi(1u), is_nan(" + v + "))"
	if physical(out.DType()) == "u32" {
		e = "u32(" + e + ")"
	}
	return gpuOf(k).mapRun([]*core.Tensor{x, scale, zp}, out, e, func(prm *params) {
		prm.setI(0, int(p.QMin))
		prm.setI(1, int(p.QMax))
	})
}

// spDequantizeKernel is (q - zero_point) * scale in f32, as on the CPU.
func spDequantizeKernel(k *core.KernelCall) error {
	q, out := k.Inputs[0], k.Outputs[0]
	p, err := oprules.ParseQuantParams(q.Shape(), q.DType(), k.Attrs)
	if err != nil {
		return err
	}
	scale, zp, err := spQuantOperands(k, p, q.Shape(), false)
	if err != nil {
		return err
	}
	defer scale.Release()
	defer zp.Release()
	return gpuOf(k).mapRun([]*core.Tensor{q, scale, zp}, out, "(f32(i32(x0) - x2) * x1)", nil)
}

func init() {
	register("quantize", spQuantizeKernel)
	register("dequantize", spDequantizeKernel)
}
