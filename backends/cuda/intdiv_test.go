//go:build linux && cgo

package cuda_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// One rule for integer division on every backend (issue 26, item 10):
// x // 0, x % 0 and 0 ** -n fail as on the CPU, and other negative powers
// truncate as PyTorch's do.
func TestIntegerDivisionByZeroIsAnError(t *testing.T) {
	needEmulator(t)
	for _, dt := range []core.DType{core.I32, core.I64, core.I8} {
		t1 := func(shape core.Shape, vals ...float64) *core.Tensor { return core.FromFloat64s(dt, shape, vals) }
		for _, c := range []struct {
			op   string
			a, b *core.Tensor
		}{
			{"floor_divide", t1(core.Shape{3}, 1, 2, 3), t1(core.Shape{3}, 1, 0, 2)},
			{"remainder", t1(core.Shape{3}, 1, 2, 3), t1(core.Shape{1}, 0)},
			{"pow", t1(core.Shape{2, 1}, 2, 0), t1(core.Shape{2}, 3, -1)},
		} {
			_, cpuErr := core.Call1(c.op, nil, c.a, c.b).Int64s()
			require.ErrorContains(t, cpuErr, c.op+": integer division by zero", "%s %s", c.op, dt)
			// The kernel's check is read at the next sync, here the read.
			_, err := core.Call1(c.op, nil, c.a.To(emuDevice), c.b.To(emuDevice)).Int64s()
			require.Error(t, err, "%s %s", c.op, dt)
			assert.Regexp(t, c.op+".* integer division by zero", err.Error())
		}
		a, b := t1(core.Shape{6}, 2, -2, 1, -1, -1, 0), t1(core.Shape{6}, -1, 3, -5, -3, -4, 2)
		want, err := core.Call1("pow", nil, a, b).Int64s()
		require.NoError(t, err)
		got, err := core.Call1("pow", nil, a.To(emuDevice), b.To(emuDevice)).Int64s()
		require.NoError(t, err, dt)
		assert.Equal(t, want, got, "pow %s", dt)
	}
}
