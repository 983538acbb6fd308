package abi

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var npyX = filepath.Join("..", "data", "testdata", "x.npy")

func TestDatasetAndLoader(t *testing.T) {
	ds, err := datasetOpen(`{"format": "npy", "paths": ["` + npyX + `", "` + filepath.Join("..", "data", "testdata", "y.npy") + `"]}`)
	require.NoError(t, err)
	info, err := datasetInfoJSON(ds)
	require.NoError(t, err)
	assert.JSONEq(t, `{"len": 5, "fields": [{"name": "x", "dtype": "f32", "shape": [2, 3]}, {"name": "y", "dtype": "i64", "shape": []}]}`, info)

	l, err := loaderNew(ds, `{"batch_size": 2, "shuffle": true, "seed": 3, "workers": 2, "device": "cpu"}`)
	require.NoError(t, err)
	require.NoError(t, datasetFree(ds), "the loader keeps its dataset")
	n, err := loaderLen(l)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	_, err = loaderNext(l, 2)
	assert.EqualError(t, err, "loader.next: no epoch is running (call loader.epoch first)")
	require.NoError(t, loaderEpoch(l, 1))
	_, err = loaderNext(l, 1)
	assert.Equal(t, StatusBufferTooSmall, StatusOf(err))
	perm, err := dataPermutation(5, 3, 1)
	require.NoError(t, err)
	var got []int64
	for {
		b, err := loaderNext(l, 2)
		require.NoError(t, err)
		if b.Len() == 0 {
			break
		}
		ys, err := b.ts[1].Int64s()
		require.NoError(t, err)
		got = append(got, ys...)
	}
	for i, p := range perm {
		assert.Equal(t, p*10, got[i], "a short buffer took no batch; order is the permutation's")
	}
	require.NoError(t, loaderFree(l))
	assert.Equal(t, StatusHandle, StatusOf(loaderFree(l)))
}

func TestDatasetErrors(t *testing.T) {
	_, err := datasetOpen(`{"format": "npy", "path": "no/such.npy"}`)
	assert.Equal(t, StatusIO, StatusOf(err))
	_, err = datasetOpen(`{"format": "npy", "pth": "x.npy"}`)
	assert.Equal(t, StatusInvalid, StatusOf(err))
	assert.ErrorContains(t, err, `unknown field "pth"`)
	ds, err := datasetOpen(`{"format": "npy", "path": "` + npyX + `"}`)
	require.NoError(t, err)
	_, err = loaderNew(ds, `{"batch_size": 2, "shufle": true}`)
	assert.ErrorContains(t, err, `unknown field "shufle"`)
	_, err = datasetGet(ds, 9, "")
	assert.EqualError(t, err, "dataset.get: data: record 9 out of range (dataset has 5)")
	_, err = datasetOpenBytes(`{"format": "npy", "name": "upload.npy"}`, []byte("nope"))
	assert.EqualError(t, err, `dataset.open: upload.npy: not a .npy file NumPy wrote: no \x93NUMPY magic at the start`)
	require.NoError(t, datasetFree(ds))
}
