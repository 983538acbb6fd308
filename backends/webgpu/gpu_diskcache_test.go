//go:build !js

package webgpu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The file layer of the disk cache, without a GPU.

// privateCache points the disk cache at a fresh directory for one test and
// returns that directory's webgpu folder (where entries go).
func privateCache(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", base)
	t.Setenv("WEBTENSOR_CACHE_DIR", "")
	t.Setenv("WEBTENSOR_NO_DISK_CACHE", "")
	return filepath.Join(base, "webtensor", "webgpu")
}

func TestDiskCacheStoresAndLoads(t *testing.T) {
	dir := privateCache(t)
	c := &diskCache{device: "test-gpu|driver 1"}
	var src string
	assert.False(t, c.load(entryKernel, "map|64|f32", &src), "an empty cache misses")
	c.store(entryKernel, "map|64|f32", "@compute fn main() {}")
	require.True(t, c.load(entryKernel, "map|64|f32", &src))
	assert.Equal(t, "@compute fn main() {}", src)

	path := c.path(entryKernel, "map|64|f32")
	assert.Equal(t, dir, filepath.Dir(path))
	assert.True(t, strings.HasPrefix(filepath.Base(path), "wgsl-"), path)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(raw, []byte("webtensor-cache 1\n")), "header: %q", raw[:min(len(raw), 40)])

	// The same name for another device or another kind is another entry.
	other := &diskCache{device: "another-gpu"}
	assert.False(t, other.load(entryKernel, "map|64|f32", &src))
	var rec tuneRecord
	assert.False(t, c.load(entryTuning, "map|64|f32", &rec))
	c.store(entryTuning, "matmul|b0-m6", tuneRecord{Variant: "regblock4", Timings: map[string]int64{"regblock4": 5}})
	require.True(t, c.load(entryTuning, "matmul|b0-m6", &rec))
	assert.Equal(t, "regblock4", rec.Variant)

	assert.Equal(t, int64(2), c.hits.Load())
	assert.Equal(t, int64(2), c.misses.Load())
	assert.Equal(t, int64(1), other.misses.Load())
	assert.Equal(t, int64(2), c.writes.Load())
	assert.Zero(t, c.corrupt.Load())
	found := map[string]string{}
	c.scan(entryTuning, func(name string, value json.RawMessage) { found[name] = string(value) })
	assert.Len(t, found, 1)
	assert.Contains(t, found["matmul|b0-m6"], "regblock4")
}

// Every way a file can be bad reads as a miss, is counted, and is replaced
// by the next store.
func TestDiskCacheIgnoresAndRewritesCorruptEntries(t *testing.T) {
	privateCache(t)
	c := &diskCache{device: "test-gpu"}
	const name = "reduce|sum|f32"
	c.store(entryKernel, name, "fn main() { let x = 1; }")
	path := c.path(entryKernel, name)
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x20
		return b
	}
	c.store(entryKernel, "another", "fn other() {}")
	foreign, err := os.ReadFile(c.path(entryKernel, "another"))
	require.NoError(t, err)
	cases := map[string]func() error{
		"truncated":        func() error { return os.WriteFile(path, good[:len(good)/2], 0o644) },
		"truncated header": func() error { return os.WriteFile(path, good[:10], 0o644) },
		"empty":            func() error { return os.WriteFile(path, nil, 0o644) },
		"garbage":          func() error { return os.WriteFile(path, []byte("\x00\xff garbage \n\n\n{"), 0o644) },
		"flipped payload":  func() error { return os.WriteFile(path, flip(len(good)-5), 0o644) },
		"flipped checksum": func() error { return os.WriteFile(path, flip(len("webtensor-cache 1\n")+3), 0o644) },
		"wrong version": func() error {
			return os.WriteFile(path, bytes.Replace(good, []byte("cache 1\n"), []byte("cache 9\n"), 1), 0o644)
		},
		"another key": func() error { return os.WriteFile(path, foreign, 0o644) },
		"valid frame, bad JSON": func() error {
			return os.WriteFile(path, encodeEntry([]byte(`{"key": 12}`)), 0o644)
		},
		"a directory": func() error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.Mkdir(path, 0o755)
		},
	}
	for what, corrupt := range cases {
		require.NoError(t, corrupt(), what)
		before := c.corrupt.Load()
		var src string
		assert.False(t, c.load(entryKernel, name, &src), what)
		assert.Equal(t, before+1, c.corrupt.Load(), "%s is counted corrupt", what)
		if what == "a directory" {
			require.NoError(t, os.Remove(path))
		}
		c.store(entryKernel, name, "fn main() { let x = 1; }")
		require.True(t, c.load(entryKernel, name, &src), "%s is rewritten", what)
		assert.Equal(t, "fn main() { let x = 1; }", src)
	}
}

