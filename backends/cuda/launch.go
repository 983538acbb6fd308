//go:build linux && cgo

package cuda

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/webtensor/webtensor/backends/lower"
)

// kfunc is a compiled kernel.
type kfunc struct {
	key string
	h   kernelHandle
	src string // the source, kept only while verifyKernelKeys is on
}

// kernelFor returns the compiled kernel for key, rendering and compiling
// its source on first use (NVRTC, or the disk cache). Compiling happens
// outside the lock: NVRTC is thread-safe, and a second goroutine that
// compiled the same key meanwhile simply loses the race.
func (b *Backend) kernelFor(key string, render func() (string, error)) (*kfunc, error) {
	b.kmu.Lock()
	k := b.kernels[key]
	b.kmu.Unlock()
	if k != nil {
		if verifyKernelKeys.Load() && k.src != "" { // "": compiled before verifying began
			if err := lower.SameSource("cuda", key, k.src, render); err != nil {
				return nil, err
			}
		}
		return k, nil
	}
	body, err := render()
	if err != nil {
		return nil, err
	}
	h, err := b.dev.build(kernelName(key), prelude+"\n"+body)
	if err != nil {
		return nil, fmt.Errorf("cuda: kernel %s: %w", kernelName(key), err)
	}
	b.kmu.Lock()
	defer b.kmu.Unlock()
	if k := b.kernels[key]; k != nil {
		return k, nil
	}
	k = &kfunc{key: key, h: h}
	if verifyKernelKeys.Load() {
		k.src = body
	}
	b.kernels[key] = k
	return k, nil
}

// verifyKernelKeys makes every kernel cache hit render the kernel again
// and fail when the source differs (lower.SameSource).
var verifyKernelKeys atomic.Bool

// VerifyKernelKeys is for test suites (the emulator's and the GPU's turn it
// on): from now on every kernel cache hit renders the kernel's source again
// and fails the call, naming the key, when it differs from the cached one.
func VerifyKernelKeys() { verifyKernelKeys.Store(true) }

// kernelName is a readable file name for a key in compiler messages.
func kernelName(key string) string {
	name, _, _ := strings.Cut(key, "|")
	return name
}

// check is how a launch's failed check reads as an error: the op and a
// message made from the two values the kernel reported (wt_fail).
type check struct {
	op  string
	msg func(code uint32, a, b int64) string
}

// launchSpec is one kernel launch.
type launchSpec struct {
	op     string // the registry op, for errors
	k      *kfunc
	grid   [3]uint32
	block  int
	shared int
	check  func(code uint32, a, b int64) string // nil: the kernel checks nothing
}

var argPool = sync.Pool{New: func() any { return new(wtArgs) }}

// launch queues one kernel on the stream.
func (b *Backend) launch(l launchSpec, a *wtArgs) error {
	if err := b.usable(); err != nil {
		return err
	}
	for _, g := range l.grid {
		if g == 0 {
			return nil
		}
	}
	b.mu.Lock()
	b.launchN++
	a.Launch = b.launchN
	a.Err = b.errWord
	if l.check != nil {
		b.checks[a.Launch] = check{op: l.op, msg: l.check}
	}
	if len(b.recent) < 64 {
		b.recent = append(b.recent, l.op)
	}
	b.mu.Unlock()
	// The block goes to the driver from a pooled copy: a caller's args
	// then stay on its stack (the cgo call would move them to the heap,
	// 1.4 KB per launch), and the driver copies them during the call.
	pooled := argPool.Get().(*wtArgs)
	*pooled = *a
	err := b.dev.run(l.k.h, l.grid, l.block, l.shared, pooled.bytes())
	argPool.Put(pooled)
	if err != nil {
		return b.fault(l.op, err)
	}
	if b.syncAll {
		return b.Sync()
	}
	return nil
}

// usable fails once a sticky fault has made the context unusable.
func (b *Backend) usable() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.broken
}

// fault turns a driver error during op into the error to return. After a
// sticky fault (an illegal address, a failed launch) every later call on
// the context fails too, so the backend says so once and refuses further
// work; the error names the ops queued since the last synchronisation,
// one of which caused it.
func (b *Backend) fault(op string, err error) error {
	var ce *cuError
	if !errors.As(err, &ce) || !ce.sticky() {
		return fmt.Errorf("cuda: %s: %w", op, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken == nil {
		ops := strings.Join(uniq(b.recent), ", ")
		b.broken = fmt.Errorf("cuda: the device reported %w during %s; a kernel of one of these ops, queued since the last synchronisation, caused it: %s (run with WEBTENSOR_CUDA_SYNC=1 to find which). The CUDA context is unusable now: restart the process", err, op, ops)
	}
	return b.broken
}

// afterSync runs once the stream is idle: it reads the error word and, if
// a kernel failed a check, clears it and returns the error.
func (b *Backend) afterSync() error {
	var word [24]byte
	if err := b.dev.download(word[:], b.errWord); err != nil {
		return b.fault("sync", err)
	}
	b.mu.Lock()
	checks := b.checks
	b.checks = map[uint32]check{}
	b.recent = b.recent[:0]
	b.mu.Unlock()
	code := le32(word[0:])
	if code == 0 {
		return nil
	}
	if err := b.dev.zero(b.errWord, 64); err != nil {
		return b.fault("sync", err)
	}
	launchN := le32(word[4:])
	va, vb := int64(le64(word[8:])), int64(le64(word[16:]))
	c, ok := checks[launchN]
	if !ok {
		return fmt.Errorf("cuda: a kernel failed check %d (values %d, %d)", code, va, vb)
	}
	return fmt.Errorf("cuda: an earlier %s call failed: %s", c.op, c.msg(code, va, vb))
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

func uniq(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// gridFor is the number of blocks for n threads, capped: kernels loop
// (grid-stride) over what one grid does not cover.
func (b *Backend) gridFor(n int64, block int) [3]uint32 {
	g := (n + int64(block) - 1) / int64(block)
	limit := int64(max(b.props.sms, 1)) * 32
	if g > limit {
		g = limit
	}
	return [3]uint32{uint32(max(g, 1)), 1, 1}
}
