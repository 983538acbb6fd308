package kernelkit

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Creation ops: the values the kernels of every backend fill with, so that
// zeros, ones, full and linspace agree to the bit across backends.

// FillOps names the constant creation ops (each with its _like form) and
// the value each fills with.
var FillOps = []struct {
	Ops   [2]string
	Value func(core.Attrs) float64
}{
	{[2]string{"zeros", "zeros_like"}, func(core.Attrs) float64 { return 0 }},
	{[2]string{"ones", "ones_like"}, func(core.Attrs) float64 { return 1 }},
	{[2]string{"full", "full_like"}, func(a core.Attrs) float64 { return a.Float("value") }},
}

// RegisterFills registers, through register, the kernel fill builds for
// each of FillOps from the op's value.
func RegisterFills(register func(op string, k core.Kernel), fill func(value func(core.Attrs) float64) core.Kernel) {
	for _, f := range FillOps {
		for _, op := range f.Ops {
			register(op, fill(f.Value))
		}
	}
}

// LinspaceBounds is linspace's start, stop and step over n values (filled
// from both ends towards the middle, as PyTorch does, so the last is
// exactly stop). trunc, for integer dtypes, truncates the bounds first,
// also like PyTorch; the step is 0 for fewer than two values.
func LinspaceBounds(a core.Attrs, n int, trunc bool) (start, stop, step float64) {
	start, stop = a.Float("start"), a.Float("stop")
	if trunc {
		start, stop = math.Trunc(start), math.Trunc(stop)
	}
	if n > 1 {
		step = (stop - start) / float64(n-1)
	}
	return start, stop, step
}
