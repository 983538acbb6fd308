package backendtest

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// maxProbes bounds the finite-difference probes per input; larger inputs
// are probed at evenly spaced elements.
const maxProbes = 24

// RunGradCheck compares every differentiable sample's analytic gradients
// (float inputs promoted to f64) with central finite differences of
// sum(out*upstream).
func RunGradCheck(t *testing.T, dev core.Device) {
	b, err := core.BackendFor(dev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.Capabilities().DTypes, core.F64) {
		t.Skipf("finite differences need f64, which %s does not hold; its gradients are checked against the reference gradients by RunVectors", dev)
	}
	for _, def := range conformance.OpsWithSamples() {
		if !def.Differentiable() {
			continue
		}
		t.Run(def.Name, func(t *testing.T) {
			for _, s := range def.Samples {
				spec := conformance.SpecOf(def, s)
				if !spec.Grad {
					continue
				}
				t.Run(s.Name, func(t *testing.T) { gradCheck(t, dev, def, s, spec) })
			}
		})
	}
}

func gradCheck(t *testing.T, dev core.Device, def *core.OpDef, s core.Sample, spec conformance.CaseSpec) {
	for _, g := range s.Inputs {
		if g.DType.IsComplex() {
			// RunComplex checks complex gradients by finite differences on the
			// parts; here the reference gradients (PyTorch's) check the case.
			t.Logf("complex input: the reference gradients check this case (and RunComplex)")
			return
		}
	}
	attrs := s.ResolvedAttrs(def)
	vals := make([][]float64, len(s.Inputs))
	for i, g := range s.Inputs {
		if !g.Absent {
			// Round through the sample's dtype so the f64 inputs are the
			// same values the f32 case sees.
			vals[i] = core.DecodeF64(g.DType, core.EncodeF64(g.DType, g.Generate(numerics.SampleSeed(def.Name, s.Name, i))))
		}
	}
	build := func(grad bool) []*core.Tensor {
		ins := make([]*core.Tensor, len(s.Inputs))
		for i, g := range s.Inputs {
			if g.Absent {
				continue
			}
			d := g.DType
			if d.IsFloat() {
				d = core.F64
			}
			ins[i] = core.MakeLayout(d, g.Shape, vals[i], g.Strided, dev)
			if grad && spec.Inputs[i].Grad {
				ins[i].SetRequiresGrad(true)
			}
		}
		return ins
	}
	var ups []*core.Tensor
	loss := func(ins []*core.Tensor) *core.Tensor {
		outs, err := core.CallDef(def, ins, attrs)
		require.NoError(t, err)
		var total *core.Tensor
		for j, o := range outs {
			if !o.DType().IsFloat() {
				continue
			}
			if len(ups) <= j {
				ups = append(ups, make([]*core.Tensor, j+1-len(ups))...)
			}
			if ups[j] == nil {
				g := core.Gen{Shape: o.Shape(), DType: core.F64}
				ups[j] = core.FromFloat64s(core.F64, o.Shape(), g.Generate(numerics.SampleSeed(def.Name, s.Name, 100+j)), dev)
			}
			term := core.Call1("sum", nil, core.Call1("mul", nil, o.Cast(core.F64), ups[j]))
			if total == nil {
				total = term
			} else {
				total = total.Add(term)
			}
		}
		require.NotNil(t, total, "no floating-point output")
		return total
	}
	probe, err := core.CallDef(def, build(false), attrs)
	require.NoError(t, err)
	for j, o := range probe {
		if o.DType().IsComplex() {
			t.Logf("output %d is complex: the reference gradients check this case (and RunComplex)", j)
			return
		}
		if o.DType().IsFloat() && o.DType() != core.F64 {
			t.Logf("output %d is %s whatever the input dtype: finite differences need f64 outputs, so only the reference gradients check this case", j, o.DType())
			return
		}
	}
	ins := build(true)
	l := loss(ins)
	require.NoError(t, l.Err())
	require.NoError(t, l.Backward())
	const eps = 1e-6
	for i := range s.Inputs {
		if !spec.Inputs[i].Grad {
			continue
		}
		var analytic []float64
		if g := ins[i].Grad(); g != nil {
			var err error
			analytic, err = g.Float64s()
			require.NoError(t, err)
		} else {
			analytic = make([]float64, len(vals[i]))
		}
		n := len(vals[i])
		step := max(1, n/maxProbes)
		for k := 0; k < n; k += step {
			orig := vals[i][k]
			vals[i][k] = orig + eps
			var lp, lm float64
			core.NoGrad(func() { lp, _ = loss(build(false)).Item() })
			vals[i][k] = orig - eps
			core.NoGrad(func() { lm, _ = loss(build(false)).Item() })
			vals[i][k] = orig
			numeric := (lp - lm) / (2 * eps)
			tol := 1e-5 + 1e-4*math.Abs(numeric)
			if math.Abs(analytic[k]-numeric) > tol {
				t.Errorf("input %d element %d: analytic gradient %.8g, finite difference %.8g", i, k, analytic[k], numeric)
			}
		}
	}
}
