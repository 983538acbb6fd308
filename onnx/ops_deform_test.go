package onnx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// deformReference is 2-D DeformConv computed point by point, as ONNX's
// reference does it (bilinear taps, zero outside the input).
func deformReference(x, w, off, b, mask []float64, xs, ws, os []int, group, offGroup int, stride, dil, pads []int) []float64 {
	n, c, h, wd := xs[0], xs[1], xs[2], xs[3]
	oc, kh, kw := ws[0], ws[2], ws[3]
	oh, ow := os[2], os[3]
	at := func(bi, ci, y, xx int) float64 {
		if y < 0 || y >= h || xx < 0 || xx >= wd {
			return 0
		}
		return x[((bi*c+ci)*h+y)*wd+xx]
	}
	sample := func(bi, ci int, y, xx float64) float64 {
		y0, x0 := math.Floor(y), math.Floor(xx)
		ty, tx := y-y0, xx-x0
		iy, ix := int(y0), int(x0)
		return at(bi, ci, iy, ix)*(1-ty)*(1-tx) + at(bi, ci, iy, ix+1)*(1-ty)*tx +
			at(bi, ci, iy+1, ix)*ty*(1-tx) + at(bi, ci, iy+1, ix+1)*ty*tx
	}
	out := make([]float64, n*oc*oh*ow)
	icg, ocg, cpo := c/group, oc/group, c/offGroup
	for bi := range n {
		for o := range oc {
			for i := range oh {
				for j := range ow {
					sum := 0.0
					if b != nil {
						sum = b[o]
					}
					for ci := o / ocg * icg; ci < (o/ocg+1)*icg; ci++ {
						g := ci / cpo
						for ki := range kh {
							for kj := range kw {
								k := ki*kw + kj
								offAt := func(d int) float64 {
									return off[(((bi*offGroup+g)*kh*kw+k)*2+d)*oh*ow+i*ow+j]
								}
								y := float64(i*stride[0]-pads[0]+ki*dil[0]) + offAt(0)
								xx := float64(j*stride[1]-pads[1]+kj*dil[1]) + offAt(1)
								v := sample(bi, ci, y, xx) * w[((o*icg+ci%icg)*kh+ki)*kw+kj]
								if mask != nil {
									v *= mask[((bi*offGroup+g)*kh*kw+k)*oh*ow+i*ow+j]
								}
								sum += v
							}
						}
					}
					out[((bi*oc+o)*oh+i)*ow+j] = sum
				}
			}
		}
	}
	return out
}

// DeformConv with groups, offset groups, strides, dilations, uneven pads,
// a mask and a bias matches the point-by-point reference, offsets reaching
// past the input included; with zero offsets and no mask it is Conv.
func TestDeformConvMatchesReference(t *testing.T) {
	xs, ws := []int{2, 4, 6, 7}, []int{6, 2, 3, 2}
	stride, dil, pads := []int{2, 1}, []int{1, 2}, []int{1, 0, 2, 1}
	oh := (xs[2]+pads[0]+pads[2]-(ws[2]-1)*dil[0]-1)/stride[0] + 1
	ow := (xs[3]+pads[1]+pads[3]-(ws[3]-1)*dil[1]-1)/stride[1] + 1
	os := []int{2, 2 * 6 * 2, oh, ow}
	x, w, b := wave(0.37, xs...), wave(1.1, ws...), wave(3.3, 6)
	off := call("mul", nil, wave(0.23, os...), core.Scalar(1.6, core.F32, core.CPU)) // [-3.2, 3.2]
	mask := wave(0.51, 2, 2*6, oh, ow)
	attrs := []*pb.AttributeProto{intAttribute("group", 2), intAttribute("offset_group", 2), intsAttribute("strides", 2, 1),
		intsAttribute("dilations", 1, 2), intsAttribute("pads", 1, 0, 2, 1), intsAttribute("kernel_shape", 3, 2)}
	out, err := runOne(t, "DeformConv", attrs, 1, x, w, off, b, mask)
	require.NoError(t, err)
	assert.Equal(t, core.Shape{2, 6, oh, ow}, out[0].Shape())
	want := deformReference(floats(t, x), floats(t, w), floats(t, off), floats(t, b), floats(t, mask), xs, ws, os, 2, 2, stride, dil, pads)
	assertClose(t, want, floats(t, out[0]), 1e-5, "DeformConv")

	zero := core.Zeros(core.Shape(os), core.F32, core.CPU)
	got, err := runOne(t, "DeformConv", attrs, 1, x, w, zero, b)
	require.NoError(t, err)
	convAttrs := []*pb.AttributeProto{intAttribute("group", 2), intsAttribute("strides", 2, 1), intsAttribute("dilations", 1, 2), intsAttribute("pads", 1, 0, 2, 1)}
	conv, err := runOne(t, "Conv", convAttrs, 1, x, w, b)
	require.NoError(t, err)
	assertClose(t, floats(t, conv[0]), floats(t, got[0]), 1e-5, "DeformConv with zero offsets")
}

func TestDeformConvErrorsNameTheNode(t *testing.T) {
	x, w := wave(1, 1, 4, 3, 3), wave(2, 2, 4, 2, 2)
	off := core.Zeros(core.Shape{1, 8, 2, 2}, core.F32, core.CPU)
	cases := []struct {
		attrs []*pb.AttributeProto
		ins   []*core.Tensor
		want  string
	}{
		{[]*pb.AttributeProto{intAttribute("offset_group", 3)}, []*core.Tensor{x, w, off},
			`node "n1" (DeformConv): offset_group 3 does not divide X's 4 channels`},
		{[]*pb.AttributeProto{intAttribute("group", 2)}, []*core.Tensor{x, w, off},
			`node "n1" (DeformConv): group 2 with X [1 4 3 3] and W [2 4 2 2]: want C = W's dim 1 * group`},
		{[]*pb.AttributeProto{intsAttribute("kernel_shape", 3, 3)}, []*core.Tensor{x, w, off},
			`node "n1" (DeformConv): kernel_shape [3 3] does not match W's shape [2 4 2 2]`},
		{[]*pb.AttributeProto{intsAttribute("strides", 0, 1)}, []*core.Tensor{x, w, off},
			`node "n1" (DeformConv): strides [0 1], dilations [1 1] and pads [0 0 0 0]: want positive strides`},
		{nil, []*core.Tensor{x, w, core.Zeros(core.Shape{1, 8, 3, 3}, core.F32, core.CPU)},
			`node "n1" (DeformConv): offset has shape [1 8 3 3]: its spatial dims are the output's, want 2 along spatial dim 0`},
		{nil, []*core.Tensor{x, w, core.Zeros(core.Shape{1, 6, 2, 2}, core.F32, core.CPU)},
			`node "n1" (DeformConv): offset has shape [1 6 2 2]: want [1, 8, ...]`},
		{nil, []*core.Tensor{x, w, off, nil, core.Zeros(core.Shape{1, 8, 2, 2}, core.F32, core.CPU)},
			`node "n1" (DeformConv): mask has shape [1 8 2 2], want [1 4 2 2]`},
		{nil, []*core.Tensor{x, w, off, core.Zeros(core.Shape{3}, core.F32, core.CPU)},
			`node "n1" (DeformConv): B has shape [3], want [2]`},
	}
	for _, tc := range cases {
		_, err := runOne(t, "DeformConv", tc.attrs, 1, tc.ins...)
		assert.ErrorContains(t, err, tc.want)
	}
}
