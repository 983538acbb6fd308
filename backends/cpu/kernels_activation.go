package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
)

// Kernels of the elementwise activation ops (sigmoid, relu, gelu, silu) and gelu's backward, on the unary and binary elementwise
// paths of kernels_unary.go and kernels_binary.go; softmax is in
// kernels_activation_softmax.go.

func init() {
	registerFixedUnary("sigmoid", vectorised(unSigmoid, ewTranscendental(ewSigmoid)))
	registerFixedUnary("relu", unaryFns{vec: unRelu, f: ewRelu, i: func(x int64) int64 { return max(x, 0) },
		u:   func(x uint64) uint64 { return x },
		f32: ewThrough64(ewRelu),
		f32Loop: func(dst, src []float32) {
			// A mask instead of a branch (the compiler makes the select a
			// conditional move): activations are negative about half the
			// time at random, and a mispredicted branch each time made this
			// loop about 5x slower. -0 and NaN are not < 0: kept.
			dst = dst[:len(src)]
			for i, x := range src {
				var m uint32
				if x < 0 {
					m = math.MaxUint32
				}
				dst[i] = math.Float32frombits(math.Float32bits(x) &^ m)
			}
		}})
	registerUnary("gelu", func(a core.Attrs, _ core.DType) unaryFns {
		if a.String("approximate") == "tanh" {
			return vectorised(unGeluTanh, ewTranscendental(geluTanh))
		}
		return vectorised(unGelu, ewTranscendental(geluExact))
	})
	geluBackwardExact := binaryFns{vec: binGeluGrad, f: func(g, x float64) float64 { return g * geluExactGrad(x) }}
	geluBackwardTanh := binaryFns{vec: binGeluTanhGrad, f: func(g, x float64) float64 { return g * geluTanhGrad(x) }}
	registerBinaryAttrs("_gelu_backward", func(a core.Attrs) binaryFns {
		if a.String("approximate") == "tanh" {
			return geluBackwardTanh
		}
		return geluBackwardExact
	})
	registerFixedUnary("silu", vectorised(unSilu, ewTranscendental(func(x float64) float64 { return x / (1 + math.Exp(-x)) })))
}

// ewRelu keeps NaN and -0, as PyTorch's relu does.
func ewRelu(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

func ewSigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

const sqrt2OverPi = 0.7978845608028654 // sqrt(2/pi)
const geluCubic = 0.044715

// geluExact is x·erfc(-x/√2)/2 rather than PyTorch's x·(1 + erf(x/√2))/2:
// equal in exact arithmetic, but the erfc form keeps full relative accuracy
// in the negative tail, where 1 + erf cancels to 0.
func geluExact(x float64) float64 { return 0.5 * x * math.Erfc(-x*(1/math.Sqrt2)) }

// geluTanh is x·(1 + tanh(u))/2, u = √(2/π)(x + 0.044715x³), computed as
// x·sigmoid(2u) for the same reason.
func geluTanh(x float64) float64 {
	return x * ewSigmoid(2*sqrt2OverPi*(x+geluCubic*x*x*x))
}

// geluExactGrad is Φ(x) + x·φ(x).
func geluExactGrad(x float64) float64 {
	cdf := 0.5 * math.Erfc(-x*(1/math.Sqrt2))
	pdf := math.Exp(-0.5*x*x) * (1 / math.Sqrt(2*math.Pi))
	return cdf + x*pdf
}

// geluTanhGrad uses s = sigmoid(2u) for the inner u: 1 + tanh(u) = 2s and
// 1 - tanh²(u) = 4s(1-s), which do not cancel in the negative tail.
func geluTanhGrad(x float64) float64 {
	s := ewSigmoid(2 * sqrt2OverPi * (x + geluCubic*x*x*x))
	return s + 2*x*s*(1-s)*sqrt2OverPi*(1+3*geluCubic*x*x)
}
