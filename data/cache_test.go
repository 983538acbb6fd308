package data

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// tallied counts the reads that reach the dataset.
type tallied struct {
	counting
	reads *atomic.Int64
}

func (t tallied) Read(i int, dst [][]byte) error {
	t.reads.Add(1)
	return t.counting.Read(i, dst)
}

// With the cache on, the first epoch reads every record from the dataset
// and later epochs none, and every epoch's batches are the ones an
// uncached loader gives, in the same order, whatever the worker count.
func TestLoaderCache(t *testing.T) {
	var reads atomic.Int64
	ds := tallied{counting{n: 23, bad: -1}, &reads}
	plain, err := NewLoader(counting{n: 23, bad: -1}, Options{BatchSize: 5, Shuffle: true, Seed: 3})
	require.NoError(t, err)
	for _, workers := range []int{0, 3} {
		reads.Store(0)
		l, err := NewLoader(ds, Options{BatchSize: 5, Shuffle: true, Seed: 3, Workers: workers, Cache: true})
		require.NoError(t, err)
		for e := range 3 {
			assert.Equal(t, epoch(t, plain, e), epoch(t, l, e), "workers %d epoch %d", workers, e)
		}
		assert.Equal(t, int64(23), reads.Load(), "workers %d: only the first epoch reads the dataset", workers)
		st := l.CacheStats()
		assert.Equal(t, CacheStats{Records: 23, Bytes: 23 * 16, Hits: 46, Misses: 23}, st)
	}
}

// The pipeline changes on a live loader for the epochs after it, never
// what the batches hold; the cache survives being switched off until
// DropCache, and a dataset over the budget is refused naming the sizes.
func TestLoaderSetPipeline(t *testing.T) {
	var reads atomic.Int64
	ds := tallied{counting{n: 10, bad: -1}, &reads}
	l, err := NewLoader(ds, Options{BatchSize: 4})
	require.NoError(t, err)
	assert.Equal(t, Pipeline{Workers: 0, Prefetch: 2, Cache: false}, l.Pipeline())
	want := epoch(t, l, 0)

	require.NoError(t, l.SetPipeline(Pipeline{Workers: 2, Prefetch: 1, Cache: true}))
	assert.Equal(t, Pipeline{Workers: 2, Prefetch: 1, Cache: true}, l.Pipeline())
	assert.Equal(t, 2, l.Options().Workers)
	assert.Equal(t, want, epoch(t, l, 0))
	reads.Store(0)
	require.NoError(t, l.SetPipeline(Pipeline{Workers: 0, Prefetch: 2, Cache: false}))
	assert.Equal(t, want, epoch(t, l, 0))
	assert.Equal(t, int64(10), reads.Load(), "cache off: every record from the dataset")
	assert.Equal(t, int64(10), l.CacheStats().Records, "off, but kept until DropCache")
	require.NoError(t, l.SetPipeline(Pipeline{Workers: 0, Prefetch: 2, Cache: true}))
	reads.Store(0)
	assert.Equal(t, want, epoch(t, l, 0))
	assert.Equal(t, int64(0), reads.Load(), "switched back on, the cache was warm")
	l.DropCache()
	assert.Equal(t, CacheStats{}, l.CacheStats())
	reads.Store(0)
	assert.Equal(t, want, epoch(t, l, 0))
	assert.Equal(t, int64(10), reads.Load(), "dropped with the cache on, the next epoch fills a new one")
	assert.Equal(t, int64(10), l.CacheStats().Records)

	assert.EqualError(t, l.SetPipeline(Pipeline{Workers: -1, Prefetch: 2}), "data: worker count -1 is negative")
	assert.EqualError(t, l.SetPipeline(Pipeline{Workers: 1, Prefetch: 0}), "data: prefetch 0 must be at least 1")

	small, err := NewLoader(ds, Options{BatchSize: 4, CacheBytes: 100})
	require.NoError(t, err)
	need, budget, ok := small.CacheFits()
	assert.Equal(t, []any{int64(160), int64(100), false}, []any{need, budget, ok})
	const msg = "data: caching 10 records of 16 bytes takes 160 bytes, over the cache budget of 100 (raise cache_bytes or leave the cache off)"
	assert.EqualError(t, small.SetPipeline(Pipeline{Prefetch: 2, Cache: true}), msg)
	_, err = NewLoader(ds, Options{Cache: true, CacheBytes: 100})
	assert.EqualError(t, err, msg)
	_, err = NewLoader(ds, Options{CacheBytes: -1})
	assert.EqualError(t, err, "data: cache budget -1 bytes is negative")
}

// A failed read is not cached: the next epoch reads it again and fails
// the same way.
func TestLoaderCacheKeepsErrors(t *testing.T) {
	l, err := NewLoader(counting{n: 6, bad: 4}, Options{BatchSize: 2, Cache: true})
	require.NoError(t, err)
	for range 2 {
		var errs int
		for _, err := range l.Batches(0) {
			if err != nil {
				errs++
				assert.ErrorContains(t, err, "counting.bin: record 4: checksum mismatch")
			}
		}
		assert.Equal(t, 1, errs)
	}
}

func TestInMemory(t *testing.T) {
	ds, err := FromTensors([]*core.Tensor{core.FromSlice([]float32{1, 2}, core.Shape{2})})
	require.NoError(t, err)
	assert.True(t, InMemory(ds))
	assert.False(t, InMemory(counting{n: 1}))
}
