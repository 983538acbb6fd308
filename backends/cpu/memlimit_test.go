package cpu

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func TestCgroupLimitFiles(t *testing.T) {
	// v1 with a memory controller, as a job scheduler places a process.
	v1 := "9:name=systemd:/\n4:memory:/jobs/abc\n1:cpu:/\n0::/\n"
	assert.Equal(t, []string{"/sys/fs/cgroup/memory/jobs/abc/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.limit_in_bytes",
		"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.max"}, cgroupLimitFiles(v1))
	// v2 only, a container's view.
	assert.Equal(t, []string{"/sys/fs/cgroup/user.slice/memory.max", "/sys/fs/cgroup/memory.max"},
		cgroupLimitFiles("0::/user.slice\n"))
	assert.Empty(t, cgroupLimitFiles("garbage\n\n"))

	assert.Equal(t, int64(0), parseMemoryLimit("max\n"))
	assert.Equal(t, int64(0), parseMemoryLimit("9223372036854771712\n")) // v1's "none"
	assert.Equal(t, int64(8<<30), parseMemoryLimit("8589934592\n"))
	assert.Equal(t, int64(0), parseMemoryLimit("-1"))
}

// An allocation the heap cannot take beside what is in use is an error
// naming the sizes, not the fatal "out of memory" that ends a Go process;
// what the cache holds free is given back before refusing.
func TestFreshAllocationsStayUnderTheLimit(t *testing.T) {
	maxAllocBytes()
	saved := limit
	defer func() { limit = saved }()
	b := &Backend{}
	require.NoError(t, b.EmptyCache()) // earlier tests' free blocks would serve these without a fresh allocation
	runtime.GC()
	limit = heapInUse() + 256<<20

	s, err := b.Alloc(core.F32, 160<<20/4) // 160 MB fits
	require.NoError(t, err)
	_, err = b.Alloc(core.F32, 160<<20/4) // a second does not, while the first lives
	require.ErrorContains(t, err, "cpu: cannot allocate")
	require.ErrorContains(t, err, "-byte limit are in use")
	s.Release()

	// The first one's block is free in the cache now, or collected: either
	// way a third allocation of its size fits again.
	s, err = b.Alloc(core.F32, 160<<20/4)
	require.NoError(t, err)
	s.Release()
	require.NoError(t, b.EmptyCache())
}
