// Command go-swish is a webtensor plugin written in Go (see
// plugins-wasm/sdk/go/wtplugin). Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o goswish.wasm .
//
// It adds goswish.swish, x*sigmoid(beta*x) with a backward expression, and
// goswish.pairwise_sum, whose output shape the plugin works out itself.
package main

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/plugins-wasm/sdk/go/wtplugin"
)

// main is empty: a c-shared wasip1 module only runs init, then serves the
// exports wtplugin defines.
func main() {}

func init() {
	wtplugin.Plugin("goswish", "0.1.0")
	wtplugin.Register(wtplugin.Op{
		Name:    "goswish.swish",
		Doc:     "x * sigmoid(beta * x) (swish; beta = 1 is SiLU).",
		Inputs:  []wtplugin.Input{{Name: "x", DTypes: []string{"f32", "f64"}}},
		Attrs:   []wtplugin.Attr{{Name: "beta", Kind: "float", Default: 1.0, Doc: "slope of the gate"}},
		Outputs: []wtplugin.Output{{Name: "y", Shape: "input:0", DType: "input:0"}},
		// d/dx x*s(bx) = s(bx) * (1 + bx*(1 - s(bx))), s = sigmoid.
		Backward: map[string]string{"x": "mul(grad, mul(sigmoid(mul(beta, x)), " +
			"add(1, mul(mul(beta, x), sub(1, sigmoid(mul(beta, x)))))))"},
	}, swish)
	wtplugin.Register(wtplugin.Op{
		Name:    "goswish.pairwise_sum",
		Doc:     "Sums adjacent pairs along the last axis: y[..., i] = x[..., 2i] + x[..., 2i+1] (a lone last element is kept).",
		Inputs:  []wtplugin.Input{{Name: "x", DTypes: []string{"f32", "f64"}}},
		Outputs: []wtplugin.Output{{Name: "y", Shape: "infer", DType: "input:0"}},
		// Each x[..., j] feeds y[..., j/2] once: gather grad at j/2. The
		// indices come from x's shape: cumsum of ones along the axis, minus 1.
		Backward: map[string]string{"x": "take_along_axis(grad, cast(floor_divide(" +
			"sub(cumsum(ones_like(x), axis=-1), 1), 2), dtype=\"i64\"), axis=-1)"},
		Infer: pairwiseShape,
	}, pairwiseSum)
}

func swish(c *wtplugin.Call) error {
	beta := c.Attrs.Float("beta")
	switch x, y := c.Inputs[0], c.Outputs[0]; x.DType {
	case wtplugin.F32:
		swishOf(x.Float32s(), y.Float32s(), float32(beta))
	case wtplugin.F64:
		swishOf(x.Float64s(), y.Float64s(), beta)
	default:
		return fmt.Errorf("x is %s; want f32 or f64", x.DType)
	}
	return nil
}

func swishOf[T float32 | float64](x, y []T, beta T) {
	for i, v := range x {
		// sigmoid in float64 and in the form that cannot overflow exp.
		z := float64(beta * v)
		var s float64
		if z >= 0 {
			s = 1 / (1 + math.Exp(-z))
		} else {
			e := math.Exp(z)
			s = e / (1 + e)
		}
		y[i] = T(float64(v) * s)
	}
}

func pairwiseShape(in []wtplugin.Meta, _ wtplugin.Attrs) ([]wtplugin.Meta, error) {
	s := in[0].Shape
	if len(s) == 0 {
		return nil, fmt.Errorf("x is a scalar; it needs at least one axis")
	}
	out := append([]int{}, s...)
	out[len(out)-1] = (s[len(s)-1] + 1) / 2
	return []wtplugin.Meta{{Shape: out, DType: in[0].DType}}, nil
}

func pairwiseSum(c *wtplugin.Call) error {
	x, y := c.Inputs[0], c.Outputs[0]
	if len(x.Shape) == 0 {
		return fmt.Errorf("x is a scalar; it needs at least one axis")
	}
	n := x.Shape[len(x.Shape)-1]
	switch x.DType {
	case wtplugin.F32:
		pairwise(x.Float32s(), y.Float32s(), n)
	case wtplugin.F64:
		pairwise(x.Float64s(), y.Float64s(), n)
	default:
		return fmt.Errorf("x is %s; want f32 or f64", x.DType)
	}
	return nil
}

// pairwise works row by row: rows of n inputs give rows of ceil(n/2) outputs.
func pairwise[T float32 | float64](x, y []T, n int) {
	m := (n + 1) / 2
	for r := 0; r*n < len(x) && n > 0; r++ {
		row, out := x[r*n:(r+1)*n], y[r*m:(r+1)*m]
		for j, v := range row {
			out[j/2] += v
		}
	}
}
