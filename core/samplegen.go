package core

import (
	"math"

	"github.com/webtensor/webtensor/core/numerics"
)

// Sample inputs are generated from the Philox stream keyed by the op and
// sample name (numerics.SampleSeed), so the export tool, the gradient
// checker and every backend see the same values without storing them.

var specialValues = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 3e4, 1e-30, -2.5e-39}

// Generate returns the logical (row-major) values of a sample input before
// rounding to its dtype.
func (g Gen) Generate(seed uint64) []float64 {
	n := g.Shape.Numel()
	out := make([]float64, n)
	if g.Kind == "spd" {
		return spdValues(g.Shape, seed)
	}
	for i := range out {
		u := numerics.PhiloxUniform(seed, 0, i)
		switch g.Kind {
		case "", "randn":
			out[i] = numerics.PhiloxNormal(seed, 0, i)
		case "uniform":
			out[i] = g.Lo + u*(g.Hi-g.Lo)
		case "positive":
			out[i] = 0.5 + 1.5*u
		case "int":
			out[i] = math.Floor(g.Lo + u*(g.Hi-g.Lo))
		case "bool":
			if u < 0.5 {
				out[i] = 1
			}
		case "special":
			if i%2 == 0 {
				out[i] = specialValues[(i/2)%len(specialValues)]
			} else {
				out[i] = numerics.PhiloxNormal(seed, 0, i)
			}
		case "values":
			if len(g.Values) > 0 {
				out[i] = g.Values[i%len(g.Values)]
			}
		}
	}
	return out
}

// spdValues is X Xᵀ/n + I for every n x n matrix X of normal draws over
// the last two dims of shape: symmetric, with eigenvalues in [1, ~5], so a
// Cholesky factor exists and stays well conditioned when a finite
// difference nudges one element.
func spdValues(shape Shape, seed uint64) []float64 {
	out := make([]float64, shape.Numel())
	if len(shape) < 2 || shape[len(shape)-1] != shape[len(shape)-2] {
		return out // the op's shape check names the non-square shape
	}
	n := shape[len(shape)-1]
	for b := 0; b*n*n < len(out); b++ {
		base := b * n * n
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				s := 0.0
				for k := 0; k < n; k++ {
					s += numerics.PhiloxNormal(seed, 0, base+i*n+k) * numerics.PhiloxNormal(seed, 0, base+j*n+k)
				}
				s /= float64(n)
				if i == j {
					s++
				}
				out[base+i*n+j], out[base+j*n+i] = s, s
			}
		}
	}
	return out
}

// Make builds the input on dev: contiguous, or, when Strided, a view whose
// every stride is doubled (so it is non-contiguous for any rank >= 1).
func (g Gen) Make(seed uint64, dev Device) *Tensor {
	if g.Absent {
		return nil
	}
	if g.DType.IsComplex() {
		return fromPairs(g.Pairs().Make(seed, dev))
	}
	return MakeLayout(g.DType, g.Shape, g.Generate(seed), g.Strided, dev)
}

// Pairs is the generator of a complex input's real pairs (shape S+[2] of
// its real dtype), what the vector files hold; any other Gen is itself.
func (g Gen) Pairs() Gen {
	if !g.DType.IsComplex() {
		return g
	}
	p := g
	p.DType, p.Shape = g.DType.RealDType(), append(g.Shape.Clone(), 2)
	return p
}

// MakeLayout builds a tensor from logical values, optionally as a
// non-contiguous view with doubled strides.
func MakeLayout(d DType, shape Shape, vals []float64, strided bool, dev Device) *Tensor {
	if !strided || len(shape) == 0 {
		return FromFloat64s(d, shape, vals, dev)
	}
	strides := ContiguousStrides(shape)
	for i := range strides {
		strides[i] *= 2
	}
	storage := make([]float64, max(2*len(vals), 1))
	idx := make([]int, len(shape))
	for _, v := range vals {
		pos := 0
		for k := range idx {
			pos += idx[k] * strides[k]
		}
		storage[pos] = v
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	base := FromFloat64s(d, Shape{len(storage)}, storage, dev)
	if base.err != nil {
		return base
	}
	return NewView(base, shape, strides, 0)
}

// ResolvedAttrs is the sample's attributes with a fixed seed and offset for
// random ops, so the case is deterministic everywhere.
func (s Sample) ResolvedAttrs(def *OpDef) Attrs {
	a := s.Attrs.Clone()
	if def.Random {
		if _, ok := a["seed"]; !ok {
			a["seed"] = 1234
		}
		if _, ok := a["offset"]; !ok {
			a["offset"] = 0
		}
	}
	return a
}

// MakeInputs materialises every input of a sample on dev.
func (s Sample) MakeInputs(op string, dev Device) []*Tensor {
	out := make([]*Tensor, len(s.Inputs))
	for i, g := range s.Inputs {
		out[i] = g.Make(numerics.SampleSeed(op, s.Name, i), dev)
	}
	return out
}
