package kernelkit

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// AttentionScale is the "scale" attribute, or 1/sqrt(E).
func AttentionScale(a core.Attrs, e int) float64 {
	if a.Has("scale") {
		return a.Float("scale")
	}
	return 1 / math.Sqrt(float64(e))
}
