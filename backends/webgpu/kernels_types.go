package webgpu

import (
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// castKernel converts between dtypes by core's rule: floats to integers
// truncate toward zero and saturate at the target's range, NaN to 0
// (numerics.FloatToInt); integers to narrower integers wrap (storeExpr);
// anything to bool tests nonzero. An i64 target is held in i32, so a value
// past i32 fails the cast.
func castKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	inT, outT := physical(in.DType()), physical(out.DType())
	e := lower.Conv("x0", inT, outT)
	var guards []guard
	switch {
	case out.DType() == core.Bool:
		e = lower.BoolOf(lower.Truthy("x0", inT))
	case inT == "f32" && outT != "f32":
		lo, hi := numerics.IntRange(out.DType())
		if out.DType() == core.I64 {
			lo, hi = math.MinInt32, math.MaxInt32
			guards = []guard{{"!is_nan(x0) && !(x0 >= -2147483648.0 && x0 < 2147483648.0)", errI64Range}}
		}
		e = lower.FloatToInt("x0", "f32", outT, lo, hi)
	case out.DType() == core.I64 && inT == "u32":
		guards = []guard{{"x0 > 2147483647u", errI64Range}}
	}
	return gpuOf(k).mapRunGuarded("cast", k.Inputs[:1], out, e, guards, nil)
}

func init() {
	registerUnary("types") // contiguous
	register("cast", castKernel)
}