func TestDiskCacheDirectoryFromEnvironment(t *testing.T) {
	privateCache(t)
	xdg := os.Getenv("XDG_CACHE_HOME")
	c := &diskCache{device: "d"}
	dir, off := c.status()
	assert.Equal(t, filepath.Join(xdg, "webtensor", "webgpu"), dir)
	assert.Empty(t, off)

	own := t.TempDir()
	t.Setenv("WEBTENSOR_CACHE_DIR", own)
	c.reset()
	dir, _ = c.status()
	assert.Equal(t, filepath.Join(own, "webgpu"), dir, "WEBTENSOR_CACHE_DIR wins over XDG_CACHE_HOME")

	t.Setenv("WEBTENSOR_NO_DISK_CACHE", "1")
	c.reset()
	dir, off = c.status()
	assert.Empty(t, dir)
	assert.Contains(t, off, "WEBTENSOR_NO_DISK_CACHE=1")
	c.store(entryKernel, "k", "src")
	var src string
	assert.False(t, c.load(entryKernel, "k", &src))
	ents, err := os.ReadDir(own)
	require.NoError(t, err)
	assert.Empty(t, ents, "nothing is written when the cache is off")
	assert.Zero(t, c.misses.Load()+c.writes.Load(), "an off cache counts nothing")

	if os.Getenv("HOME") != "" {
		t.Setenv("WEBTENSOR_NO_DISK_CACHE", "")
		t.Setenv("WEBTENSOR_CACHE_DIR", "")
		t.Setenv("XDG_CACHE_HOME", "")
		c.reset()
		base, err := os.UserCacheDir()
		require.NoError(t, err)
		dir, _ = c.status()
		assert.Equal(t, filepath.Join(base, "webtensor", "webgpu"), dir, "without XDG_CACHE_HOME: os.UserCacheDir")
	}
}

// A cache directory that cannot be made turns writing off with one
// warning; lookups go on missing and nothing fails.
func TestDiskCacheUnwritableDirectoryWarnsOnce(t *testing.T) {
	privateCache(t)
	blocker := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(blocker, []byte("not a directory"), 0o644))
	t.Setenv("WEBTENSOR_CACHE_DIR", blocker)
	var warnings bytes.Buffer
	old := core.WarnWriter
	core.WarnWriter = &warnings
	t.Cleanup(func() { core.WarnWriter = old })

	c := &diskCache{device: "d"}
	for i := range 5 {
		c.store(entryKernel, fmt.Sprint("k", i), "src")
		var src string
		assert.False(t, c.load(entryKernel, fmt.Sprint("k", i), &src))
	}
	assert.Zero(t, c.writes.Load())
	assert.Equal(t, 1, strings.Count(warnings.String(), "warning:"), warnings.String())
	assert.Contains(t, warnings.String(), blocker)
}

// cacheHammer stores and loads the same entries from many goroutines; every
// hit must hold the value its key was stored with.
func cacheHammer(t testing.TB, c *diskCache, goroutines, rounds int) {
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				name := fmt.Sprintf("kernel-%d", (g+r)%7)
				want := strings.Repeat(name+" source line\n", 50+(g+r)%7)
				var got string
				if c.load(entryKernel, name, &got) && got != want {
					t.Errorf("%s read back %d bytes that differ from the %d stored", name, len(got), len(want))
				}
				c.store(entryKernel, name, want)
			}
		}()
	}
	wg.Wait()
}

