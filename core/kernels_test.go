package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Kernels register per backend kind; a second kernel for the same kind and
// op is refused (a plugin cannot shadow a built-in), and each kind lists
// only its own ops.
func TestKernelRegistry(t *testing.T) {
	k := func(*core.KernelCall) error { return nil }
	require.NoError(t, core.RegisterKernel("reg-a", "op2", k))
	require.NoError(t, core.RegisterKernel("reg-a", "op1", k))
	require.NoError(t, core.RegisterKernel("reg-b", "op1", k))

	err := core.RegisterKernel("reg-a", "op1", k)
	require.Error(t, err)
	assert.Equal(t, `a reg-a kernel for "op1" is already registered`, err.Error())
	assert.EqualError(t, core.RegisterKernel("reg-a", "op3", nil), `reg-a kernel for "op3" is nil`)

	assert.Equal(t, []string{"op1", "op2"}, core.KernelOps("reg-a"))
	assert.Equal(t, []string{"op1"}, core.KernelOps("reg-b"))
	assert.Empty(t, core.KernelOps("reg-none"))
	assert.NotNil(t, core.LookupKernel("reg-b", "op1"))
	assert.Nil(t, core.LookupKernel("reg-b", "op2"))
	assert.Panics(t, func() { core.MustRegisterKernel("reg-b", "op1", k) })
}

// A kind with no kernels misses every op but the views, which core makes.
func TestMissingKernels(t *testing.T) {
	missing, needed := core.MissingKernels("reg-nothing")
	assert.Equal(t, needed, len(missing))
	views := 0
	for _, def := range core.Ops() {
		if def.View != nil {
			views++
		}
	}
	assert.Positive(t, views)
	assert.Equal(t, len(core.Ops())-views, needed)
	assert.IsIncreasing(t, missing)
}
