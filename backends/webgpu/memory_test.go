package webgpu_test

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// rssBytes is the process's resident memory, or 0 where /proc is missing,
// after returning the Go heap's garbage to the system: what is left is
// live Go memory and the driver's.
func rssBytes(t *testing.T) int64 {
	debug.FreeOSMemory()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	return 0
}

// Released tensors give their memory back at once, whether they were
// uploaded (with no kernel or read after them) or written by kernels: rounds of
// 16 x 48 MiB tensors used to grow the process by the whole round each time
// (wgpu-native kept every upload's staging copy and every destroyed buffer
// until the next kernel ran and polled), and the pool kept up to 512 MiB.
// On a software adapter GPU memory is host memory, so RSS measures it.
func TestReleasedTensorsReturnTheirMemory(t *testing.T) {
	b := needGPU(t)
	if testing.Short() || !b.Capabilities().Software {
		t.Skip("measures GPU memory as RSS: needs a software adapter and no -short")
	}
	if rssBytes(t) == 0 {
		t.Skip("no /proc/self/status to read the resident size from")
	}
	const count, size = 16, 48 << 20
	raw := make([]byte, size)
	const slack = 64 << 20 // the Go heap, the driver's own allocations
	// The first kernels of a process start the driver's threads and compile
	// code: part of the baseline, not of the tensors.
	warm := core.FromBytes(core.F32, core.Shape{1 << 20}, raw[:4<<20], gpu)
	_, err := core.Call1("slice", core.Attrs{"axis": 0, "start": 0, "stop": 1}, warm.Add(warm)).Float64s()
	require.NoError(t, err)
	warm.Release()
	require.NoError(t, b.EmptyCache())
	base := rssBytes(t)
	for round := range 4 {
		// Even rounds only upload and release, with no kernel or read that
		// would submit and poll the device; odd rounds add kernel results.
		kernels := round%2 == 1
		ts := make([]*core.Tensor, 0, 2*count)
		for i := range count {
			x := core.FromBytes(core.F32, core.Shape{size / 4}, raw, gpu)
			require.NoError(t, x.Err())
			ts = append(ts, x)
			if kernels && i%2 == 1 {
				ts = append(ts, x.Add(x))
			}
		}
		if kernels {
			_, err = core.Call1("slice", core.Attrs{"axis": 0, "start": 0, "stop": 1}, ts[len(ts)-1]).Float64s()
			require.NoError(t, err)
		}
		require.Greater(t, rssBytes(t)-base, int64(count*size/2), "round %d: the tensors are resident", round)
		for _, x := range ts {
			x.Release()
		}
		stats := b.MemoryStats()
		require.LessOrEqual(t, stats.Pooled, int64(256<<20), "round %d: the pool's bound", round)
		over := settle(t, base, stats.Pooled+slack)
		t.Logf("round %d: %d MiB over the start, %d MiB pooled", round, over>>20, stats.Pooled>>20)
		require.LessOrEqual(t, over, stats.Pooled+slack, "round %d: resident bytes over the start after releasing everything", round)
	}
	require.NoError(t, b.EmptyCache())
	require.Zero(t, b.MemoryStats().Pooled)
	require.LessOrEqual(t, settle(t, base, slack), int64(slack), "resident bytes over the start after emptying the pool")
}

// settle waits up to two seconds (the copies and kernels in flight finish
// first) for the resident size to come within limit bytes of base, and
// returns how far over base it is.
func settle(t *testing.T, base, limit int64) int64 {
	deadline := time.Now().Add(2 * time.Second)
	for {
		over := rssBytes(t) - base
		if over <= limit || time.Now().After(deadline) {
			return over
		}
		time.Sleep(10 * time.Millisecond)
	}
}
