//go:build !js

package webgpu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// The transposed layouts a linear layer makes (x @ W^T forward, x^T @ g for
// the weight gradient) take their own vec4 kernels; each must match the CPU
// on ragged, batched and broadcast shapes, plain and through an epilogue.

// layoutCase is a product whose operands are views of dense buffers: NT
// reads b from a dense [batchB..., n, k] (W), TN reads a from a dense
// [batchA..., k, m] (x); off elements precede each operand's data.
type layoutCase struct {
	layout         vecLayout // the layout the operands make
	batchA, batchB []int
	m, k, n, off   int
}

func (c layoutCase) String() string {
	return fmt.Sprintf("%v@%v m%d k%d n%d off%d", c.batchA, c.batchB, c.m, c.k, c.n, c.off)
}

// view places a [batch..., rows, cols] operand in a fresh buffer with the
// matrix stored transposed when transposed is set, on device dev.
func (c layoutCase) view(batch []int, rows, cols int, transposed bool, seed uint64, dev core.Device) *core.Tensor {
	n := rows * cols
	strides := []int{cols, 1}
	if transposed {
		strides = []int{1, rows}
	}
	for i := len(batch) - 1; i >= 0; i-- {
		strides = append([]int{n}, strides...)
		n *= batch[i]
	}
	vals := core.Gen{Shape: core.Shape{c.off + n}, DType: core.F64}.Generate(seed)
	flat := core.FromFloat64s(core.F32, core.Shape{c.off + n}, vals).To(dev)
	shape := append(append(core.Shape{}, batch...), rows, cols)
	return core.NewView(flat, shape, strides, c.off)
}

func (c layoutCase) operands(dev core.Device) (a, b *core.Tensor) {
	a = c.view(c.batchA, c.m, c.k, c.layout == layoutTN, 1, dev)
	b = c.view(c.batchB, c.k, c.n, c.layout == layoutNT, 2, dev)
	return a, b
}

var layoutCases = []layoutCase{
	{layout: layoutNT, m: 37, k: 20, n: 29},
	{layout: layoutNT, m: 64, k: 64, n: 64, off: 8},
	{layout: layoutNT, batchA: []int{3}, batchB: []int{3}, m: 17, k: 12, n: 9},
	{layout: layoutNT, batchA: []int{2, 1}, batchB: []int{3}, m: 5, k: 8, n: 16, off: 4},
	{layout: layoutNT, batchA: []int{4}, m: 10, k: 16, n: 12}, // b shared: a's batch folds into rows
	{layout: layoutTN, m: 36, k: 23, n: 20},
	{layout: layoutTN, m: 64, k: 64, n: 64, off: 4},
	{layout: layoutTN, batchA: []int{3}, batchB: []int{3}, m: 12, k: 9, n: 28},
	{layout: layoutTN, batchA: []int{1}, batchB: []int{2, 3}, m: 20, k: 32, n: 4, off: 8},
	// Misaligned: no vec4 kernel fits; the named variant falls back.
	{layout: layoutNone, m: 9, k: 21, n: 7}, // NT with k not a multiple of 4
	{layout: layoutNone, m: 8, k: 16, n: 8, off: 2},
}

// misaligned cases are built as NT (a contiguous, b transposed).
func (c layoutCase) built() layoutCase {
	if c.layout == layoutNone {
		c.layout = layoutNT
	}
	return c
}

func TestTransposedLayoutsAreDetected(t *testing.T) {
	for _, c := range layoutCases {
		a, b := c.built().operands(core.Device{Kind: "cpu"})
		d, err := oprules.PlanMatmul(a.Shape(), b.Shape())
		require.NoError(t, err)
		assert.Equal(t, c.layout, vecLayoutOf(a, b, d.Batch, d.M, d.K, d.N), "%v", c)
	}
	// A dense product stays on the regblock4 family.
	a := core.FromFloat64s(core.F32, core.Shape{8, 12}, make([]float64, 96))
	b := core.FromFloat64s(core.F32, core.Shape{12, 4}, make([]float64, 48))
	assert.Equal(t, layoutNN, vecLayoutOf(a, b, nil, 8, 12, 4))
}

// Every candidate of a layout, named directly, matches the CPU with and
// without an epilogue (x0 * 0.5 + bias, the bias broadcast over rows).
func TestTransposedLayoutVariantsMatchCPU(t *testing.T) {
	g := gpuBackend(t)
	for _, c := range layoutCases {
		ac, bc := c.built().operands(core.Device{Kind: "cpu"})
		ag, bg := c.built().operands(testGPU)
		want := ac.Contiguous().Matmul(bc.Contiguous())
		bias := core.FromFloat64s(core.F32, core.Shape{c.n}, core.Gen{Shape: core.Shape{c.n}, DType: core.F64}.Generate(3))
		half := core.FromFloat64s(core.F32, core.Shape{1}, []float64{0.5})
		wantEp := want.Mul(half).Add(bias)
		ep := &epilogue{expr: "x0 * 0.5 + x1", extras: []*core.Tensor{bias.To(testGPU)}}
		variants := []string{variantNT8, variantNT16, variantTN8, variantTN16, variantRegBlock}
		if vc, ok := vecCandidates[c.layout]; ok {
			variants = vc.variants
		}
		for _, v := range variants {
			got, err := matmulWith(g, ag, bg, v, nil)
			require.NoError(t, err, "%s %v", v, c)
			sameValues(t, got, want, 1e-4)
			got, err = matmulWith(g, ag, bg, v, ep)
			require.NoError(t, err, "%s %v with epilogue", v, c)
			sameValues(t, got, wantEp, 1e-4)
		}
	}
}

// The tuner times the layout's candidates under the layout's own class, so
// decisions made before the NT and TN kernels existed are not reused.
func TestTunerTimesTransposedLayouts(t *testing.T) {
	g := gpuBackend(t)
	for _, c := range []layoutCase{{layout: layoutNT, m: 96, k: 96, n: 96}, {layout: layoutTN, m: 96, k: 96, n: 96}} {
		ac, bc := c.operands(core.Device{Kind: "cpu"})
		ag, bg := c.operands(testGPU)
		sameValues(t, ag.Matmul(bg), ac.Contiguous().Matmul(bc.Contiguous()), 1e-4)
		require.NoError(t, g.Sync())
		key := "matmul|" + matmulClass(1, 96, 96, 96) + vecCandidates[c.layout].suffix
		rec, ok := g.Tuning()[key]
		require.True(t, ok, "%s not timed: %v", key, g.Tuning())
		assert.Len(t, rec.Timings, 4)
		assert.Contains(t, vecCandidates[c.layout].variants, rec.Variant)
	}
}

// matmulWith runs a @ b with variant v and epilogue ep (nil: plain).
func matmulWith(g *Backend, a, b *core.Tensor, v string, ep *epilogue) (*core.Tensor, error) {
	d, err := oprules.PlanMatmul(a.Shape(), b.Shape())
	if err != nil {
		return nil, err
	}
	out, err := core.Empty(g, d.Out, core.F32)
	if err != nil {
		return nil, err
	}
	return out, g.matmulEpilogue(a, b, out, d.Batch, d.M, d.K, d.N, v, ep)
}
