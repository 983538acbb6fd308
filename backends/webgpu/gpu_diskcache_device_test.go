//go:build !js

package webgpu

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The disk cache on a real device: a new process reads what an earlier one
// measured and rendered, corrupt entries are rebuilt, and two processes may
// share one cache.

// forgetCaches makes b behave like a newly opened device towards its
// caches: no compiled pipelines, no decisions in memory, the loop limit to
// be probed again (its probe kernel is a cache entry too), the cache
// directory read from the environment again. (Dropped pipelines are not
// released: work already submitted may still use them.)
func forgetCaches(b *Backend) {
	b.mu.Lock()
	b.pipes = map[string]*pipeline{}
	b.loopOnce, b.loops = sync.Once{}, 0
	b.mu.Unlock()
	b.ForgetTuning()
}

// gpuWorkload runs two tuned matmul shape classes and a map and reduce
// kernel, each checked against the CPU backend.
func gpuWorkload(t testing.TB) {
	for i, n := range []int{96, 256} {
		a := core.Call1("randn", core.Attrs{"shape": []int{n, n}, "seed": 10 + i})
		b := core.Call1("randn", core.Attrs{"shape": []int{n, n}, "seed": 20 + i})
		sameValues(t, a.To(testGPU).Matmul(b.To(testGPU)), a.Matmul(b), 1e-3)
	}
	x := core.Call1("randn", core.Attrs{"shape": []int{1000}, "seed": 30})
	chain := func(x *core.Tensor) *core.Tensor {
		return core.Call1("sum", nil, core.Call1("exp", nil, x).Add(x))
	}
	sameValues(t, chain(x.To(testGPU)), chain(x), 1e-3)
}

func sameValues(t testing.TB, got, want *core.Tensor, tol float64) {
	t.Helper()
	g, err := got.Float64s()
	require.NoError(t, err)
	w, err := want.Float64s()
	require.NoError(t, err)
	require.Equal(t, len(w), len(g))
	for i := range w {
		if math.Abs(g[i]-w[i]) > tol*(1+math.Abs(w[i])) {
			t.Fatalf("element %d: got %v, want %v", i, g[i], w[i])
		}
	}
}

// helperReport is what a GPU helper process tells its parent.
type helperReport struct {
	Stats    CacheStats
	WarmupMS float64 // the first workload, including compiling and tuning
}

// gpuHelper is the body of a GPU helper process: the workload once (timed,
// as the process's warm-up), then again WEBTENSOR_DISKCACHE_ROUNDS-1 times
// with its caches forgotten, so it rereads entries the other process may be
// rewriting.
func gpuHelper(t *testing.T) {
	b := gpuBackend(t)
	start := time.Now()
	gpuWorkload(t)
	warmup := time.Since(start)
	rounds, _ := strconv.Atoi(os.Getenv("WEBTENSOR_DISKCACHE_ROUNDS"))
	for range rounds - 1 {
		forgetCaches(b)
		gpuWorkload(t)
	}
	raw, err := json.Marshal(helperReport{Stats: b.KernelCacheStats(), WarmupMS: float64(warmup.Microseconds()) / 1000})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv("WEBTENSOR_DISKCACHE_REPORT"), raw, 0o644))
}

