package cpu

import (
	"fmt"
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// buffer is CPU storage: 8-byte aligned so it can be viewed as any dtype.
type buffer struct {
	buf []byte
}

func (b *buffer) Len() int     { return len(b.buf) }
func (b *buffer) Host() []byte { return b.buf }
func (b *buffer) Release()     { b.buf = nil }

// Backend is the CPU backend. It is stateless; all tensors share it.
type Backend struct{}

var theBackend = &Backend{}

func init() {
	core.RegisterBackend("cpu", 0, func() (core.Backend, error) { return theBackend, nil })
}

// Device is the host.
func (*Backend) Device() core.Device { return core.CPU }

// Capabilities lists every dtype: the CPU holds them all.
func (*Backend) Capabilities() core.Capabilities {
	return core.Capabilities{DTypes: core.AllDTypes, Description: "pure Go"}
}

// Alloc returns zeroed, 8-byte aligned memory.
func (*Backend) Alloc(d core.DType, numel int) (core.Storage, error) {
	if numel < 0 {
		return nil, fmt.Errorf("alloc: negative element count %d", numel)
	}
	if err := checkAlloc(numel * d.Size()); err != nil {
		return nil, err
	}
	return &buffer{buf: alignedBytes(numel * d.Size())}, nil
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
	buf := alignedBytes(len(data))
	copy(buf, data)
	return &buffer{buf: buf}, nil
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

var kernels = map[string]core.Kernel{}

// register installs a CPU kernel; called from init functions.
func register(name string, k core.Kernel) {
	if _, dup := kernels[name]; dup {
		panic("cpu: kernel registered twice: " + name)
	}
	kernels[name] = k
}

// Kernel returns the CPU kernel of op, or nil.
func (*Backend) Kernel(op string) core.Kernel { return kernels[op] }

// HasKernel reports whether the CPU backend implements op (for the manifest).
func HasKernel(op string) bool { _, ok := kernels[op]; return ok }
