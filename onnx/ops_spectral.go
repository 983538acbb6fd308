package onnx

import (
	"math"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// DFT over the registry's transforms, which take ONNX's own layout: a
// complex signal as real pairs in a trailing dimension of 2 (a real one
// has a trailing 1). Det is the registry's. MelWeightMatrix is a constant
// computed from its scalar inputs.

func init() {
	def([]string{"axis", "inverse", "onesided"}, dft, "DFT")
	def([]string{"onesided"}, stft, "STFT")
	def(nil, func(c *ctx) ([]*core.Tensor, error) { return one(call("det", nil, c.in(0))) }, "Det")
	for onnxName, op := range map[string]string{"BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor"} {
		def(nil, binaryOp(op), onnxName)
	}
	def(nil, unary("bitwise_invert"), "BitwiseNot")
	def([]string{"output_datatype"}, melWeightMatrix, "MelWeightMatrix")
}

// melWeightMatrix builds the [dft_length/2+1, num_mel_bins] filterbank
// on the host from its scalar inputs (parameters, read as shapes are) with
// ONNX's reference arithmetic: num_mel_bins+2 points evenly spaced in mel
// between the edges, each mapped to the spectrogram bin
// floor((dft_length+1) * hz / sample_rate), and a triangle of peak 1 per
// mel bin between its neighbours.
func melWeightMatrix(c *ctx) ([]*core.Tensor, error) {
	var p [5]float64
	for i := range p {
		v, ok := c.scalar(i)
		if !ok && c.err == nil {
			c.fail("input %d is required", i)
		}
		p[i] = v
	}
	if c.err != nil {
		return nil, nil
	}
	bins, dftLen, rate, lowHz, highHz := int(p[0]), int(p[1]), p[2], p[3], p[4]
	if bins < 1 || dftLen < 1 || rate <= 0 || float64(bins) != p[0] || float64(dftLen) != p[1] {
		c.fail("num_mel_bins %v, dft_length %v and sample_rate %v: want positive integers", p[0], p[1], p[2])
		return nil, nil
	}
	dt, err := heldType(int32(c.attrInt("output_datatype", int64(pb.TensorProto_FLOAT))))
	if err != nil || !dt.IsFloat() {
		c.fail("output_datatype %d is not a floating-point type", c.attrInt("output_datatype", 1))
		return nil, nil
	}
	specBins := dftLen/2 + 1
	lowMel, highMel := 2595*math.Log10(1+lowHz/700), 2595*math.Log10(1+highHz/700)
	step := (highMel - lowMel) / float64(bins+2)
	edge := make([]int, bins+2)
	for i := range edge {
		hz := 700 * (math.Pow(10, (float64(i)*step+lowMel)/2595) - 1)
		edge[i] = int(math.Floor(float64(dftLen+1) * hz / rate))
		if edge[i] < 0 || edge[i] >= specBins {
			c.fail("lower_edge_hertz %v and upper_edge_hertz %v put mel point %d at spectrogram bin %d, outside [0, %d)", lowHz, highHz, i, edge[i], specBins)
			return nil, nil
		}
	}
	w := make([]float64, specBins*bins)
	for i := range bins {
		lo, mid, hi := edge[i], edge[i+1], edge[i+2]
		if mid == lo {
			w[mid*bins+i] = 1
		} else {
			for j := lo; j <= mid; j++ {
				w[j*bins+i] = float64(j-lo) / float64(mid-lo)
			}
		}
		for j := mid; j < hi; j++ {
			w[j*bins+i] = float64(hi-j) / float64(hi-mid)
		}
	}
	return one(core.FromFloat64s(dt, core.Shape{specBins, bins}, w, c.m.dev))
}

func dft(c *ctx) ([]*core.Tensor, error) {
	x := c.in(0)
	if c.err != nil {
		return nil, c.err
	}
	shape := x.Shape()
	r := len(shape)
	if r < 2 || (shape[r-1] != 1 && shape[r-1] != 2) {
		c.fail("DFT's input is [batch, signal..., 1] (real) or [..., 2] (complex), got shape %v", shape)
		return nil, c.err
	}
	// The axis is an attribute (default 1) until opset 20, an optional
	// input (default -2) from it.
	axis := c.attrInt("axis", 1)
	if c.n.opset >= 20 {
		axis = -2
		if v, ok := c.ints(2); ok {
			if len(v) != 1 {
				c.fail("axis must be one value, got %v", v)
				return nil, c.err
			}
			axis = v[0]
		}
	}
	a := int(axis)
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r-1 {
		c.fail("axis %d is not a signal axis of an input of shape %v (the last dimension holds the parts)", axis, shape)
		return nil, c.err
	}
	inverse, onesided := c.attrInt("inverse", 0) != 0, c.attrInt("onesided", 0) != 0
	n := shape[a]
	if inverse && onesided {
		n = 2 * (n - 1)
	}
	if v, ok := c.scalar(1); ok {
		n = int(v)
	}
	if c.err != nil {
		return nil, c.err
	}
	if n < 1 {
		c.fail("dft_length must be positive, got %d", n)
		return nil, c.err
	}
	d := x.DType()
	if d != core.F64 {
		x = x.Cast(core.F32)
	}
	attrs := core.Attrs{"n": n, "axis": a}
	var out *core.Tensor
	switch {
	case !inverse && onesided && shape[r-1] == 1:
		out = call("rfft", attrs, call("squeeze", core.Attrs{"axes": []int{r - 1}}, x))
	case inverse && onesided:
		out = call("unsqueeze", core.Attrs{"axis": -1}, call("irfft", attrs, pairs(x)))
	case inverse:
		out = call("ifft", attrs, pairs(x))
	default:
		out = call("fft", attrs, pairs(x))
		if onesided {
			out = call("slice", core.Attrs{"axis": a, "stop": n/2 + 1}, out)
		}
	}
	return one(out.Cast(d))
}

// pairs is x with a trailing 2: a real signal [..., 1] gains zero
// imaginary parts.
func pairs(x *core.Tensor) *core.Tensor {
	if s := x.Shape(); s[len(s)-1] == 2 {
		return x
	}
	return core.Concat([]*core.Tensor{x, core.ZerosLike(x)}, core.Attrs{"axis": -1})
}

// stft cuts the signal [batch, length, 1 or 2] into frames (one
// index_select at positions fixed by the shapes), windows them and
// transforms each: [batch, frames, bins, 2].
func stft(c *ctx) ([]*core.Tensor, error) {
	x, window := c.in(0), c.opt(2)
	hop, _ := c.scalar(1)
	shape := x.Shape()
	if c.err == nil && (len(shape) != 3 || (shape[2] != 1 && shape[2] != 2)) {
		c.fail("STFT's signal is [batch, length, 1] (real) or [batch, length, 2] (complex), got shape %v", shape)
	}
	length := 0
	if window != nil {
		length = window.Numel()
	}
	if v, ok := c.scalar(3); ok {
		if window != nil && int(v) != length {
			c.fail("frame_length %v differs from the window's length %d", v, length)
		}
		length = int(v)
	}
	if c.err != nil {
		return nil, nil
	}
	step := int(hop)
	if step < 1 || length < 1 || length > shape[1] {
		c.fail("frame_step %v and frame length %d do not frame a signal of length %d", hop, length, shape[1])
		return nil, nil
	}
	frames := (shape[1]-length)/step + 1
	at := make([]int64, 0, frames*length)
	for f := range frames {
		for k := range length {
			at = append(at, int64(f*step+k))
		}
	}
	d := x.DType()
	if d != core.F64 {
		x = x.Cast(core.F32)
	}
	cut := call("index_select", core.Attrs{"axis": 1}, x, core.FromSlice(at, core.Shape{len(at)}, x.Device()))
	cut = cut.Reshape([]int{shape[0], frames, length, shape[2]})
	if window != nil {
		cut = call("mul", nil, cut, window.Cast(cut.DType()).Reshape([]int{1, 1, length, 1}))
	}
	attrs := core.Attrs{"n": length, "axis": 2}
	var out *core.Tensor
	onesided := c.attrInt("onesided", 1) != 0
	if onesided && shape[2] == 1 {
		out = call("rfft", attrs, call("squeeze", core.Attrs{"axes": []int{3}}, cut))
	} else {
		out = call("fft", attrs, pairs(cut))
		if onesided {
			out = call("slice", core.Attrs{"axis": 2, "stop": length/2 + 1}, out)
		}
	}
	return one(out.Cast(d))
}