// startGPUHelper starts a GPU helper process on cache dir; wait for it with
// the returned function.
func startGPUHelper(t *testing.T, dir string, rounds int, env ...string) func() helperReport {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := helper(t, "gpu", dir, report)
	cmd.Env = append(cmd.Env, append(env, "WEBTENSOR_DISKCACHE_ROUNDS="+strconv.Itoa(rounds))...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return func() helperReport {
		t.Helper()
		require.NoError(t, cmd.Wait(), "helper process:\n%s", out.String())
		raw, err := os.ReadFile(report)
		require.NoError(t, err, "helper process wrote no report:\n%s", out.String())
		var r helperReport
		require.NoError(t, json.Unmarshal(raw, &r))
		return r
	}
}

func runGPUHelper(t *testing.T, dir string, env ...string) helperReport {
	t.Helper()
	return startGPUHelper(t, dir, 1, env...)()
}

// A new process on the same cache finds every kernel source and tuning
// decision on disk and times no variant.
func TestDiskCacheNewProcessSkipsTuning(t *testing.T) {
	gpuBackend(t)
	dir := t.TempDir()
	cold := runGPUHelper(t, dir)
	assert.Positive(t, cold.Stats.VariantsTimed, "the first process measures: %+v", cold.Stats)
	assert.Positive(t, cold.Stats.DiskWrites)
	assert.Zero(t, cold.Stats.DiskHits)

	warm := runGPUHelper(t, dir)
	assert.Zero(t, warm.Stats.VariantsTimed, "the second process re-timed variants: %+v", warm.Stats)
	assert.Positive(t, warm.Stats.DiskHits)
	assert.Zero(t, warm.Stats.DiskMisses, "every entry the second process wants was written by the first")
	assert.Zero(t, warm.Stats.DiskCorrupt)
	assert.Zero(t, warm.Stats.DiskWrites)
	assert.Equal(t, 1.0, warm.Stats.DiskHitRatio())

	off := runGPUHelper(t, t.TempDir(), "WEBTENSOR_NO_DISK_CACHE=1")
	assert.Contains(t, off.Stats.Off, "WEBTENSOR_NO_DISK_CACHE")
	assert.Positive(t, off.Stats.VariantsTimed)
	t.Logf("warm-up of a fresh process: %.0f ms with an empty cache (%d variants timed), %.0f ms with a filled one (%d disk hits), %.0f ms with the disk cache off",
		cold.WarmupMS, cold.Stats.VariantsTimed, warm.WarmupMS, warm.Stats.DiskHits, off.WarmupMS)
}

// Two processes that fill and reread one cache at the same time both
// compute the right values and leave only valid entries.
func TestDiskCacheTwoProcessesShareOneCache(t *testing.T) {
	gpuBackend(t)
	dir := t.TempDir()
	wait1 := startGPUHelper(t, dir, 3)
	wait2 := startGPUHelper(t, dir, 3)
	for i, r := range []helperReport{wait1(), wait2()} {
		assert.Zero(t, r.Stats.DiskCorrupt, "process %d read a torn entry: %+v", i, r.Stats)
		assert.Positive(t, r.Stats.DiskHits, "process %d reread entries: %+v", i, r.Stats)
	}
	assert.Positive(t, checkCacheFiles(t, filepath.Join(dir, "webgpu")))
}

// Entries spoiled in every way are counted, ignored and rewritten, and the
// results stay right.
func TestDiskCacheCorruptEntriesAreRebuiltOnGPU(t *testing.T) {
	b := gpuBackend(t)
	dir := privateCache(t)
	t.Setenv("WEBTENSOR_TUNE", "")
	forgetCaches(b)
	t.Cleanup(func() { forgetCaches(b) })
	gpuWorkload(t)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, ents)
	spoil := []func([]byte) []byte{
		func(raw []byte) []byte { return raw[:len(raw)/3] },                                      // truncated
		func([]byte) []byte { return []byte("garbage\x00\xff\n\n{") },                            // garbage
		func(raw []byte) []byte { raw[len(raw)-3] ^= 1; return raw },                             // a flipped bit
		func(raw []byte) []byte { return bytes.Replace(raw, []byte(" 1\n"), []byte(" 7\n"), 1) }, // another version
	}
	for i, e := range ents {
		path := filepath.Join(dir, e.Name())
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, spoil[i%len(spoil)](raw), 0o644))
	}
	forgetCaches(b)
	before := b.KernelCacheStats()
	gpuWorkload(t)
	after := b.KernelCacheStats()
	assert.Equal(t, int64(len(ents)), after.DiskCorrupt-before.DiskCorrupt, "every spoiled entry is read and counted")
	assert.Zero(t, after.DiskHits-before.DiskHits)
	assert.Positive(t, after.VariantsTimed-before.VariantsTimed, "spoiled decisions are measured again")
	assert.Equal(t, len(ents), checkCacheFiles(t, dir), "and every entry is rewritten whole")
}
