package main

import (
	"errors"
	"fmt"
	"github.com/webtensor/webtensor/abi"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
)

// Closing tensors returns their memory although nothing allocates after
// the closes: the collector, which alone can free a closed tensor's
// storage, does not see that memory. Before the closed-tensor pacer, 24
// closed 32 MiB tensors stayed allocated on both backends.
func TestClosedTensorsReturnTheirMemory(t *testing.T) {
	pinThread(t)
	const count, size = 24, 32 << 20
	data := make([]byte, size)
	for _, device := range []string{"cpu", "webgpu"} {
		t.Run(device, func(t *testing.T) {
			pinThread(t)
			// C memory less the CPU cache's free blocks: a closed tensor's
			// block may go back to the cache (backends/cpu/alloc.go) instead
			// of to free, and a new tensor may take a cached one.
			cpuBackend, err := core.BackendFor(core.CPU)
			require.NoError(t, err)
			held := func() int64 { return cmem.live.Load() - cpuBackend.(*cpu.Backend).MemoryStats().Cached }
			if device == "webgpu" {
				b, err := core.BackendFor(core.Device{Kind: "webgpu"})
				if errors.Is(err, webgpu.ErrNoAdapter) {
					t.Skipf("no WebGPU adapter: %v", err)
				}
				require.NoError(t, err)
				held = func() int64 { return b.(*webgpu.Backend).MemoryStats().Live }
			}
			before := held()
			hs := make([]int64, count)
			for i := range hs {
				st, h := callFromData(data, size, int32(core.F32), []int64{size / 4}, 1, device)
				require.Equal(t, int32(statusOK), st, lastError())
				hs[i] = h
			}
			require.GreaterOrEqual(t, held()-before, int64(count*size), "the tensors hold their memory")
			for _, h := range hs {
				require.Equal(t, int32(statusOK), callFree(h), lastError())
			}
			// Within a collection's time, with no allocation to prompt one.
			deadline := time.Now().Add(10 * time.Second)
			for held()-before > abi.ClosedGCBytes && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			require.LessOrEqual(t, held()-before, int64(abi.ClosedGCBytes),
				fmt.Sprintf("bytes still held after closing %d tensors of %d MiB", count, size>>20))
		})
	}
}
