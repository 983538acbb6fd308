package backendtest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
	"github.com/webtensor/webtensor/core/safetensors"
)

// RunVectors checks every op that has samples against its reference vector
// file on dev: outputs within the op's tolerance, and, for differentiable
// cases, the gradients of sum(out*upstream). A missing or stale vector file
// fails the op.
func RunVectors(t *testing.T, dev core.Device) {
	eachOpVectors(t, false, func(t *testing.T, def *core.OpDef, v *conformance.Vectors, samples map[string]core.Sample) {
		require.Equal(t, conformance.Key(def), v.Key, "vectors of %s are stale: its samples changed; run `make vectors`", def.Name)
		for _, c := range v.Cases {
			t.Run(c.Name, func(t *testing.T) { checkCase(t, dev, def, samples[c.Name], c, v) })
		}
	})
}

// eachOpVectors runs f, in a subtest named for the op (parallel ones
// where parallel), for every op that has samples, with its reference
// vector file and its samples by name.
func eachOpVectors(t *testing.T, parallel bool, f func(t *testing.T, def *core.OpDef, v *conformance.Vectors, samples map[string]core.Sample)) {
	dir := conformance.VectorsDir()
	for _, def := range conformance.OpsWithSamples() {
		t.Run(def.Name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			v, err := conformance.LoadVectors(dir, def.Name)
			require.NoError(t, err, "reference vectors for %s (run `make vectors`)", def.Name)
			samples := map[string]core.Sample{}
			for _, s := range def.Samples {
				samples[s.Name] = s
			}
			f(t, def, v, samples)
		})
	}
}

// caseCall is the call of case c (sample s of def) on dev, as RunVectors
// and RunExercise both make it: the vector file's inputs laid out as the
// case says (requiring grad where it is differentiable) and the sample's
// attributes. It skips a case whose dtypes dev cannot store. leaves are the
// tensors built from the file (gradients arrive there), ins what the op
// gets: a complex input is view_as_complex of its leaf of pairs.
func caseCall(t *testing.T, dev core.Device, def *core.OpDef, s core.Sample, c conformance.CaseSpec, v *conformance.Vectors) (leaves, ins []*core.Tensor, attrs core.Attrs) {
	t.Helper()
	skipUnstorable(t, dev, c, v)
	leaves = make([]*core.Tensor, len(c.Inputs))
	for i, spec := range c.Inputs {
		if spec.Absent {
			continue
		}
		st, ok := v.Tensor(c.Name, "in", i)
		require.True(t, ok, "input %d missing from vector file", i)
		leaves[i] = core.MakeLayout(st.DType, st.Shape, conformance.Values(st), spec.Strided, dev)
		require.NoError(t, leaves[i].Err())
		if c.Grad && spec.Grad {
			leaves[i].SetRequiresGrad(true)
		}
	}
	ins = conformance.CallInputs(c, leaves)
	attrs = s.ResolvedAttrs(def)
	if hasAttr(def, "device") && attrs.String("device") == "" {
		attrs["device"] = dev.String() // creation ops: make them on dev, not the default device
	}
	return leaves, ins, attrs
}

func checkCase(t *testing.T, dev core.Device, def *core.OpDef, s core.Sample, c conformance.CaseSpec, v *conformance.Vectors) {
	leaves, ins, attrs := caseCall(t, dev, def, s, c, v)
	before := fallbacksOf(dev, def.Name)
	outs, err := core.CallDef(def, ins, attrs)
	require.NoError(t, err)
	if def.GPUBody != nil && dev.Kind != "cpu" {
		require.Equal(t, before, fallbacksOf(dev, def.Name), "%s ran on the CPU behind %v: its kernel derived from GPUBody did not", def.Name, dev)
	}
	require.Len(t, outs, len(c.Outputs))
	outs = conformance.FiledOutputs(c, outs)
	for j, o := range outs {
		require.Equal(t, dev, o.Device(), "output %d is on the wrong device", j)
	}
	var loss *core.Tensor
	for j, o := range outs {
		want, ok := v.Tensor(c.Name, "out", j)
		require.True(t, ok, "output %d missing from vector file", j)
		compare(t, fmt.Sprintf("output %d", j), o, want, def.Tolerance(want.DType))
		if up, ok := v.Tensor(c.Name, "up", j); ok && o.RequiresGrad() {
			term := core.Call1("sum", nil, core.Call1("mul", nil, o, up.ToTensor(dev)))
			if loss == nil {
				loss = term
			} else {
				loss = loss.Add(term)
			}
		}
	}
	if !c.Grad {
		return
	}
	require.NotNil(t, loss, "differentiable case but no output requires grad")
	require.NoError(t, loss.Backward())
	for i, spec := range c.Inputs {
		if !spec.Grad {
			continue
		}
		want, ok := v.Tensor(c.Name, "grad", i)
		require.True(t, ok, "gradient %d missing from vector file", i)
		g := leaves[i].Grad()
		if g == nil {
			g = core.ZerosLike(leaves[i])
		}
		tol := def.Tolerance(want.DType)
		tol.Atol *= kernelkit.GradTolScale
		tol.Rtol *= kernelkit.GradTolScale
		compare(t, fmt.Sprintf("gradient of input %d", i), g, want, tol)
	}
}

// compare checks dtype, shape and values; integers and bools must be exact.
func compare(t *testing.T, what string, got *core.Tensor, want safetensors.Tensor, tol core.Tol) {
	t.Helper()
	require.NoError(t, got.Err(), what)
	assert.Equal(t, want.DType, got.DType(), "%s dtype", what)
	if !assert.Equal(t, []int(want.Shape), []int(got.Shape()), "%s shape", what) {
		return
	}
	gv, err := got.Float64s()
	require.NoError(t, err, what)
	wv := conformance.Values(want)
	if !want.DType.IsFloat() {
		tol = core.Tol{}
	}
	bad, worst := 0, -1
	for i := range wv {
		if !tol.Close(gv[i], wv[i]) {
			if bad == 0 {
				worst = i
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ from the reference beyond atol=%g rtol=%g; first at flat index %d: got %v, want %v",
			what, bad, len(wv), tol.Atol, tol.Rtol, worst, gv[worst], wv[worst])
	}
}

// skipUnstorable skips a case whose inputs or outputs the device cannot
// hold (f64 on WebGPU, or i64 values beyond i32 there), saying which.
func skipUnstorable(t *testing.T, dev core.Device, c conformance.CaseSpec, v *conformance.Vectors) {
	b, err := core.BackendFor(dev)
	require.NoError(t, err)
	if why := conformance.Unstorable(b.Capabilities(), c, v); why != "" {
		t.Skipf("%s holds %s", dev, why)
	}
}

func hasAttr(def *core.OpDef, name string) bool {
	for _, a := range def.Attrs {
		if a.Name == name {
			return true
		}
	}
	return false
}

// fallbacksOf is how many times op has run on the CPU behind dev so far.
func fallbacksOf(dev core.Device, op string) int64 {
	var n int64
	for _, f := range core.Fallbacks() {
		if f.Op == op && f.Device == dev.String() {
			n += f.Count
		}
	}
	return n
}
