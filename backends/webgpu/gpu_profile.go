package webgpu

import (
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/webtensor/webtensor/core"
)

// KernelTime is one kernel's share of a profile: how often it ran and the
// wall time its dispatches took, each waited for on its own.
type KernelTime struct {
	Kernel string // the op that ran it, then the kernel family: "layer_norm/reduce"
	Calls  int
	Total  time.Duration
}

// kernelProfile collects KernelTimes while profiling is on; b.mu guards
// it. on is read without the lock on every op and dispatch, so that code
// pays one atomic load when nobody profiles.
type kernelProfile struct {
	on    atomic.Bool
	op    string // the op whose kernel is running
	times map[string]*KernelTime
}

// profiled wraps k so that, while profiling, its dispatches are charged to
// op.
func (b *Backend) profiled(op string, k core.Kernel) core.Kernel {
	return func(c *core.KernelCall) error {
		// A kernel that calls others (attention runs matmuls) gets its own
		// name back for the dispatches after theirs.
		prev := b.profileOpSwap(op)
		defer b.profileOpSwap(prev)
		return k(c)
	}
}

// profileOp names the op whose dispatches follow, when profiling.
func (b *Backend) profileOp(op string) { b.profileOpSwap(op) }

// profileOpSwap names the op whose dispatches follow and returns the
// previous name.
func (b *Backend) profileOpSwap(op string) string {
	if !b.profiling() {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	prev := b.profile.op
	b.profile.op = op
	return prev
}

// profiling reports whether a profile is being taken.
func (b *Backend) profiling() bool { return b.profile.on.Load() }

// StartKernelProfile makes every later dispatch run at once and wait for
// the GPU, charging the time to its kernel until StopKernelProfile. Waiting
// serialises the GPU, so totals are larger than in a batched run; what the
// profile shows is where the time goes, not how long a step takes.
func (b *Backend) StartKernelProfile() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.profile.op, b.profile.times = "", map[string]*KernelTime{}
	b.profile.on.Store(true)
}

// StopKernelProfile ends profiling and returns the kernels by total time,
// longest first.
func (b *Backend) StopKernelProfile() []KernelTime {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]KernelTime, 0, len(b.profile.times))
	for _, t := range b.profile.times {
		out = append(out, *t)
	}
	b.profile.on.Store(false)
	b.profile.op, b.profile.times = "", nil
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total != out[j].Total {
			return out[i].Total > out[j].Total
		}
		return out[i].Kernel < out[j].Kernel
	})
	return out
}

// profileDispatch submits the dispatch just recorded, waits for it and
// charges the time since start to p's kernel; the caller holds b.mu.
func (b *Backend) profileDispatch(p *pipeline, start time.Time) error {
	if err := b.flushLocked(); err != nil {
		return err
	}
	b.waitIdle()
	name := p.key
	if i := strings.IndexAny(name, ":|"); i > 0 {
		name = name[:i]
	}
	if b.profile.op != "" {
		name = b.profile.op + "/" + name
	}
	t := b.profile.times[name]
	if t == nil {
		t = &KernelTime{Kernel: name}
		b.profile.times[name] = t
	}
	t.Calls++
	t.Total += time.Since(start)
	return nil
}
