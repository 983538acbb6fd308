package webgpu

import (
	"fmt"
	"math/bits"
	"runtime"

	"github.com/cogentcore/webgpu/wgpu"
	"github.com/webtensor/webtensor/core"
)

// slot is one pooled GPU buffer while a tensor owns it.
type slot struct {
	buf      *wgpu.Buffer
	size     uint64 // bytes allocated (the size class)
	released bool
}

// storage is a tensor's GPU memory: numel elements of dtype, held as
// 32-bit words (see physical).
type storage struct {
	b       *Backend
	slot    *slot
	dtype   core.DType
	numel   int
	cleanup runtime.Cleanup
}

func (s *storage) Len() int { return s.numel * s.dtype.Size() }

// Release gives the buffer back; the pool reuses it once the work queued
// so far has been submitted.
func (s *storage) Release() {
	s.cleanup.Stop()
	s.b.retire(s.slot)
}

// newStorage takes a buffer for numel elements from the pool; the caller
// holds b.mu. A finaliser returns it if the tensor is dropped unreleased.
func (b *Backend) newStorage(dtype core.DType, numel int) (*storage, error) {
	if numel < 0 {
		return nil, fmt.Errorf("webgpu: negative element count %d", numel)
	}
	bytes := uint64(numel) * 4
	if bytes > b.limits.MaxStorageBufferBindingSize {
		return nil, fmt.Errorf("webgpu: %d elements of %v need %d bytes on the GPU, more than the adapter's largest binding (%d bytes); split the tensor or use device cpu",
			numel, dtype, bytes, b.limits.MaxStorageBufferBindingSize)
	}
	buf, size, err := b.pool.get(bytes)
	if err != nil {
		return nil, err
	}
	sl := &slot{buf: buf, size: size}
	s := &storage{b: b, slot: sl, dtype: dtype, numel: numel}
	s.cleanup = runtime.AddCleanup(s, func(sl *slot) { b.retire(sl) }, sl)
	return s, nil
}

// retire marks a buffer free. It joins the pool at the next submit, so that
// work already encoded against it still sees the old contents.
func (b *Backend) retire(sl *slot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if sl.released {
		return
	}
	sl.released = true
	if b.batch.n == 0 {
		b.pool.put(sl.buf, sl.size)
		return
	}
	b.batch.retired = append(b.batch.retired, sl)
}

// bufferPool keeps released buffers by size class. Classes step by quarter
// powers of two (at most 25% waste); the pool holds at most maxPooled bytes.
type bufferPool struct {
	device *wgpu.Device
	usage  wgpu.BufferUsage
	free   map[uint64][]*wgpu.Buffer
	bytes  uint64
	// reused and created count the buffers get handed out from the pool
	// and the ones it had to create (PoolStats).
	reused, created int64
}

const maxPooled = 512 << 20

func sizeClass(n uint64) uint64 {
	if n <= 256 {
		return 256
	}
	hi := uint64(1) << (63 - bits.LeadingZeros64(n-1)) // largest power of two below n
	step := hi / 4
	return (n + step - 1) / step * step
}

func (p *bufferPool) get(n uint64) (*wgpu.Buffer, uint64, error) {
	c := sizeClass(n)
	if l := p.free[c]; len(l) > 0 {
		buf := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.bytes -= c
		p.reused++
		return buf, c, nil
	}
	buf, err := p.device.CreateBuffer(&wgpu.BufferDescriptor{Usage: p.usage, Size: c})
	if err != nil {
		return nil, 0, fmt.Errorf("webgpu: allocating a %d-byte buffer: %w", c, err)
	}
	p.created++
	return buf, c, nil
}

// PoolStats reports how many tensor buffers this device took from its pool
// of released ones and how many it had to create: a graph run that
// releases its intermediates (core/ir) turns creations into reuse.
func (b *Backend) PoolStats() (reused, created int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pool.reused, b.pool.created
}

func (p *bufferPool) put(buf *wgpu.Buffer, c uint64) {
	if p.bytes+c > maxPooled {
		buf.Destroy()
		buf.Release()
		return
	}
	if p.free == nil {
		p.free = map[uint64][]*wgpu.Buffer{}
	}
	p.free[c] = append(p.free[c], buf)
	p.bytes += c
}
