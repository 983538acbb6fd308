package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// The assembly program loop gives the Go loops' bits for every op it
// runs, on every instruction set, over lengths around its 64-element chunk
// and its call size, with NaN, infinities, signed zeros and subnormals in
// the operands; constants fold, and roots that are shared, leaves or
// constants are copied into their outputs.
func TestFusedAsmLoopMatchesGoLoops(t *testing.T) {
	leaf := func(i int) *fusion.Expr { return &fusion.Expr{Arg: i} }
	op := func(name string, args ...*fusion.Expr) *fusion.Expr { return &fusion.Expr{Op: name, Args: args} }
	konst := func(v float64) *fusion.Expr { return &fusion.Expr{Op: fusion.Const, Value: v} }
	x, y, z := leaf(0), leaf(1), leaf(2)
	scale := op("sqrt", op("sub", konst(1), konst(0.999))) // folds to one value
	m := op("add", x, op("mul", op("sub", y, x), konst(0.1)))
	v := op("maximum", op("mul", z, konst(0.999)), op("mul", y, y))
	upd := op("sub", x, op("div", op("mul", m, scale), op("add", op("sqrt", v), konst(1e-8))))
	trees := []*fusion.Expr{upd, m, v, op("neg", op("maximum", y, x)), op("div", y, x), m, z, scale, konst(math.Copysign(0, -1))}
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.Copysign(0, -1)), 0, 1e-40, -3.5, 2, 1}
	for _, n := range []int{1, 63, 64, 65, 130, fusedBlock, fusedBlock + 64*3 + 5, 5 * fusedBlock} {
		ins := make([]*core.Tensor, 3)
		for k := range ins {
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = float32(math.Sin(float64(i*(k+3)+k))) * 4
				if (i+k)%5 == 0 {
					vals[i] = special[(i/5+k)%len(special)]
				}
			}
			ins[k] = core.FromSlice(vals, core.Shape{n})
		}
		run := func() [][]float32 {
			outs, err := (&Backend{}).FuseMaps(trees, ins, core.Shape{n}, core.F32)
			require.NoError(t, err)
			got := make([][]float32, len(outs))
			for k, o := range outs {
				got[k], err = o.Float32s()
				require.NoError(t, err)
			}
			return got
		}
		var want [][]float32
		withoutSIMD(func() { want = run() })
		withLevels(t, func(t *testing.T) {
			got := run()
			for k := range want {
				for i := range want[k] {
					if !sameF32(got[k][i], want[k][i]) {
						t.Fatalf("n %d: output %d element %d: %v, the Go loop %v", n, k, i, got[k][i], want[k][i])
					}
				}
			}
		})
	}
}
