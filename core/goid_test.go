package core

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGoroutineIDMatchesTheStackTrace(t *testing.T) {
	if runtime.GOARCH == "amd64" {
		require.GreaterOrEqual(t, goidOffset, 0, "amd64 finds where g holds the id")
	}
	var wg sync.WaitGroup
	ids := make([]uint64, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = goroutineID()
			assert.Equal(t, goroutineIDFromStack(), ids[i])
		}()
	}
	wg.Wait()
	seen := map[uint64]bool{}
	for _, id := range ids {
		assert.False(t, seen[id], "ids are distinct")
		seen[id] = true
	}
	assert.Equal(t, goroutineIDFromStack(), goroutineID())
}

func BenchmarkGoroutineID(b *testing.B) {
	for b.Loop() {
		goroutineID()
	}
}
