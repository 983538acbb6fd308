package webgpu_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A weight gradient's product x^T @ g returns g's column sums beside it,
// equal to matmul and sum on the CPU: K a multiple of 4 and not (the
// remainder loop), one block of columns and several, and a long K whose
// sum needs the compensation. Operands outside the TN layout are refused,
// so the caller runs the two ops.
func TestMatmulColumnSumsMatchCPU(t *testing.T) {
	b := needGPU(t)
	for _, c := range []struct {
		name    string
		k, m, n int
	}{
		{"square", 64, 64, 64},
		{"ragged k", 37, 16, 8},
		{"wide", 32, 8, 96},
		{"long k", 4000, 64, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			xv, gv := randn(core.Shape{c.k, c.m}, 1), randn(core.Shape{c.k, c.n}, 2)
			for i := range gv { // a large common part: plain f32 sums drift
				gv[i] += 1000
			}
			x := core.FromFloat64s(core.F32, core.Shape{c.k, c.m}, xv, gpu)
			g := core.FromFloat64s(core.F32, core.Shape{c.k, c.n}, gv, gpu)
			prod, sums, err := b.MatmulColumnSums(x.Transpose(), g)
			require.NoError(t, err)
			xc := core.FromFloat64s(core.F32, core.Shape{c.k, c.m}, xv, core.CPU)
			gc := core.FromFloat64s(core.F32, core.Shape{c.k, c.n}, gv, core.CPU)
			closeTo(t, prod.To(core.CPU), core.Call1("matmul", nil, xc.Transpose(), gc), 1e-3)
			closeTo(t, sums.To(core.CPU), core.Call1("sum", core.Attrs{"axes": []int{0}}, gc), 1e-5)
		})
	}
	x := core.FromFloat64s(core.F32, core.Shape{8, 8}, randn(core.Shape{8, 8}, 3), gpu)
	_, _, err := b.MatmulColumnSums(x, x) // NN, not TN
	assert.ErrorContains(t, err, "x^T @ g")
	_, _, err = b.MatmulColumnSums(x.Transpose(), core.FromFloat64s(core.F32, core.Shape{4, 8}, randn(core.Shape{4, 8}, 4), gpu))
	assert.ErrorContains(t, err, "inner sizes differ")
}
