package main

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSmallBlocksAreReused(t *testing.T) {
	mem, free, err := hostAlloc(32)
	require.NoError(t, err)
	p := unsafe.Pointer(&mem[0])
	assert.Zero(t, uintptr(p)%64, "64-byte aligned")
	free()
	smallFree.Lock()
	pooled := false
	for _, b := range smallFree.lists[0] {
		pooled = pooled || b.p == p
	}
	smallFree.Unlock()
	assert.True(t, pooled, "a freed small block waits in its class's free list")
	again, free2, err := hostAlloc(60) // the same 64-byte class
	require.NoError(t, err)
	defer free2()
	assert.Len(t, again, 60)
}

// Dropped results are freed only by the GC, which does not see C memory:
// without the pacer, 400 dropped 1 MiB results were all still allocated
// (the Go heap grows a few hundred bytes per op, far from a collection).
func TestCMemoryPacesTheCollector(t *testing.T) {
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
