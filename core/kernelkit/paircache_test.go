package kernelkit_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/kernelkit"
)

// An entry is found again for the same tensors and size only; the first
// store wins; the entry is dropped, once, when one of its tensors is
// collected, and the cache keeps neither alive.
func TestPairCacheRemembersForTheTensorsLife(t *testing.T) {
	var dropped atomic.Int32
	c := kernelkit.PairCache[*int]{Drop: func(*int) { dropped.Add(1) }}
	b := core.FromSlice([]int64{0}, core.Shape{1})
	one, two := 1, 2
	func() { // a, like a graph's adjacency, lives only here
		a := core.FromSlice([]int64{0, 1}, core.Shape{2})
		assert.Same(t, &one, c.Store(a, b, 3, &one))
		assert.Same(t, &one, c.Store(a, b, 3, &two), "the first store wins")
		got, ok := c.Load(a, b, 3)
		require.True(t, ok)
		assert.Same(t, &one, got)
		_, ok = c.Load(a, b, 4)
		assert.False(t, ok, "another size")
		_, ok = c.Load(b, a, 3)
		assert.False(t, ok, "the tensors swapped")
		require.Equal(t, 1, c.Len())
	}()
	for deadline := time.Now().Add(5 * time.Second); (c.Len() > 0 || dropped.Load() == 0) && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.Zero(t, c.Len(), "the entry outlived one of its tensors")
	assert.Equal(t, int32(1), dropped.Load(), "dropped once")
	runtime.KeepAlive(b)
}
