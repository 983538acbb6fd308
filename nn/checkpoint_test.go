package nn_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// smallModel has parameters, buffers of two dtypes and nesting.
func smallModel(tb testing.TB, seed uint64) *nn.Sequential {
	core.ManualSeed(seed)
	return must(nn.NewSequential(
		must(nn.NewLinear(3, 4))(tb), must(nn.NewBatchNorm1d(4))(tb), &nn.ReLU{}, must(nn.NewLinear(4, 2))(tb),
	))(tb)
}

func stateValues(tb testing.TB, m nn.Module) map[string][]float64 {
	out := map[string][]float64{}
	for _, s := range m.StateDict() {
		out[s.Name] = values(tb, s.Value.Tensor())
	}
	return out
}

func TestCheckpointRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	saved := smallModel(t, 1)
	x := core.FromSlice([]float32{1, 2, 3, -1, 0, 2, 0.5, 0.5, -3}, core.Shape{3, 3})
	require.NoError(t, saved.Forward(x).Err(), "a training step moves the BatchNorm buffers off their initial values")
	require.NoError(t, nn.Save(path, saved))

	loaded := smallModel(t, 2)
	require.NotEqual(t, stateValues(t, saved), stateValues(t, loaded))
	require.NoError(t, nn.Load(path, loaded))
	assert.Equal(t, stateValues(t, saved), stateValues(t, loaded))
	for _, p := range loaded.Parameters() {
		assert.True(t, p.Tensor().RequiresGrad(), "loaded parameters stay trainable")
	}
	saved.Train(false)
	loaded.Train(false)
	assert.Equal(t, values(t, saved.Forward(x)), values(t, loaded.Forward(x)))
}

func TestLoadReportsEveryMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.safetensors")
	other := must(nn.NewSequential(must(nn.NewLinear(3, 5))(t), &nn.ReLU{}, must(nn.NewLinear(1, 1))(t),
		must(nn.NewLinear(4, 2, nn.WithDType(core.F64)))(t)))(t)
	require.NoError(t, nn.Save(path, other))

	m := smallModel(t, 1)
	before := stateValues(t, m)
	err := nn.Load(path, m)
	require.Error(t, err)
	for _, want := range []string{
		"0.weight: shape [5, 3] in file, [4, 3] in module",
		"0.bias: shape [5] in file, [4] in module",
		"3.weight: dtype f64 in file, f32 in module",
		"missing from file: 1.weight, 1.bias, 1.running_mean, 1.running_var, 1.num_batches_tracked",
		"not in module: 2.bias, 2.weight",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Equal(t, before, stateValues(t, m), "a rejected checkpoint loads nothing")
}

func TestLoadRejectsCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.safetensors")
	require.NoError(t, nn.Save(good, smallModel(t, 1)))
	raw, err := os.ReadFile(good)
	require.NoError(t, err)
	headerLen := int(binary.LittleEndian.Uint64(raw))

	hugeHeader := append([]byte{}, raw...)
	binary.LittleEndian.PutUint64(hugeHeader, 1<<62)
	badJSON := append([]byte{}, raw...)
	badJSON[8] = '['
	cases := map[string][]byte{
		"empty":                   {},
		"shorter than length":     raw[:5],
		"truncated header":        raw[:8+headerLen/2],
		"truncated data":          raw[:len(raw)-3],
		"header length too big":   hugeHeader,
		"header is not an object": badJSON,
	}
	m := smallModel(t, 3)
	before := stateValues(t, m)
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.safetensors")
			require.NoError(t, os.WriteFile(path, data, 0o644))
			err := nn.Load(path, m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "safetensors")
		})
	}
	assert.Equal(t, before, stateValues(t, m))
	assert.ErrorContains(t, nn.Load(filepath.Join(dir, "missing.safetensors"), m), "no such file")
}

// withReservedName registers a parameter under the one name safetensors
// reserves, so the failure happens while the temporary file is written.
type withReservedName struct{ nn.Base }

func TestFailedSaveKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	require.NoError(t, nn.Save(path, smallModel(t, 1)))
	original, err := os.ReadFile(path)
	require.NoError(t, err)

	released := smallModel(t, 2)
	released.Layers[0].(*nn.Linear).Weight.Tensor().Release()
	assert.ErrorContains(t, nn.Save(path, released), "0.weight")

	reserved := &withReservedName{}
	require.NoError(t, reserved.RegisterParameter("__metadata__", must(nn.NewParameter(core.Ones(core.Shape{2}, core.F32)))(t)))
	assert.ErrorContains(t, nn.Save(path, reserved), "reserved")

	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, original, after, "the good checkpoint is untouched")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
	assert.Equal(t, "model.safetensors", entries[0].Name())
}