// checkCacheFiles fails on any entry file that does not decode, and on
// temporary files left behind.
func checkCacheFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".entry") {
			t.Errorf("left behind in the cache: %s", e.Name())
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		var ent diskEntry
		assert.NoError(t, decodeEntry(raw, &ent), e.Name())
		n++
	}
	return n
}

func TestDiskCacheConcurrentGoroutines(t *testing.T) {
	dir := privateCache(t)
	c := &diskCache{device: "d"}
	cacheHammer(t, c, 16, 60)
	assert.Zero(t, c.corrupt.Load(), "no reader saw a half-written file")
	assert.Equal(t, 7, checkCacheFiles(t, dir))
}

// helperEnv marks a re-executed test binary as a helper process (the
// standard os/exec pattern): its value says what to do.
const helperEnv = "WEBTENSOR_DISKCACHE_HELPER"

// helper starts this test binary again to run TestDiskCacheHelperProcess
// in mode, with its cache in dir.
func helper(t *testing.T, mode, dir, report string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskCacheHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "WEBTENSOR_CACHE_DIR="+dir,
		"WEBTENSOR_DISKCACHE_REPORT="+report, "WEBTENSOR_NO_DISK_CACHE=", "WEBTENSOR_TUNE=")
	return cmd
}

// Two processes hammering one cache directory at once both succeed, never
// read a torn file, and leave only valid files.
func TestDiskCacheConcurrentProcesses(t *testing.T) {
	base := t.TempDir()
	var outs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = helper(t, "files", base, "")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		require.NoError(t, cmds[i].Start())
	}
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), "helper %d:\n%s", i, outs[i].String())
		assert.Contains(t, outs[i].String(), "PASS", "helper %d ran", i)
	}
	assert.Equal(t, 7, checkCacheFiles(t, filepath.Join(base, "webgpu")))
}

// TestDiskCacheHelperProcess is not a test: it is the body of the helper
// processes above, and skips unless started as one.
func TestDiskCacheHelperProcess(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		t.Skip("runs only as a helper process of the disk cache tests")
	case "files":
		c := &diskCache{device: "d"}
		cacheHammer(t, c, 8, 200)
		if n := c.corrupt.Load(); n > 0 {
			t.Fatalf("%d reads found a corrupt entry", n)
		}
	case "gpu":
		gpuHelper(t)
	default:
		t.Fatalf("unknown helper mode %q", os.Getenv(helperEnv))
	}
}

// Pruning removes abandoned temporary files and, past the cap, the oldest
// entries; fresh temporary files and other files stay.
func TestDiskCachePrunesOldEntriesAndAbandonedTemporaries(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	write := func(name string, age time.Duration) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
		require.NoError(t, os.Chtimes(path, now.Add(-age), now.Add(-age)))
		return path
	}
	oldTmp := write(".tmp-123", 2*time.Hour)
	newTmp := write(".tmp-456", time.Minute)
	other := write("README", 100*time.Hour)
	defer func(n int) { maxEntryFiles = n }(maxEntryFiles)
	maxEntryFiles = 8
	var entries []string
	for i := range 12 {
		entries = append(entries, write(fmt.Sprintf("wgsl-%02d.entry", i), time.Duration(12-i)*time.Minute))
	}
	removed := prune(dir, now)
	assert.Equal(t, 1+6, removed, "the old temporary and the 6 oldest of 12 entries (down to 3/4 of 8)")
	for i, p := range entries {
		_, err := os.Stat(p)
		assert.Equal(t, i >= 6, err == nil, "entry %d (older first)", i)
	}
	for path, kept := range map[string]bool{oldTmp: false, newTmp: true, other: true} {
		_, err := os.Stat(path)
		assert.Equal(t, kept, err == nil, path)
	}
	assert.Zero(t, prune(filepath.Join(dir, "missing"), now), "a missing directory prunes nothing")
}
