package backendtest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

// RunNarrowFirst checks that dev's compiled kernels are keyed by the
// dtypes they round to: each op's first all-f32 case runs right after the
// same call with its f32 inputs cast to bf16 and to f16. WebGPU holds
// f16 and bf16 in f32 words and rounds on store, so a kernel cached by
// the words' type alone would give the f32 call the narrow call's
// rounding (as the GPU bodies' did) - an error the samples' own order
// (f32 first) never shows.
func RunNarrowFirst(t *testing.T, dev core.Device) {
	dir := conformance.VectorsDir()
	for _, def := range conformance.OpsWithSamples() {
		t.Run(def.Name, func(t *testing.T) {
			v, err := conformance.LoadVectors(dir, def.Name)
			require.NoError(t, err, "reference vectors for %s (run `make vectors`)", def.Name)
			for _, c := range v.Cases {
				if !allF32Inputs(c, v) {
					continue
				}
				var s core.Sample
				for _, x := range def.Samples {
					if x.Name == c.Name {
						s = x
					}
				}
				for _, d := range []core.DType{core.BF16, core.F16} {
					narrowCall(t, dev, def, s, c, v, d)
				}
				checkCase(t, dev, def, s, c, v)
				return
			}
		})
	}
}

// allF32Inputs reports whether case c has inputs and every one it gives
// is an f32 tensor.
func allF32Inputs(c conformance.CaseSpec, v *conformance.Vectors) bool {
	given := 0
	for i, spec := range c.Inputs {
		if spec.Absent {
			continue
		}
		st, ok := v.Tensor(c.Name, "in", i)
		if !ok || st.DType != core.F32 {
			return false
		}
		given++
	}
	return given > 0
}

// narrowCall makes case c's call with its inputs cast to d, for the
// kernels it leaves compiled; its result and any refusal (an op that
// takes no d) do not matter.
func narrowCall(t *testing.T, dev core.Device, def *core.OpDef, s core.Sample, c conformance.CaseSpec, v *conformance.Vectors, d core.DType) {
	t.Helper()
	_, ins, attrs := caseCall(t, dev, def, s, c, v)
	narrow := make([]*core.Tensor, len(ins))
	for i, x := range ins {
		if x != nil {
			narrow[i] = x.Detach().Cast(d)
			defer narrow[i].Release()
		}
	}
	outs, err := core.CallDef(def, narrow, attrs)
	if err == nil {
		for _, o := range outs {
			if o != nil {
				o.Release()
			}
		}
	}
}
