package webgpu

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type namedPolicy string

func (p namedPolicy) PolicyName() string            { return string(p) }
func (namedPolicy) Decide(request, reply any) error { return nil }

// WEBTENSOR_TUNING_POLICY goes through the installed loader; without one,
// or when loading fails, the error says what was asked and how to fix it.
func TestConfiguredPolicyIsLoadedOrExplained(t *testing.T) {
	t.Setenv("WEBTENSOR_TUNING_POLICY", "")
	p, err := loadConfiguredPolicy(nil)
	assert.NoError(t, err)
	assert.Nil(t, p)

	t.Setenv("WEBTENSOR_TUNING_POLICY", "policy.wasm")
	_, err = loadConfiguredPolicy(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `WEBTENSOR_TUNING_POLICY="policy.wasm"`)
	assert.Contains(t, err.Error(), "no plugin host")

	_, err = loadConfiguredPolicy(func(string) (Policy, error) { return nil, errors.New("no such file") })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no such file")
	assert.Contains(t, err.Error(), "make plugins")

	var asked string
	p, err = loadConfiguredPolicy(func(spec string) (Policy, error) { asked = spec; return namedPolicy("t.kv"), nil })
	require.NoError(t, err)
	assert.Equal(t, "policy.wasm", asked)
	assert.Equal(t, "t.kv", p.PolicyName())
}

// A policy set for the process reaches devices already open and those
// opened later, and the variable is no longer read.
func TestDefaultPolicyReachesEveryDevice(t *testing.T) {
	saved := processPolicy.policy
	savedSet, savedOpened := processPolicy.set, processPolicy.opened
	t.Cleanup(func() {
		processPolicy.policy, processPolicy.set, processPolicy.opened = saved, savedSet, savedOpened
	})
	open := &Backend{}
	processPolicy.opened = []*Backend{open}
	SetDefaultPolicy(namedPolicy("t.kv"))
	assert.Equal(t, namedPolicy("t.kv"), open.tuner.policy)
	later := &Backend{}
	require.NoError(t, adoptPolicy(later))
	assert.Equal(t, namedPolicy("t.kv"), later.tuner.policy)
	assert.Equal(t, "t.kv", DefaultPolicyName())
	SetDefaultPolicy(nil)
	assert.Nil(t, open.tuner.policy)
	assert.Nil(t, later.tuner.policy)
}
