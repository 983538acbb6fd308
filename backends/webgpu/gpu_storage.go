package webgpu

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"

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
	b.gc.allocated(size)
	return s, nil
}

// retire marks a buffer free. It joins the pool at the next submit, so that
// work already encoded against it still sees the old contents.
func (b *Backend) retire(sl *slot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.retireLocked(sl)
}

func (b *Backend) retireLocked(sl *slot) {
	if sl.released {
		return
	}
	sl.released = true
	b.gc.freed(sl.size)
	if b.batch.n == 0 {
		b.putLocked(&b.pool, sl.buf, sl.size)
		return
	}
	b.batch.retired = append(b.batch.retired, sl)
	b.batch.retiredBytes += sl.size
	if b.batch.retiredBytes >= maxPooled {
		// Submit now, so that the memory of tensors closed while work is
		// being recorded is freed then rather than at some later read.
		_ = b.flushLocked()
	}
}

// putLocked returns a buffer to pool p; when the pool destroys it instead,
// wgpu-native is made to free its memory now (reclaimLocked). The caller
// holds b.mu.
func (b *Backend) putLocked(p *bufferPool, buf *wgpu.Buffer, c uint64) {
	if !p.put(buf, c) {
		b.reclaimLocked()
	}
}

// bufferPool keeps released buffers by size class. Classes step by quarter
// powers of two (at most 25% waste). It keeps at most maxPooled idle bytes
// and no buffer over maxPooledBuffer: the memory of a released tensor
// beyond that is destroyed at once, so closing tensors returns the process
// to its footprint before them (on a software adapter GPU memory is host
// memory). Reuse matters for the many small and middle-sized
// intermediates of a training step; a big buffer costs little to create
// next to the work that fills it.
type bufferPool struct {
	device *wgpu.Device
	usage  wgpu.BufferUsage
	free   map[uint64][]*wgpu.Buffer
	bytes  uint64
	// reused and created count the buffers get handed out from the pool
	// and the ones it had to create (PoolStats); destroyed counts those it
	// let go.
	reused, created, destroyed int64
}

const (
	maxPooled       = 256 << 20
	maxPooledBuffer = 64 << 20
)

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

// MemoryStats says what this device's buffers hold, in bytes: live, the
// buffers of tensors not yet released; pooled, released ones kept for
// reuse (tensor buffers and readback staging).
type MemoryStats struct {
	Live, Pooled int64
}

// MemoryStats reports the device's buffer memory.
func (b *Backend) MemoryStats() MemoryStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return MemoryStats{Live: b.gc.live.Load(), Pooled: int64(b.pool.bytes + b.staging.bytes)}
}

// MemoryInUse is the bytes of live buffers (what a trace's memory counter
// shows).
func (b *Backend) MemoryInUse() int64 { return b.MemoryStats().Live }

// EmptyCache destroys every pooled buffer, tensor and staging alike, so the
// device holds only the memory of live tensors.
func (b *Backend) EmptyCache() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.flushLocked(); err != nil {
		return err
	}
	b.pool.drain()
	b.staging.drain()
	b.reclaimLocked()
	return nil
}

// put keeps buf for reuse and reports true, or destroys it and reports
// false when the pool is full or buf is too big to keep.
func (p *bufferPool) put(buf *wgpu.Buffer, c uint64) bool {
	if c > maxPooledBuffer || p.bytes+c > maxPooled {
		destroy(buf)
		p.destroyed++
		return false
	}
	if p.free == nil {
		p.free = map[uint64][]*wgpu.Buffer{}
	}
	p.free[c] = append(p.free[c], buf)
	p.bytes += c
	return true
}

// drain destroys every buffer the pool keeps.
func (p *bufferPool) drain() {
	for c, l := range p.free {
		for _, buf := range l {
			destroy(buf)
			p.destroyed++
		}
		delete(p.free, c)
	}
	p.bytes = 0
}

// destroy frees a buffer's memory as soon as the GPU is done with it
// (Destroy) and drops our reference (Release).
func destroy(buf *wgpu.Buffer) {
	buf.Destroy()
	buf.Release()
}

// gpuPacer paces Go's collector by GPU memory, as capi's pacer does by C
// memory: only the collector releases a tensor dropped without Release
// (through its storage's cleanup), and it counts only the Go heap, which
// grows by a few hundred bytes per tensor whatever its GPU size. Once the
// bytes handed out since the last collection started here exceed those
// live then (and at least minGCTrigger), another collection starts.
type gpuPacer struct {
	live    atomic.Int64 // bytes of buffers owned by unreleased storages
	since   atomic.Int64 // bytes handed out since the last collection started here
	trigger atomic.Int64
	running atomic.Bool
}

const minGCTrigger = 256 << 20

func (m *gpuPacer) allocated(size uint64) {
	m.live.Add(int64(size))
	m.trigger.CompareAndSwap(0, minGCTrigger)
	if m.since.Add(int64(size)) < m.trigger.Load() || !m.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		runtime.GC()
		m.since.Store(0)
		m.trigger.Store(max(minGCTrigger, m.live.Load()))
		m.running.Store(false)
	}()
}

func (m *gpuPacer) freed(size uint64) { m.live.Add(-int64(size)) }
