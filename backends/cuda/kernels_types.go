//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// castKernel converts by core's rule (numerics.FloatToInt): a float becomes
// an integer truncated toward zero and saturated at the target's range,
// NaN giving 0, written with lower.FloatToInt so that no conversion sees
// a value outside its type (C++ leaves that undefined); integers to
// narrower integers wrap like a C cast; anything to bool tests nonzero
// (NaN is nonzero).
func castKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	inT, ct := computeType(in.DType()), computeType(out.DType())
	e := "x0"
	if lower.IsFloat(inT) && !out.DType().IsFloat() && out.DType() != core.Bool {
		lo, hi := numerics.IntRange(out.DType())
		e = lower.FloatToInt("x0", inT, ct, lo, hi)
	}
	return cudaOf(k).mapRun("cast", k.Inputs[:1], out, e, nil)
}

func init() {
	registerUnary("types") // contiguous
	register("cast", castKernel)
}
