//go:build linux && cgo

package cuda_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Rows longer than a block keeps in registers (G*32 members) take the
// kernels' other path, which reads the row once per pass; the op suite's
// rows are all short, so this checks that path against the CPU.
func TestLongRowsMatchCPU(t *testing.T) {
	needEmulator(t)
	x := core.Call1("randn", core.Attrs{"shape": []int{3, 10000}, "seed": 5})
	w := core.Call1("randn", core.Attrs{"shape": []int{10000}, "seed": 6})
	cases := map[string]func(x, w *core.Tensor) *core.Tensor{
		"softmax":     func(x, _ *core.Tensor) *core.Tensor { return core.Call1("softmax", core.Attrs{"axis": -1}, x) },
		"log_softmax": func(x, _ *core.Tensor) *core.Tensor { return core.Call1("log_softmax", core.Attrs{"axis": -1}, x) },
		"layer_norm": func(x, w *core.Tensor) *core.Tensor {
			return core.Call1("layer_norm", core.Attrs{"normalized_shape": []int{10000}}, x, w, w)
		},
		"rms_norm": func(x, w *core.Tensor) *core.Tensor {
			return core.Call1("rms_norm", core.Attrs{"normalized_shape": []int{10000}}, x, w)
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := f(x, w).Float64s()
			require.NoError(t, err)
			got, err := f(x.To(emuDevice), w.To(emuDevice)).Float64s()
			require.NoError(t, err)
			require.InDeltaSlice(t, want, got, 1e-5)
		})
	}
}

// Softmax of rows holding NaN, infinities and -inf runs (masked attention
// scores) must give the CPU's NaN, 0 and 1 in the same places, in rows held
// in registers and in long rows alike.
func TestSoftmaxNonFiniteRowsMatchCPU(t *testing.T) {
	needEmulator(t)
	inf := math.Inf(1)
	for _, n := range []int{7, 10000} {
		rows := [][]float64{
			{math.NaN()}, {inf}, {-inf}, {-inf, -inf}, {inf, inf}, {-inf, 0}, {1e30, -1e30},
		}
		data := make([]float32, 0, len(rows)*n)
		for _, r := range rows {
			for i := range n {
				v := 0.25 * float64(i%5)
				if i < len(r) {
					v = r[i]
				}
				if len(r) == 2 && r[0] == r[1] && math.IsInf(r[0], -1) {
					v = -inf // the whole row masked
				}
				data = append(data, float32(v))
			}
		}
		x := core.FromSlice(data, core.Shape{len(rows), n})
		for _, op := range []string{"softmax", "log_softmax"} {
			want, err := core.Call1(op, core.Attrs{"axis": -1}, x).Float64s()
			require.NoError(t, err)
			got, err := core.Call1(op, core.Attrs{"axis": -1}, x.To(emuDevice)).Float64s()
			require.NoError(t, err)
			for i := range want {
				switch {
				case math.IsNaN(want[i]):
					require.True(t, math.IsNaN(got[i]), "%s n=%d at %d: want NaN, got %v", op, n, i, got[i])
				case math.IsInf(want[i], 0):
					require.Equal(t, want[i], got[i], "%s n=%d at %d", op, n, i)
				default:
					require.InDelta(t, want[i], got[i], 1e-6, "%s n=%d at %d", op, n, i)
				}
			}
		}
	}
}
