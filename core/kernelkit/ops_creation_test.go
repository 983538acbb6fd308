package kernelkit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

func TestLinspaceBounds(t *testing.T) {
	a := core.Attrs{"start": -1.5, "stop": 2.5}
	start, stop, step := kernelkit.LinspaceBounds(a, 5, false)
	assert.Equal(t, []float64{-1.5, 2.5, 1}, []float64{start, stop, step})
	// Integer dtypes truncate the bounds first, as PyTorch does.
	start, stop, step = kernelkit.LinspaceBounds(a, 4, true)
	assert.Equal(t, []float64{-1, 2, 1}, []float64{start, stop, step})
	// Fewer than two values have no step.
	_, _, step = kernelkit.LinspaceBounds(a, 1, false)
	assert.Zero(t, step)
}

func TestRegisterFillsCoversEveryConstantCreationOp(t *testing.T) {
	values := map[string]float64{}
	a := core.Attrs{"value": 7.0}
	kernelkit.RegisterFills(func(op string, k core.Kernel) {
		assert.NoError(t, k(&core.KernelCall{Attrs: a}), op)
		values[op] = a.Float("seen")
	}, func(value func(core.Attrs) float64) core.Kernel {
		return func(k *core.KernelCall) error {
			k.Attrs["seen"] = value(k.Attrs)
			return nil
		}
	})
	assert.Equal(t, map[string]float64{"zeros": 0, "zeros_like": 0, "ones": 1, "ones_like": 1, "full": 7, "full_like": 7}, values)
}
