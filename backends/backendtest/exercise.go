package backendtest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

// RunExercise calls every op of the suite on dev with the reference
// vectors' inputs, forward and (for differentiable cases) backward, and
// requires each call to succeed, without comparing values. It is for a
// device whose results are not real: the CUDA backend's compile-only mode
// generates and compiles every kernel the suite needs on a machine
// without a GPU, and this is what drives it. Since such a device reads
// back zeros, an op may refuse what it reads (a zero quantisation scale, an
// empty index range): valueErr says which errors are of that kind and are
// skipped rather than failed.
func RunExercise(t *testing.T, dev core.Device, valueErr func(error) bool) {
	// Ops compile their kernels in parallel (NVRTC is thread-safe).
	eachOpVectors(t, true, func(t *testing.T, def *core.OpDef, v *conformance.Vectors, samples map[string]core.Sample) {
		for _, c := range v.Cases {
			t.Run(c.Name, func(t *testing.T) { exerciseCase(t, dev, def, samples[c.Name], c, v, valueErr) })
		}
	})
}

func exerciseCase(t *testing.T, dev core.Device, def *core.OpDef, s core.Sample, c conformance.CaseSpec, v *conformance.Vectors, valueErr func(error) bool) {
	_, ins, attrs := caseCall(t, dev, def, s, c, v)
	outs, err := core.CallDef(def, ins, attrs)
	if err != nil && valueErr(err) {
		t.Skipf("%s refused the values it read back on %s: %v", def.Name, dev, err)
	}
	require.NoError(t, err)
	outs = conformance.FiledOutputs(c, outs)
	if !c.Grad {
		return
	}
	var loss *core.Tensor
	for j, o := range outs {
		if up, ok := v.Tensor(c.Name, "up", j); ok && o.RequiresGrad() {
			term := core.Call1("sum", nil, core.Call1("mul", nil, o, up.ToTensor(dev)))
			if loss == nil {
				loss = term
			} else {
				loss = loss.Add(term)
			}
		}
	}
	if loss == nil {
		return
	}
	if err := loss.Backward(); err != nil && valueErr(err) {
		t.Skipf("%s's backward refused the values it read back on %s: %v", def.Name, dev, err)
	} else {
		require.NoError(t, err)
	}
}
