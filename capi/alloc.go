package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/internal/gcpace"
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

// Small blocks come from slabs. Every op output is an allocation, and for
// the few-element tensors of an SDK's per-op overhead, posix_memalign and
// free per tensor (two cgo calls and glibc's aligned path) and a GC cleanup
// per tensor cost more than the op. A slab is slabBlocks blocks of one
// smallClass-multiple size in one C allocation; the storages carved from it
// hold the slab (a Go object) and have no cleanup of their own, and when none
// is reachable the slab's one cleanup puts its memory back on a free list
// (up to keepBytes per class) or returns it to C. A live small tensor keeps
// at most one slab (8 KiB at the largest class) from being reused.
const (
	smallClass = 64
	smallMax   = 256
	slabBlocks = 32
	keepBytes  = 512 << 10
)

// slab is the Go object the storages hold; its cleanup gets the slabMem.
// It is padded to 256 bytes: the runtime keeps a span's cleanups in a
// list sorted by address and walks it to insert one, so 8-byte slabs, a
// thousand to a span, made AddCleanup 8% of a small op's time
// (BenchmarkOpAddSmall); at 256 bytes a span holds 32.
type slab struct {
	p unsafe.Pointer
	_ [248]byte
}

// slabMem is what a slab's cleanup needs (not the slab, which must die).
type slabMem struct {
	p     unsafe.Pointer
	class int
}

func (m slabMem) bytes() int { return slabBlocks * (m.class + 1) * smallClass }

var slabs struct {
	sync.Mutex
	current [smallMax / smallClass]*slab
	used    [smallMax / smallClass]int // blocks handed out of current
	free    [smallMax / smallClass][]unsafe.Pointer
}

func releaseSlab(m slabMem) {
	slabs.Lock()
	if l := slabs.free[m.class]; len(l)*m.bytes() < keepBytes {
		slabs.free[m.class] = append(l, m.p)
		slabs.Unlock()
		return
	}
	slabs.Unlock()
	cmem.live.Add(-int64(m.bytes()))
	C.free(m.p)
}

// smallBlock hands out the next block of the class's current slab.
func smallBlock(n int) (cpu.HostMemory, error) {
	class := (max(n, 1) - 1) / smallClass
	size := (class + 1) * smallClass
	slabs.Lock()
	s := slabs.current[class]
	if s == nil || slabs.used[class] == slabBlocks {
		m := slabMem{class: class}
		if l := slabs.free[class]; len(l) > 0 {
			m.p = l[len(l)-1]
			slabs.free[class] = l[:len(l)-1]
		} else {
			p, err := alignedC(m.bytes(), n)
			if err != nil {
				slabs.Unlock()
				return cpu.HostMemory{}, err
			}
			m.p = p
			cmem.allocated(m.bytes())
		}
		s = &slab{p: m.p}
		runtime.AddCleanup(s, releaseSlab, m)
		slabs.current[class], slabs.used[class] = s, 0
	}
	p := unsafe.Add(s.p, slabs.used[class]*size)
	slabs.used[class]++
	slabs.Unlock()
	return cpu.HostMemory{Mem: unsafe.Slice((*byte)(p), n), Owner: s}, nil
}

func hostAlloc(n int) (cpu.HostMemory, error) {
	if n <= smallMax {
		return smallBlock(n)
	}
	p, err := alignedC(n, n)
	if err != nil {
		return cpu.HostMemory{}, err
	}
	cmem.allocated(n)
	return cpu.HostMemory{Mem: unsafe.Slice((*byte)(p), n), Free: func() { C.free(p); cmem.live.Add(-int64(n)) }}, nil
}

// alignedC allocates size bytes for a request of n (the number reported).
func alignedC(size, n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if C.posix_memalign(&p, 64, C.size_t(size)) != 0 || p == nil {
		return nil, abi.Errorf(abi.StatusOutOfMemory, "cannot allocate %d bytes of host memory", n)
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
	seen    gcpace.Seen // collections, ours or another pacer's
}

var cmem cPacer

const minGCTrigger = 64 << 20

func init() { cmem.trigger.Store(minGCTrigger) }

func (m *cPacer) allocated(size int) {
	m.live.Add(int64(size))
	if m.since.Add(int64(size)) < m.trigger.Load() || !m.running.CompareAndSwap(false, true) {
		return
	}
	if m.seen.Collected() { // another pacer collected meanwhile: that one served
		m.since.Store(0)
		m.running.Store(false)
		return
	}
	go func() {
		runtime.GC()
		m.seen.Note()
		m.since.Store(0)
		m.trigger.Store(max(minGCTrigger, m.live.Load()))
		m.running.Store(false)
	}()
}
