package webgpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// spmm with widths that take the four-features-per-thread kernel (and one
// that does not), empty rows, repeated columns, a long row and a dense
// operand at an offset, against the CPU - forward and the dense operand's
// gradient (the transposed product).
func TestSpmmFourWideMatchesCPU(t *testing.T) {
	needGPU(t)
	gpu := core.Device{Kind: "webgpu"}
	for seed, f := range []int{4, 8, 64, 12, 6, 32, 24} { // quads per thread: 1, 2, 8, 1, scalar, 8, 2
		rng := rand.New(rand.NewPCG(uint64(seed), 9))
		rows, cols := 50, 40
		ptr := []int64{0}
		var idx []int64
		for r := range rows {
			n := rng.IntN(5)
			if r == 7 {
				n = 300 // a long row
			}
			for range n {
				idx = append(idx, int64(rng.IntN(cols)))
			}
			ptr = append(ptr, int64(len(idx)))
		}
		vals := randn(core.Shape{len(idx)}, uint64(seed))
		dense := randn(core.Shape{cols + 1, f}, uint64(seed+10))
		run := func(dev core.Device) (*core.Tensor, *core.Tensor) {
			ip := core.FromSlice(ptr, core.Shape{len(ptr)}, dev)
			ix := core.FromSlice(idx, core.Shape{len(idx)}, dev)
			v := core.FromFloat64s(core.F32, core.Shape{len(idx)}, vals, dev)
			full := core.FromFloat64s(core.F32, core.Shape{cols + 1, f}, dense, dev)
			// Rows 1.. of full: an offset of f elements (a multiple of 4 when f is).
			d := core.Call1("slice", core.Attrs{"axis": 0, "start": 1, "stop": cols + 1}, full).Detach().SetRequiresGrad(true)
			out := core.Call1("spmm", nil, ip, ix, v, d)
			require.NoError(t, core.Call1("sum", nil, core.Call1("square", nil, out)).Backward())
			return out, d.Grad()
		}
		gOut, gGrad := run(gpu)
		cOut, cGrad := run(core.CPU)
		closeTo(t, gOut.To(core.CPU), cOut, 1e-5)
		closeTo(t, gGrad.To(core.CPU), cGrad, 1e-4)
	}
}
