package auto

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// quantModel is a small MLP classifier whose labels on the validation set
// are its own f32 predictions, so accuracy measures how far quantisation
// moved it. Layer 2 reads a dead unit (layer 0's row 0 is never positive)
// through a large weight in every row: it costs nothing in f32, but int8
// with one scale per row rounds the row's other weights to zero, which
// breaks the model, while bf16 keeps every weight's own exponent.
func quantModel(t *testing.T) (*nn.Sequential, func() (float64, error)) {
	t.Helper()
	core.ManualSeed(21)
	l0, err := nn.NewLinear(16, 64)
	require.NoError(t, err)
	l2, err := nn.NewLinear(64, 64)
	require.NoError(t, err)
	l4, err := nn.NewLinear(64, 4)
	require.NoError(t, err)
	w0, err := l0.Weight.Tensor().Float32s()
	require.NoError(t, err)
	b0, err := l0.Bias.Tensor().Float32s()
	require.NoError(t, err)
	clear(w0[:16])
	b0[0] = -100
	require.NoError(t, l0.Weight.Set(core.FromSlice(w0, core.Shape{64, 16})))
	require.NoError(t, l0.Bias.Set(core.FromSlice(b0, core.Shape{64})))
	w, err := l2.Weight.Tensor().Float32s()
	require.NoError(t, err)
	for r := range 64 {
		w[r*64] = 40
	}
	require.NoError(t, l2.Weight.Set(core.FromSlice(w, core.Shape{64, 64})))
	m, err := nn.NewSequential(l0, &nn.ReLU{}, l2, &nn.ReLU{}, l4)
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(5))
	x := make([]float32, 512*16)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	val := core.FromSlice(x, core.Shape{512, 16})
	predict := func() ([]int64, error) {
		p, err := core.Call1("argmax", core.Attrs{"axis": 1}, m.Forward(val)).Int64s()
		return p, err
	}
	labels, err := predict()
	require.NoError(t, err)
	return m, func() (float64, error) {
		p, err := predict()
		if err != nil {
			return 0, err
		}
		hit := 0
		for i := range p {
			if p[i] == labels[i] {
				hit++
			}
		}
		return float64(hit) / float64(len(p)), nil
	}
}

// The shipped quant policy quantises every layer it can to int8 while
// validation accuracy stays >= 98%; the layer whose int8 breaks it is
// rejected and then kept in bf16. Rolling a layer back restores its
// weights exactly.
func TestQuantAgentKeepsAccuracy(t *testing.T) {
	m, acc := quantModel(t)
	fw, err := Open(t.TempDir(), DefaultConfig())
	require.NoError(t, err)
	pol := loadPolicy(t, "plugins-wasm/policies/auto", "quant")
	a, err := NewQuantAgent(fw, pol, "mlp", m, AccuracyGuard(acc, 0.98))
	require.NoError(t, err)
	h0 := hash(t, fw)
	ds, err := a.Quantize()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"mlp.0": "int8", "mlp.2": "bf16", "mlp.4": "int8"}, a.Modes())
	var broke, kept []Decision
	for _, d := range ds {
		switch d.Verdict {
		case Rejected:
			broke = append(broke, d)
		case Kept:
			kept = append(kept, d)
			assert.True(t, d.Guard.OK)
			assert.GreaterOrEqual(t, d.Trial.Gain, 0.5)
		}
	}
	require.Len(t, broke, 1)
	assert.Equal(t, map[string]string{"quant.mlp.2": "int8"}, broke[0].Proposal.Change)
	assert.Less(t, broke[0].Guard.Metric, 0.98)
	require.Len(t, kept, 3)
	final, err := acc()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, final, 0.98)

	_, err = fw.Rollback(kept[0].ID)
	require.NoError(t, err)
	assert.Equal(t, h0, hash(t, fw), "rolling back the first layer undoes every later one, weights included")
	assert.Equal(t, map[string]string{"mlp.0": "f32", "mlp.2": "f32", "mlp.4": "f32"}, a.Modes())
	back, err := acc()
	require.NoError(t, err)
	assert.Equal(t, 1.0, back)
}
