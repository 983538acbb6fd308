//go:build linux && cgo

package cuda

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
)

// storage is a tensor's device memory: numel elements of dtype at their
// native width, from the allocator, or borrowed from another runtime
// through DLPack (then release calls the owner's deleter instead).
type storage struct {
	b        *Backend
	ptr      devicePtr
	dtype    core.DType
	numel    int
	borrowed func() // DLPack deleter of imported memory; nil for our own
	released atomic.Bool
	cleanup  runtime.Cleanup
}

func (s *storage) Len() int { return s.numel * s.dtype.Size() }

// Release gives the block back to the allocator's cache at once: later
// kernels are queued after the ones that used it, so reuse is safe.
func (s *storage) Release() {
	if s.released.Swap(true) {
		return
	}
	s.cleanup.Stop()
	releaseMemory(s.b, s.ptr, s.borrowed)
}

func releaseMemory(b *Backend, p devicePtr, borrowed func()) {
	if borrowed != nil {
		// The owner may free it at once: wait for our reads and writes.
		_ = b.dev.sync()
		borrowed()
		return
	}
	_ = b.alloc.put(p)
}

// Pointer is the device address of the storage's first byte.
func (s *storage) Pointer() uint64 { return s.ptr }

func (b *Backend) newStorage(dtype core.DType, numel int) (*storage, error) {
	bytes := uint64(numel) * uint64(dtype.Size())
	if numel > 0 && bytes/uint64(numel) != uint64(dtype.Size()) {
		return nil, fmt.Errorf("cuda: %d elements of %v overflow the address space", numel, dtype)
	}
	p, err := b.alloc.get(max(bytes, 1))
	if err != nil {
		return nil, fmt.Errorf("cuda: allocating %d elements of %v: %w", numel, dtype, err)
	}
	s := &storage{b: b, ptr: p, dtype: dtype, numel: numel}
	s.cleanup = runtime.AddCleanup(s, func(p devicePtr) { _ = b.alloc.put(p) }, p)
	return s, nil
}

// WrapDevicePointer makes storage over numel elements at p that another
// runtime owns (a DLPack import); release runs when the last tensor on it
// is released or collected.
func (b *Backend) WrapDevicePointer(p uint64, dtype core.DType, numel int, release func()) (core.Storage, error) {
	if err := b.usable(); err != nil {
		return nil, err
	}
	if p != 0 && b.ctx != nil {
		mt, ord, err := pointerDevice(b.ctx, p)
		if err != nil {
			return nil, fmt.Errorf("cuda: pointer %#x is not CUDA memory of this process: %w", p, err)
		}
		if mt != 2 && mt != 4 { // device or managed
			return nil, fmt.Errorf("cuda: pointer %#x is host memory (memory type %d), not device memory", p, mt)
		}
		if ord != b.index {
			return nil, fmt.Errorf("cuda: pointer %#x is on cuda:%d, not cuda:%d", p, ord, b.index)
		}
	}
	s := &storage{b: b, ptr: p, dtype: dtype, numel: numel, borrowed: release}
	if release == nil {
		s.borrowed = func() {}
	}
	s.cleanup = runtime.AddCleanup(s, func(r func()) { releaseMemory(b, 0, r) }, s.borrowed)
	return s, nil
}

// ptrOf is the device address of a tensor's first element.
func ptrOf(t *core.Tensor) (devicePtr, error) {
	s, ok := t.Storage().(*storage)
	if !ok {
		return 0, fmt.Errorf("cuda: tensor on %v given to a cuda kernel", t.Device())
	}
	if s.released.Load() {
		return 0, fmt.Errorf("cuda: tensor used after its memory was released")
	}
	return s.ptr, nil
}

// StreamHandle is the backend's CUDA stream (a CUstream), for DLPack's
// stream exchange; 0 on the test devices.
func (b *Backend) StreamHandle() uintptr {
	if d, ok := b.dev.(*driverDevice); ok {
		return uintptr(d.stream)
	}
	return 0
}
