package ir

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A linear layer's bias gradient joins its weight gradient's product on
// WebGPU and the step still equals eager: 2-D and batched inputs (the
// gradient reshaped to rows), row counts that are and are not multiples of
// four, and widths the kernel cannot take (the node runs the two ops). A
// sum over the other axis (not a bias gradient) stays a sum.
func TestBiasGradientRidesOnTheWeightGradient(t *testing.T) {
	dev := webgpuOrSkip(t)
	for _, c := range []struct {
		x         []int
		out       int
		fusedRuns bool // the kernel takes the operands
	}{
		{[]int{12, 8}, 4, true},
		{[]int{10, 16}, 12, true},
		{[]int{3, 5, 8}, 8, true},
		{[]int{7, 8}, 6, false}, // 6 columns: no vec4 rows
	} {
		t.Run(fmt.Sprint(c.x, c.out), func(t *testing.T) {
			in := c.x[len(c.x)-1]
			x, w, b := randnOn(dev, 1, c.x...), randnOn(dev, 2, c.out, in), randnOn(dev, 3, c.out)
			w.SetRequiresGrad(true)
			b.SetRequiresGrad(true)
			step := func(in []*core.Tensor) ([]*core.Tensor, error) {
				y := c1("add", nil, c1("matmul", nil, in[0], c1("transpose", core.Attrs{"dim0": 0, "dim1": 1}, in[1])), in[2])
				last := len(y.Shape()) - 1
				loss := c1("add", nil, c1("sum", nil, c1("square", nil, y)), c1("sum", nil, c1("sum", core.Attrs{"axes": []int{last}}, y)))
				grads, err := core.Gradients(loss, in[1:])
				return append([]*core.Tensor{loss}, grads...), err
			}
			g, err := Trace(step, x, w, b)
			require.NoError(t, err)
			_, err = g.OptimizeStats()
			require.NoError(t, err)
			rep, err := g.Fuse(dev)
			require.NoError(t, err)
			require.Equal(t, 1, rep.ColumnSums, "%s", g)
			x2, w2, b2 := randnOn(dev, 4, c.x...), randnOn(dev, 5, c.out, in), randnOn(dev, 6, c.out)
			w2.SetRequiresGrad(true)
			b2.SetRequiresGrad(true)
			var got []*core.Tensor
			fellBack := fallbacksDuring(func() { got = replay(t, g, x2, w2, b2) })
			require.Equal(t, c.fusedRuns, fellBack == 0, "fused nodes that ran as their original ops: %d", fellBack)
			want, err := step([]*core.Tensor{x2, w2, b2})
			require.NoError(t, err)
			requireClose(t, want, got, 1e-4)
		})
	}
}
