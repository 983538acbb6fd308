package parallel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/nn"
)

// The block's analysis against a count by hand: its FLOPs, parameters, the
// K and V sequence parallel gathers, and Megatron's two all-reduces.
func TestAnalyzeBlock(t *testing.T) {
	b := Block{Batch: 2, Seq: 8, Dim: 16, Heads: 2, Hidden: 32}
	m, err := BlockModel(b)
	require.NoError(t, err)
	rows, d, f := float64(b.Batch*b.Seq), float64(b.Dim), float64(b.Hidden)
	products := 2 * rows * (d*d + d*2*d + d*d + d*f + f*d)
	attn := float64(b.Batch*b.Heads*b.Seq*b.Seq) * (4*d/float64(b.Heads) + 5)
	elementwise := rows * (d + f + d) // two residual adds and the ReLU
	assert.InDelta(t, products+attn+elementwise, m.FLOPs, 1e-9)
	assert.Equal(t, 4*(d*d+2*d*d+d*d+2*d*f), m.ParamBytes)
	assert.Equal(t, 2, m.Batch)
	assert.Equal(t, 8, m.Seq)
	require.Len(t, m.Exchanges, 1)
	assert.Equal(t, 4*2*rows*d, m.Exchanges[0].Bytes, "the whole sequence's K and V")
	assert.Equal(t, []float64{4 * rows * d, 4 * rows * d}, m.Tensor.AllReduceBytes, "attention's and the MLP's")
	assert.Equal(t, m.ParamBytes, m.Tensor.ShardedParamBytes)
	assert.Equal(t, []int{2 * b.Dim, b.Dim, b.Heads, b.Hidden}, m.Tensor.Widths)
	assert.Empty(t, m.Tensor.fitsOrEmpty(2))
	assert.Contains(t, m.Tensor.fitsOrEmpty(3), "does not divide over 3 devices")
}

// nn's encoder layer in training mode computes attention as products of
// activations (q @ k^T, p @ v), which sequence parallel must gather, and
// gathers nothing under tensor parallel (its norms read the all-reduced
// sums); its parameters are nn's.
func TestAnalyzeEncoderLayer(t *testing.T) {
	core.ManualSeed(1)
	l, err := nn.NewTransformerEncoderLayer(16, 2, 32, nn.WithBatchFirst())
	require.NoError(t, err)
	x := core.Call1("randn", core.Attrs{"shape": []int{2, 8, 16}})
	g, err := ir.Trace(func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{l.Forward(in[0])}, nil }, x)
	require.NoError(t, err)
	m, err := Analyze(g)
	require.NoError(t, err)
	params := 0.0
	for _, p := range l.Parameters() {
		params += float64(4 * p.Tensor().Shape().Numel())
	}
	assert.Equal(t, params, m.ParamBytes)
	assert.Len(t, m.Exchanges, 2)
	assert.Len(t, m.Tensor.AllReduceBytes, 2)
	assert.Zero(t, m.Tensor.GatherBytes)
	assert.Greater(t, m.FLOPs, 0.0)
}

// A graph that cannot be analysed says why.
func TestAnalyzeRefusesBadGraphs(t *testing.T) {
	_, err := Analyze(nil)
	assert.ErrorContains(t, err, "no inputs")
	g, err := ir.Trace(func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{in[0].ReLU()}, nil },
		core.FromSlice([]float32{1, 2}, core.Shape{2}))
	require.NoError(t, err)
	_, err = Analyze(g, 3)
	assert.ErrorContains(t, err, "parameter input 3, but the graph has 1 inputs")
	_, err = Analyze(g, 0)
	assert.ErrorContains(t, err, "input 0 is the batch")
	_, err = MLPModel(MLP{Rows: 4, Dims: []int{3}})
	assert.ErrorContains(t, err, "dims [3]")
}
