package backendtest

import (
	"testing"

	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

// RunNarrowFirst checks that dev's compiled kernels are keyed by the
// dtypes they round or wrap to: each op's first case whose inputs are all
// f32 (all i32, all u32) runs right after the same call with its inputs
// cast to bf16 and f16 (i8 and i16, u8 and u16). WebGPU holds these in
// 32-bit words and narrows on store, so a kernel cached by the words' type
// alone would give the wide call the narrow call's rounding (as the GPU
// bodies' did) - an error the samples' own order (wide first) never shows.
func RunNarrowFirst(t *testing.T, dev core.Device) {
	eachOpVectors(t, false, func(t *testing.T, def *core.OpDef, v *conformance.Vectors, samples map[string]core.Sample) {
		done := map[core.DType]bool{}
		for _, c := range v.Cases {
			wide := sharedInputDType(c, v)
			if narrower[wide] == nil || done[wide] {
				continue
			}
			done[wide] = true
			t.Run(c.Name, func(t *testing.T) {
				for _, d := range narrower[wide] {
					narrowCall(t, dev, def, samples[c.Name], c, v, d)
				}
				checkCase(t, dev, def, samples[c.Name], c, v)
			})
		}
	})
}

// narrower are the dtypes WebGPU holds in the same 32-bit words as each
// key, narrowed on store.
var narrower = map[core.DType][]core.DType{
	core.F32: {core.BF16, core.F16},
	core.I32: {core.I8, core.I16},
	core.U32: {core.U8, core.U16},
}

// sharedInputDType is the dtype of every input case c gives, or Invalid
// when they differ or there are none.
func sharedInputDType(c conformance.CaseSpec, v *conformance.Vectors) core.DType {
	d := core.Invalid
	for i, spec := range c.Inputs {
		if spec.Absent {
			continue
		}
		st, ok := v.Tensor(c.Name, "in", i)
		if !ok || d != core.Invalid && st.DType != d {
			return core.Invalid
		}
		d = st.DType
	}
	return d
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
