package cpu

import (
	"github.com/webtensor/webtensor/core"
)

// The CPU kernels of ops described by their arithmetic (core.Pointwise):
// built on first use from the description, on the same elementwise paths
// as the hand-registered unary and binary kernels (float32 fast path,
// broadcasting, strided views, splitting across cores), so an op that
// declares its math needs no kernel file here.

func init() { core.RegisterKernelDeriver("cpu", derivePointwise) }

// derivePointwise is the CPU's core.KernelDeriver.
func derivePointwise(def *core.OpDef) core.Kernel {
	p := def.Pointwise
	if p == nil {
		return nil // a GPUBody op: its CPU kernel is written, the reference
	}
	cost := p.Cost
	if cost == 0 {
		cost = 8
	}
	var k core.Kernel
	switch {
	case p.F != nil:
		k = unaryKernel(func(a core.Attrs, _ core.DType) unaryFns {
			f := p.F(a)
			return unaryFns{f: f, f32: ewThrough64(f), cost: cost}
		})
	case p.F2 != nil:
		k = binaryKernel(pointwiseBinary(p))
	default:
		return nil
	}
	// Both paths write every output element, so a recycled block needs no
	// clearing (fillsOutputs); temporaries are guarded as for built-ins.
	return claimOutputs(guardTemps(k))
}

// pointwiseBinary is the binaryFns of a two-input Pointwise: F2, and for
// float32 Single2 where the op has one, else F2 rounded once.
func pointwiseBinary(p *core.Pointwise) binaryFns {
	f := p.F2(nil)
	if p.Single2 != nil {
		return binaryFns{f: f, f32: p.Single2(nil)}
	}
	return binaryFns{f: f, f32: func(a, b float32) float32 { return float32(f(float64(a), float64(b))) }}
}
