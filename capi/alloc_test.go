package main

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmallBlocksComeFromSlabs(t *testing.T) {
	pinThread(t)
	owners := map[any]uintptr{} // owner -> last address seen in it
	for range slabBlocks {
		m, err := hostAlloc(40) // the 64-byte class
		require.NoError(t, err)
		require.Len(t, m.Mem, 40)
		require.Nil(t, m.Free, "a slab block has no free of its own")
		p := uintptr(unsafe.Pointer(&m.Mem[0]))
		assert.Zero(t, p%64, "64-byte aligned")
		if last, ok := owners[m.Owner]; ok {
			assert.Equal(t, last+64, p, "the next block of the same slab")
		}
		owners[m.Owner] = p
	}
	assert.LessOrEqual(t, len(owners), 2, "%d blocks span at most two slabs", slabBlocks)
}

func TestAnUnreachableSlabIsReused(t *testing.T) {
	pinThread(t)
	const class = 3 // 256-byte blocks, unused by the other tests
	slabs.Lock()
	before := len(slabs.free[class])
	slabs.Unlock()
	for range 2 * slabBlocks { // fills one slab and starts another: the first is then unreachable
		_, err := hostAlloc(200)
		require.NoError(t, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		slabs.Lock()
		n := len(slabs.free[class])
		slabs.Unlock()
		if n > before || time.Now().After(deadline) {
			assert.Greater(t, n, before, "the slab's memory is on the free list")
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Dropped results are freed only by the GC, which does not see C memory:
// without the pacer, 400 dropped 1 MiB results were all still allocated
// (the Go heap grows a few hundred bytes per op, far from a collection).
func TestCMemoryPacesTheCollector(t *testing.T) {
	pinThread(t)
	const n = 1 << 18 // f32 elements: 1 MiB
	x := mustTensor(t, make([]float32, n), n)
	defer callFree(x)
	peak := int64(0)
	for range 400 {
		st, outs, _ := callOp("neg", false, []int64{x}, nil, 1)
		require.Equal(t, int32(statusOK), st, lastError())
		require.Equal(t, int32(statusOK), callFree(outs[0]))
		peak = max(peak, cmem.live.Load())
	}
	assert.Less(t, peak, int64(300<<20), "C bytes held by dropped tensors")
}
