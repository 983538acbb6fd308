package cuda

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The parts of the backend that need no GPU: the allocator's bookkeeping
// (over a fake device), size classes, the dialect translation and the disk
// cache's keys.

func TestSizeClasses(t *testing.T) {
	for _, c := range []struct{ n, want uint64 }{
		{0, minBlock}, {1, minBlock}, {512, 512}, {513, 640}, {1000, 1024}, {1025, 1280},
		{3 << 20, 3 << 20}, {(3 << 20) + 1, 7 << 19},
	} {
		got := sizeClass(c.n)
		assert.Equal(t, c.want, got, "sizeClass(%d)", c.n)
		assert.GreaterOrEqual(t, got, c.n)
		assert.LessOrEqual(t, float64(got), max(float64(minBlock), 1.25*float64(c.n)), "at most 25%% waste for %d", c.n)
	}
}

func TestAllocatorReusesAndAccounts(t *testing.T) {
	mem := &fakeMemory{next: 1 << 20}
	a := newAllocator(mem)
	p1, err := a.get(1000)
	require.NoError(t, err)
	p2, err := a.get(1000)
	require.NoError(t, err)
	assert.NotEqual(t, p1, p2)
	s := a.snapshot()
	assert.Equal(t, uint64(2048), s.Allocated)
	assert.Equal(t, uint64(2000), s.Requested)
	assert.Equal(t, int64(2), s.DriverAllocs)
	require.NoError(t, a.put(p1))
	p3, err := a.get(900) // same size class: the cached block comes back
	require.NoError(t, err)
	assert.Equal(t, p1, p3)
	s = a.snapshot()
	assert.Equal(t, int64(1), s.CacheHits)
	assert.Equal(t, int64(2), s.DriverAllocs, "no driver allocation for a cached size")
	assert.Equal(t, uint64(2048), s.PeakAllocated)
	require.NoError(t, a.put(p2))
	require.NoError(t, a.put(p3))
	assert.ErrorContains(t, a.put(p3), "not allocated", "a double release is refused")
	s = a.snapshot()
	assert.Zero(t, s.Allocated)
	assert.Equal(t, 2, s.CachedBlocks)
	assert.Equal(t, uint64(2048), s.Reserved)
	require.NoError(t, a.emptyCache())
	s = a.snapshot()
	assert.Zero(t, s.Reserved)
	assert.Zero(t, s.CachedBlocks)
	assert.Equal(t, int64(2), s.DriverFrees)
	assert.Zero(t, mem.live, "everything went back to the device")
	assert.Positive(t, mem.syncs, "the stream is waited for before memory goes back")
}

// A failed allocation releases the cache and retries once, so cached blocks
// of other sizes never cause an out-of-memory error; a real shortage is an
// ErrOutOfMemory that says what is held, and the allocator stays usable.
func TestAllocatorOutOfMemory(t *testing.T) {
	mem := &fakeMemory{next: 1 << 20, limit: 4096}
	a := newAllocator(mem)
	p, err := a.get(3000)
	require.NoError(t, err)
	require.NoError(t, a.put(p)) // 3072 bytes cached
	q, err := a.get(2000)        // needs the cached bytes back
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.snapshot().OOMRetries)
	_, err = a.get(4000)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrOutOfMemory))
	assert.Contains(t, err.Error(), "held by tensors")
	require.NoError(t, a.put(q))
	_, err = a.get(2000)
	assert.NoError(t, err, "usable after an out-of-memory error")
}

func TestTranslateDialect(t *testing.T) {
	for _, c := range []struct{ in, single, double string }{
		{"(x0 + 1.0)", "(x0 + 1.0f)", "(x0 + 1.0)"},
		{"select(0u, 1u, x0 > 0.5)", "select(0u, 1u, x0 > 0.5f)", "select(0u, 1u, x0 > 0.5)"},
		{"round(x0) * 1e-5 + abs(x1)", "w_round(x0) * 1e-5f + w_abs(x1)", "w_round(x0) * 1e-5 + w_abs(x1)"},
		{"bitcast<u32>(x0) & 0x7fffffffu", "bitcast<u32>(x0) & 0x7fffffffu", "bitcast<u32>(x0) & 0x7fffffffu"},
		{"f32(2i) + maxval", "f32(2) + maxval", "f32(2) + maxval"},
		{"pf(0u) * .25", "pf(0u) * .25f", "pf(0u) * .25"},
	} {
		assert.Equal(t, c.single, translate(c.in, true), c.in)
		assert.Equal(t, c.double, translate(c.in, false), c.in)
	}
}

func TestDiskCacheKeysBySource(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WEBTENSOR_CACHE_DIR", dir)
	t.Setenv("WEBTENSOR_NO_DISK_CACHE", "")
	c := newDiskCache("sm_90-nvrtc13.0")
	_, ok := c.load("kernel A")
	assert.False(t, ok)
	c.store("kernel A", []byte("image A"))
	got, ok := c.load("kernel A")
	require.True(t, ok)
	assert.Equal(t, "image A", string(got))
	_, ok = c.load("kernel B")
	assert.False(t, ok, "another source is another kernel")
	other := newDiskCache("sm_80-nvrtc13.0")
	_, ok = other.load("kernel A")
	assert.False(t, ok, "another architecture is another kernel")
	files, _ := filepath.Glob(filepath.Join(dir, "cuda", "*", "*"))
	require.Len(t, files, 1)
	for _, f := range files {
		assert.False(t, strings.Contains(filepath.Base(f), "tmp"), "no temporary left: %s", f)
	}
	t.Setenv("WEBTENSOR_NO_DISK_CACHE", "1")
	off := newDiskCache("sm_90-nvrtc13.0")
	_, ok = off.load("kernel A")
	assert.False(t, ok, "WEBTENSOR_NO_DISK_CACHE=1 turns the cache off")
	_, err := os.Stat(dir)
	require.NoError(t, err)
}

func TestLibraryCandidatesPreferTheDriversMajor(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"libnvrtc.so.12", "libnvrtc.so.13"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	t.Setenv("WEBTENSOR_CUDA_LIBS", dir)
	got := libraryCandidates("libnvrtc", "12")
	require.NotEmpty(t, got)
	assert.Equal(t, filepath.Join(dir, "libnvrtc.so.12"), got[0], "the driver's CUDA major first, from WEBTENSOR_CUDA_LIBS")
	assert.Contains(t, got, filepath.Join(dir, "libnvrtc.so.13"))
	assert.Equal(t, "13", majorOf(13000))
	assert.Equal(t, "12", majorOf(12040))
	assert.Equal(t, "", majorOf(0))
}
