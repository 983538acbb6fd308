//go:build linux && cgo

package cuda_test

import (
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
