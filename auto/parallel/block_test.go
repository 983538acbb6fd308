package parallel

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func randomBlock(b Block, seed int64) (x, y []float32, ws [][]float32) {
	rng := rand.New(rand.NewSource(seed))
	r := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		return v
	}
	x, y = r(b.Batch*b.Seq*b.Dim, 1), r(b.Batch*b.Seq*b.Dim, 1)
	for _, s := range b.Shapes() {
		ws = append(ws, r(s.Numel(), 1/math.Sqrt(float64(s[0]))))
	}
	return
}

func checkStep(t *testing.T, name string, ref, s Step, err error) {
	t.Helper()
	require.NoError(t, err, name)
	assertClose(t, ref.Out, s.Out, name+" output")
	assert.InDelta(t, ref.Loss, s.Loss, 1e-4*ref.Loss, name+" loss")
	require.Len(t, s.Grads, len(ref.Grads), name)
	for l := range ref.Grads {
		assertClose(t, ref.Grads[l], s.Grads[l], name+" gradient")
	}
}

// A transformer block's step under sequence parallel (K and V gathered,
// their gradients reduce-scattered), tensor parallel (heads and the MLP's
// width split, two all-reduces each way) and data parallel on worker
// processes gives the single-device step's output, loss and every
// weight's gradient (f32, 1e-4 relative).
func TestBlockExecutorsMatchOneDevice(t *testing.T) {
	ws := workers(t, 3)
	b := Block{Batch: 2, Seq: 12, Dim: 16, Heads: 2, Hidden: 24}
	x, y, w := randomBlock(b, 5)
	ref, err := RunBlockSingle(b, core.Device{Kind: "cpu"}, x, y, w)
	require.NoError(t, err)
	s, err := RunBlockSP(b, ws[:2], x, y, w)
	checkStep(t, "sequence x2", ref, s, err)
	s, err = RunBlockSP(b, ws, x, y, w)
	checkStep(t, "sequence x3", ref, s, err)
	s, err = RunBlockTP(b, ws[:2], x, y, w)
	checkStep(t, "tensor x2", ref, s, err)
	s, err = RunBlockDP(b, ws[:2], x, y, w)
	checkStep(t, "data x2", ref, s, err)

	_, err = RunBlockTP(b, ws, x, y, w)
	assert.ErrorContains(t, err, "splits heads and the MLP's width, got 2 heads and width 24")
	_, err = RunBlockDP(b, ws, x, y, w)
	assert.ErrorContains(t, err, "batch divisible by it, got 2")
	_, err = RunBlockSP(Block{Batch: 2, Seq: 7, Dim: 16, Heads: 2, Hidden: 24}, ws[:2], x, y, w)
	assert.ErrorContains(t, err, "sequence length divisible by it, got 7")
}
