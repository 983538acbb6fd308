package kernelkit

import "github.com/webtensor/webtensor/core"

// RMSNormEps is rms_norm's epsilon: the attribute, or the machine epsilon
// of the dtype as in torch.finfo(dtype).eps.
func RMSNormEps(a core.Attrs, d core.DType) float64 {
	if a.Has("eps") {
		return a.Float("eps")
	}
	switch d {
	case core.F16:
		return 0x1p-10
	case core.BF16:
		return 0x1p-7
	case core.F64:
		return 0x1p-52
	}
	return 0x1p-23
}
