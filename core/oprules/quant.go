package oprules

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/core/types"
)

// Affine quantisation to 8-bit integers, per tensor or per channel, with the
// arithmetic of torch.quantize_per_tensor / quantize_per_channel: the scale is
// used as f32 and values are multiplied by its f32 reciprocal before rounding
// half to even, so results match PyTorch bit for bit on f32 inputs.

// QuantParams are the validated parameters of a quantize or dequantize call.
// Axis is -1 for per-tensor quantisation; Scales and ZeroPoints then hold
// one value, else one per index of Axis.
type QuantParams struct {
	Axis       int
	Scales     []float32
	ZeroPoints []int64
	QMin, QMax int64
}

// Channel returns the parameter index of the element at flat (row-major)
// position i of a tensor with the given shape.
func (p QuantParams) Channel(shape Shape, i int) int {
	if p.Axis < 0 {
		return 0
	}
	inner := shape[p.Axis+1:].Numel()
	return (i / inner) % shape[p.Axis]
}

// ParseQuantParams checks the scale, zero_point and axis attributes against
// a tensor of the given shape quantised to q (i8 or u8).
func ParseQuantParams(shape Shape, q DType, a Attrs) (QuantParams, error) {
	if q != types.I8 && q != types.U8 {
		return QuantParams{}, fmt.Errorf("quantised dtype must be i8 or u8, got %s", q)
	}
	p := QuantParams{Axis: -1}
	p.QMin, p.QMax = numerics.IntRange(q)
	channels := 1
	if a.Has("axis") {
		ax, err := NormAxis(a.Int("axis"), len(shape))
		if err != nil {
			return QuantParams{}, err
		}
		p.Axis, channels = ax, shape[ax]
	}
	scales, zps := a.Floats("scale"), a.Ints("zero_point")
	if len(scales) != channels {
		return QuantParams{}, fmt.Errorf("scale has %d values, want %d (%s)", len(scales), channels, quantWhat(p.Axis, shape))
	}
	if zps != nil && len(zps) != channels {
		return QuantParams{}, fmt.Errorf("zero_point has %d values, want %d (%s)", len(zps), channels, quantWhat(p.Axis, shape))
	}
	p.Scales, p.ZeroPoints = make([]float32, channels), make([]int64, channels)
	for c, s := range scales {
		p.Scales[c] = float32(s)
		if !(p.Scales[c] > 0) || math.IsInf(float64(p.Scales[c]), 0) {
			return QuantParams{}, fmt.Errorf("scale[%d] is %v, want a finite positive f32", c, s)
		}
		if zps == nil {
			continue
		}
		if z := int64(zps[c]); z < p.QMin || z > p.QMax {
			return QuantParams{}, fmt.Errorf("zero_point[%d] is %d, outside the %s range [%d, %d]", c, z, q, p.QMin, p.QMax)
		}
		p.ZeroPoints[c] = int64(zps[c])
	}
	return p, nil
}

func quantWhat(axis int, shape Shape) string {
	if axis < 0 {
		return "per tensor: no axis given"
	}
	return fmt.Sprintf("one per index of axis %d of shape %v", axis, shape)
}

// Quantize is one element's quantised value. NaN saturates to qmax like
// PyTorch's x86 kernels; infinities saturate to their end of the range.
func (p QuantParams) Quantize(x float32, c int) int64 {
	v := x * (1 / p.Scales[c])
	if v != v {
		return p.QMax
	}
	r := math.RoundToEven(float64(v))
	switch {
	case r >= float64(p.QMax-p.ZeroPoints[c]):
		return p.QMax
	case r <= float64(p.QMin-p.ZeroPoints[c]):
		return p.QMin
	}
	return int64(r) + p.ZeroPoints[c]
}

// Dequantize is one element's real value, (q - zero_point) * scale in f32.
func (p QuantParams) Dequantize(q int64, c int) float32 {
	return float32(q-p.ZeroPoints[c]) * p.Scales[c]
}
