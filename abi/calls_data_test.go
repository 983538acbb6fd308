package abi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dataset and loader targets: an epoch through loader.next is the
// permutation data.permutation gives, a file's bytes open as its path
// does, and the loader's own refusals come through.
func TestCallDatasetAndLoader(t *testing.T) {
	yPath := filepath.Join("..", "data", "testdata", "y.npy")
	var ds int64
	require.NoError(t, call(t, "dataset.open", 0, map[string]any{"spec": map[string]any{"format": "npy", "paths": []string{npyX, yPath}}}, nil, &ds))
	var info struct{ Len int }
	require.NoError(t, call(t, "dataset.info", ds, nil, nil, &info))
	assert.Equal(t, 5, info.Len)
	var rec []int64
	require.NoError(t, call(t, "dataset.get", ds, map[string]any{"index": -1, "device": "cpu"}, nil, &rec))
	require.Len(t, rec, 2)
	y, _ := hostValues(t, rec[1])
	last, err := datasetGet(ds, 4, "cpu")
	require.NoError(t, err)
	ys, _ := last.ts[1].Int64s()
	assert.Equal(t, float64(ys[0]), y[0], "index -1 is the last record")
	freeHandles(rec...)

	var l int64
	require.NoError(t, call(t, "loader.new", 0, map[string]any{"dataset": ds,
		"options": map[string]any{"batch_size": 2, "shuffle": true, "seed": 3, "workers": 2}}, nil, &l))
	require.NoError(t, call(t, "dataset.free", ds, nil, nil, nil), "the loader keeps its dataset")
	err = call(t, "loader.next", l, nil, nil, nil)
	assert.ErrorContains(t, err, "no epoch is running (call loader.epoch first)")
	require.NoError(t, call(t, "loader.epoch", l, map[string]any{"epoch": 1}, nil, nil))
	var perm, got []int64
	require.NoError(t, call(t, "data.permutation", 0, map[string]any{"n": 5, "seed": 3, "epoch": 1}, nil, &perm))
	for {
		var batch []int64
		require.NoError(t, call(t, "loader.next", l, nil, nil, &batch))
		if len(batch) == 0 {
			break
		}
		require.Len(t, batch, 2)
		t1, err := TensorOf(batch[1])
		require.NoError(t, err)
		vals, err := t1.Int64s()
		require.NoError(t, err)
		got = append(got, vals...)
		freeHandles(batch...)
	}
	want := make([]int64, len(perm))
	for i, r := range perm {
		want[i] = 10 * r // y.npy holds 0, 10, ..., 40
	}
	assert.Equal(t, want, got, "the epoch's labels in the permutation's order")
	require.NoError(t, call(t, "loader.free", l, nil, nil, nil))

	raw, err := os.ReadFile(npyX)
	require.NoError(t, err)
	var fromBytes int64
	require.NoError(t, call(t, "dataset.open", 0, map[string]any{"spec": map[string]any{"format": "npy", "name": "x.npy"}}, raw, &fromBytes))
	var n int64
	require.NoError(t, call(t, "dataset.len", fromBytes, nil, nil, &n))
	assert.Equal(t, int64(5), n)
	require.NoError(t, call(t, "dataset.free", fromBytes, nil, nil, nil))

	err = call(t, "dataset.open", 0, map[string]any{}, nil, nil)
	assert.ErrorContains(t, err, "dataset.open: spec is required")
	err = call(t, "loader.new", 0, map[string]any{"dataset": ds, "options": map[string]any{}}, nil, nil)
	assert.ErrorContains(t, err, "dataset handle")
	err = call(t, "data.permutation", 0, map[string]any{"n": -1}, nil, nil)
	assert.ErrorContains(t, err, "data.permutation: n is -1, outside [0, 2147483647]")
}

// A loader's seed may be its decimal string (past 2^53, JavaScript's
// numbers lose it): the same epoch order as the number.
func TestLoaderSeedAsDecimalString(t *testing.T) {
	ds, err := datasetOpen(`{"format": "npy", "path": "` + npyX + `"}`)
	require.NoError(t, err)
	defer func() { _ = datasetFree(ds) }()
	order := func(opts string) []float64 {
		l, err := loaderNew(ds, opts)
		require.NoError(t, err)
		defer func() { _ = loaderFree(l) }()
		require.NoError(t, loaderEpoch(l, 0))
		var firsts []float64
		for {
			b, err := loaderNext(l, 1)
			require.NoError(t, err)
			if b.Len() == 0 {
				return firsts
			}
			v, err := b.ts[0].Float64s()
			require.NoError(t, err)
			firsts = append(firsts, v[0])
		}
	}
	asNumber := order(`{"shuffle": true, "seed": 9007199254740993}`)
	assert.Equal(t, asNumber, order(`{"shuffle": true, "seed": "9007199254740993"}`))
	assert.NotEqual(t, asNumber, order(`{"shuffle": true, "seed": "9007199254740992"}`), "a seed past 2^53 is read exactly")
	_, err = loaderNew(ds, `{"seed": "-1"}`)
	assert.ErrorContains(t, err, "seed must be an integer in [0, 2^64) or its decimal string")
}
