package oprules

import "github.com/webtensor/webtensor/core/types"

// Normalisation: the count batch statistics are taken over.

// BatchNormCount is the number of values each channel's statistics are
// taken over: every dim but the channel dim 1.
func BatchNormCount(x Shape) int {
	n := 1
	for i, d := range x {
		if i != 1 {
			n *= d
		}
	}
	return n
}

// RMSNormEps is rms_norm's epsilon: the attribute, or the machine epsilon
// of x's dtype d as in torch.finfo(dtype).eps. The op's GPU row body reads
// it as every kernel does, so it lives here, below core.
func RMSNormEps(a Attrs, d DType) float64 {
	if a.Has("eps") {
		return a.Float("eps")
	}
	switch d {
	case types.F16:
		return 0x1p-10
	case types.BF16:
		return 0x1p-7
	case types.F64:
		return 0x1p-52
	}
	return 0x1p-23
}
