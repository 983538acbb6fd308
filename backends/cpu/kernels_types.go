package cpu

import (
	"github.com/webtensor/webtensor/core"
)

// Kernels of the types ops: contiguous copies and casts.

func init() {
	register("contiguous", copyKernel)
	register("cast", copyKernel)
}

// copyKernel writes input 0 into the (dense) output, converting dtype.
// Contiguous casts between f32 and f16, bf16 or i32 run the vector
// conversions (ew_convert.go); integer-to-integer copies go through int64
// so no precision is lost, the rest through float64.
func copyKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	if in.DType() == out.DType() {
		size := in.DType().Size()
		src, dst := host(in), host(out)
		if in.IsContiguous() {
			copy(dst, src[in.Offset()*size:(in.Offset()+in.Numel())*size])
			return nil
		}
		if in.DType() == core.F32 && out.IsContiguous() {
			// Making a permuted view contiguous (merging attention heads,
			// a feature map flattened to tokens): run by run, where the
			// index map cost an int per element and a copy call each.
			gatherF32Into(f32view(dst)[out.Offset():out.Offset()+out.Numel()], in)
			return nil
		}
		for i, p := range indexMap(in, in.Shape()) {
			copy(dst[i*size:(i+1)*size], src[p*size:(p+1)*size])
		}
		return nil
	}
	if castFast(in, out) {
		return nil
	}
	if !in.DType().IsFloat() && !out.DType().IsFloat() {
		writeI64(out, readI64(in))
		return nil
	}
	writeF64(out, readF64(in))
	return nil
}
