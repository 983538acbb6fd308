//go:build linux && cgo

package cuda

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// A body that can fail (gather's: an index out of range) fails the op on
// the CUDA kernels with the CPU kernel's error for the same inputs, i64
// indices past 2^32 included (its u32 view would wrap into range); in
// range, it gives the CPU's values. gather's own CUDA kernel wins over the
// body, so the body kernel is called directly, on the emulator.
func TestBodyFailGivesTheCPUsError(t *testing.T) {
	be, err := core.BackendFor(core.Device{Kind: "cuda-emu"}) // registered by compile_test.go
	switch {
	case errors.Is(err, exec.ErrNotFound):
		t.Skipf("no C++ compiler for the CUDA emulator: %v", err)
	case err != nil:
		t.Fatalf("the CUDA emulator did not open: %v", err)
	}
	b := be.(*Backend)
	def, ok := core.LookupOp("gather")
	require.True(t, ok)
	kernel := bodyKernel(def)
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{3, 2})
	for _, c := range []struct {
		name  string
		axis  int
		index *core.Tensor
	}{
		{"in range", 1, core.FromSlice([]int64{1, 0, 0, 0, 1, 1}, core.Shape{3, 2})},
		{"negative axis", -2, core.FromSlice([]int32{2, 0, 1, 1}, core.Shape{2, 2})},
		{"past the end", 1, core.FromSlice([]int64{1, 0, 2, 0, 1, 1}, core.Shape{3, 2})},
		{"negative", 0, core.FromSlice([]int64{0, -1}, core.Shape{1, 2})},
		{"past 2^32", 0, core.FromSlice([]int64{0, 1 << 32}, core.Shape{1, 2})},
	} {
		t.Run(c.name, func(t *testing.T) {
			attrs := core.Attrs{"axis": c.axis}
			want, wantErr := core.Call("gather", []*core.Tensor{x, c.index}, attrs)
			ins := []*core.Tensor{x.To(b.Device()), c.index.To(b.Device())}
			out, err := core.Empty(b, c.index.Shape(), core.F32)
			require.NoError(t, err)
			gotErr := kernel(&core.KernelCall{Op: def, Inputs: ins, Attrs: attrs, Outputs: []*core.Tensor{out}, Backend: b})
			if wantErr != nil {
				require.Error(t, gotErr, "the CPU refuses: %v", wantErr)
				assert.Equal(t, wantErr.Error(), gotErr.Error())
				require.NoError(t, b.Sync(), "the failure was reported once")
				return
			}
			require.NoError(t, gotErr)
			w, err := want[0].Float64s()
			require.NoError(t, err)
			g, err := out.To(core.CPU).Float64s()
			require.NoError(t, err)
			assert.Equal(t, w, g)
		})
	}
}
