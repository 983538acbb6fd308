package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/gcpace"
)

// buffer is CPU storage: 8-byte aligned so it can be viewed as any dtype.
// Memory from a HostAllocator or adopted with WrapHost is freed by its own
// free function, once: on Release or when the buffer becomes unreachable.
type buffer struct {
	buf     []byte
	foreign bool // memory outside the Go heap: its address may be handed to C
	cleanup runtime.Cleanup
	free    *hostFree
	owner   any // HostMemory.Owner, kept reachable with the buffer

	blk   atomic.Pointer[block] // the cache's block (alloc.go), returned on release
	dirty atomic.Bool           // a recycled block not yet cleared: Host clears it
	mu    sync.Mutex            // serialises that clear
}

// hostFree runs a foreign buffer's free function once, from Release or from
// the GC cleanup, whichever comes first. One object, and a cleanup that is a
// method rather than a closure, keep this to one allocation per buffer.
type hostFree struct {
	once sync.Once
	fn   func()
}

func (f *hostFree) run() { f.once.Do(f.fn) }

func (b *buffer) Len() int { return len(b.buf) }

// Host is the storage's memory, cleared first if it is a recycled block
// no kernel has claimed (see fillsOutputs).
func (b *buffer) Host() []byte {
	if b.dirty.Load() {
		b.mu.Lock()
		if b.dirty.Load() {
			clear(b.buf)
			b.dirty.Store(false)
		}
		b.mu.Unlock()
	}
	return b.buf
}

// claim marks a dirty buffer clean without clearing it: its caller writes
// every byte before anyone reads one.
func (b *buffer) claim() { b.dirty.Store(false) }

// claimOutput is claim for a kernel that allocated out itself (core.Empty)
// and writes every element of it before returning: a recycled block then
// need not be cleared first, as for the kernels of fillsOutputs.
func claimOutput(out *core.Tensor) {
	if b, ok := out.Storage().(*buffer); ok {
		b.claim()
	}
}

func (b *buffer) Release() {
	b.buf = nil
	if blk := b.blk.Swap(nil); blk != nil {
		b.cleanup.Stop()
		memCache.put(blk)
		memCache.unpace(len(blk.mem))
		return
	}
	if b.free != nil {
		b.cleanup.Stop()
		b.free.run()
	}
}

// HostMemory is one block from a HostAllocator. Free, when set, releases
// it and is called exactly once, when the storage is released or garbage
// collected. Owner, when set, stays reachable as long as the storage: an
// allocator that carves blocks out of larger ones can free those through
// its own cleanup on Owner and leave Free nil, which spares the GC a
// cleanup per tensor.
type HostMemory struct {
	Mem   []byte
	Free  func()
	Owner any
}

// HostAllocator supplies CPU storage outside the Go heap.
type HostAllocator func(bytes int) (HostMemory, error)

var hostAlloc HostAllocator

// SetHostAllocator makes the CPU backend allocate through a (for example
// C.malloc, so the C ABI can export tensors through DLPack without copying).
// Install it before any tensor is made; nil restores Go memory. The
// cache's free blocks, from the previous allocator, are let go.
func SetHostAllocator(a HostAllocator) {
	hostAlloc = a
	_ = theBackend.EmptyCache()
}

// WrapHost adopts memory owned elsewhere (an imported DLPack tensor) as CPU
// storage without copying; release is called exactly once, when the storage
// is released or garbage collected, from whichever goroutine gets there.
func WrapHost(mem []byte, release func()) core.Storage {
	return foreignBuffer(mem, release)
}

func foreignBuffer(mem []byte, free func()) *buffer {
	f := &hostFree{fn: free}
	b := &buffer{buf: mem, foreign: true, free: f}
	b.cleanup = runtime.AddCleanup(b, (*hostFree).run, f)
	return b
}

// IsForeign reports whether storage lives outside the Go heap (so its
// address may be given to C code) — true for HostAllocator and WrapHost memory.
func IsForeign(s core.Storage) bool {
	b, ok := s.(*buffer)
	return ok && b.foreign
}

