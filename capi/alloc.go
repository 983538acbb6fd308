package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/webtensor/webtensor/backends/cpu"
)

// CPU tensors made through the ABI live in C memory (64-byte aligned), so a
// DLPack export can hand their address to C without a copy and without
// breaking the rule that C never holds Go pointers. The CPU backend frees
// the block when the storage is released or garbage collected.
func init() {
	cpu.SetHostAllocator(hostAlloc)
	// This library's Go heap holds only tensor headers and handles (the data
	// is C memory, paced below), a megabyte or so, so at the default GOGC
	// the collector ran every few thousand ops and took a quarter of a
	// small op's time. Four times the headroom costs a few MiB. GOGC, when
	// set, still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// Small blocks are reused rather than returned to C: every op output is an
// allocation, and for the few-element tensors of an SDK's per-op overhead,
// posix_memalign and free (two cgo calls and glibc's aligned-allocation path)
// cost more than the op. Blocks up to smallMax bytes come in smallClass-byte
// classes. Storage is freed by the GC's cleanups, a few thousand blocks at a
// time, so each class keeps up to keepBytes of free blocks (2 MiB in all)
// to carry the next few thousand ops; the rest go back to C.
const (
	smallClass = 64
	smallMax   = 256
	keepBytes  = 512 << 10
)

// block is one C allocation of a small class; free puts it back. free is
// made once per block, so handing a pooled block out allocates nothing.
type block struct {
	p     unsafe.Pointer
	class int
	free  func()
}

var smallFree struct {
	sync.Mutex
	lists [smallMax / smallClass][]*block
}

func (b *block) put() {
	size := (b.class + 1) * smallClass
	cmem.live.Add(-int64(size))
	smallFree.Lock()
	if l := smallFree.lists[b.class]; len(l) < keepBytes/size {
		smallFree.lists[b.class] = append(l, b)
		smallFree.Unlock()
		return
	}
	smallFree.Unlock()
	C.free(b.p)
}

func hostAlloc(n int) ([]byte, func(), error) {
	size := max(n, 1)
	if size <= smallMax {
		class := (size - 1) / smallClass
		cmem.allocated((class + 1) * smallClass)
		smallFree.Lock()
		if l := smallFree.lists[class]; len(l) > 0 {
			b := l[len(l)-1]
			smallFree.lists[class] = l[:len(l)-1]
			smallFree.Unlock()
			return unsafe.Slice((*byte)(b.p), n), b.free, nil
		}
		smallFree.Unlock()
		p, err := alignedC((class+1)*smallClass, n)
		if err != nil {
			cmem.live.Add(-int64((class + 1) * smallClass))
			return nil, nil, err
		}
		b := &block{p: p, class: class}
		b.free = b.put
		return unsafe.Slice((*byte)(p), n), b.free, nil
	}
	p, err := alignedC(size, n)
	if err != nil {
		return nil, nil, err
	}
	cmem.allocated(size)
	return unsafe.Slice((*byte)(p), n), func() { C.free(p); cmem.live.Add(-int64(size)) }, nil
}

// alignedC allocates size bytes for a request of n (the number reported).
func alignedC(size, n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if C.posix_memalign(&p, 64, C.size_t(size)) != 0 || p == nil {
		return nil, errf(statusOOM, "cannot allocate %d bytes of host memory", n)
	}
	return p, nil
}

// cmem paces the collector by C memory. Only the GC frees a dropped tensor's
// C block (through the storage's cleanup), and the GC counts only the Go
// heap, which grows by a few hundred bytes per tensor whatever its size: a
// Python loop dropping 1 MiB results reached 2.6 GiB before a collection.
// So once the C bytes handed out since the last collection we started
// exceed those live then (and at least minGCTrigger), we start another.
type cPacer struct {
	live    atomic.Int64 // C bytes held by storages not yet freed
	since   atomic.Int64 // C bytes handed out since the last collection started here
	trigger atomic.Int64
	running atomic.Bool
}

var cmem cPacer

const minGCTrigger = 64 << 20

func init() { cmem.trigger.Store(minGCTrigger) }

func (m *cPacer) allocated(size int) {
	m.live.Add(int64(size))
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