// Backend is the CPU backend. It is stateless; all tensors share it.
type Backend struct{}

var theBackend = &Backend{}

func init() {
	core.RegisterBackend("cpu", 0, func() (core.Backend, error) { return theBackend, nil })
}

// Device is the host.
func (*Backend) Device() core.Device { return core.CPU }

// storedDTypes is every dtype: the CPU holds them all (complex ones as
// pairs of their real dtype, which core does for every backend).
var storedDTypes = append(append([]core.DType{}, core.AllDTypes...), core.ComplexDTypes...)

// Capabilities lists every dtype: the CPU holds them all.
func (*Backend) Capabilities() core.Capabilities {
	return core.Capabilities{DTypes: storedDTypes, Description: "pure Go"}
}

// Alloc returns 8-byte aligned memory that reads as zeros (a recycled block
// is cleared on first access unless a kernel claims it, alloc.go).
func (*Backend) Alloc(d core.DType, numel int) (core.Storage, error) {
	if numel < 0 {
		return nil, fmt.Errorf("alloc: negative element count %d", numel)
	}
	if err := checkAlloc(numel * d.Size()); err != nil {
		return nil, err
	}
	return newBuffer(numel * d.Size())
}

// newBuffer allocates storage that reads as zeros: from the cache, else
// from the host allocator, if one is installed, else from the Go heap.
func newBuffer(n int) (*buffer, error) {
	if b, ok, err := cachedBuffer(n); ok {
		return b, err
	}
	if hostAlloc == nil {
		if err := checkFresh(n); err != nil {
			return nil, err
		}
		return &buffer{buf: alignedBytes(n)}, nil
	}
	m, err := hostAlloc(n)
	if err != nil {
		return nil, err
	}
	clear(m.Mem)
	if m.Free == nil {
		return &buffer{buf: m.Mem, foreign: true, owner: m.Owner}, nil
	}
	b := foreignBuffer(m.Mem, m.Free)
	b.owner = m.Owner
	return b, nil
}

func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// Upload copies host bytes into new storage.
func (b *Backend) Upload(d core.DType, data []byte) (core.Storage, error) {
	if err := checkAlloc(len(data)); err != nil {
		return nil, err
	}
	buf, err := newBuffer(len(data))
	if err != nil {
		return nil, err
	}
	buf.claim()
	gcpace.Copy(buf.buf, data) // in steps a collection can stop between (a model's weights are tens of MB)
	return buf, nil
}

// Download copies bytes out of storage.
func (*Backend) Download(s core.Storage, off int, dst []byte) error {
	hs, ok := s.(core.HostStorage)
	if !ok {
		return fmt.Errorf("cpu: storage %T is not host memory", s)
	}
	h := hs.Host()
	if h == nil {
		return core.ErrReleased
	}
	if off < 0 || off+len(dst) > len(h) {
		return fmt.Errorf("cpu: download of %d bytes at %d exceeds storage of %d bytes", len(dst), off, len(h))
	}
	copy(dst, h[off:])
	return nil
}

// register installs a built-in CPU kernel in core's registry; called from
// init functions. Built-ins are wrapped to turn a refused temporary into
// the kernel's error (guardTemps) and, for those that write all of their
// outputs, to take recycled memory uncleared (claimOutputs); a plugin's
// kernels, registered through core.RegisterKernel, manage no temporaries
// of ours and see cleared outputs.
func register(name string, k core.Kernel) {
	k = guardTemps(k)
	if fillsOutputs[name] {
		k = claimOutputs(k)
	}
	core.MustRegisterKernel("cpu", name, k)
}

// Kernel returns the CPU kernel of op, or nil.
func (*Backend) Kernel(op string) core.Kernel { return core.LookupKernel("cpu", op) }

// KernelFor is Kernel answered from the op's memo (core.DefKerneler).
func (*Backend) KernelFor(def *core.OpDef) core.Kernel { return core.LookupKernelFor("cpu", def) }
