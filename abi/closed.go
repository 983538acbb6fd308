package abi

import (
	"runtime"
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/internal/gcpace"
)

// A closed handle only forgets its tensor: the storage may still be used
// by a view, an autograd graph, a compiled graph or a DLPack export, and
// only the collector can tell, so a storage's memory (C memory on the CPU,
// device memory on a GPU) goes when its cleanup runs after a collection.
// The collector sees neither kind of memory, and the Go heap barely grows
// while tensors are made and closed, so without a push nothing collects:
// 30 closed 100 MB WebGPU tensors a round kept their memory for good
// (RSS 3.4 to 13.3 GiB over four rounds with no tensor alive). So once the
// storage bytes of tensors closed since the last collection reach
// ClosedGCBytes, a collection starts, and another after it while closes
// went on meanwhile: memory returns to what live tensors hold within a
// collection's time of the close.
type closedPacer struct {
	bytes   atomic.Int64 // storage bytes of the tensors closed since the last collection began
	running atomic.Bool
	seen    gcpace.Seen // collections, ours or another pacer's
}

var closed closedPacer

// ClosedGCBytes is how many bytes of closed tensors start a collection.
const ClosedGCBytes = 64 << 20

// noteClosed counts the storage of a tensor whose last handle was freed.
func (p *closedPacer) noteClosed(t *core.Tensor) {
	s := t.Storage()
	if s == nil {
		return
	}
	if p.bytes.Add(int64(s.Len())) < ClosedGCBytes || !p.running.CompareAndSwap(false, true) {
		return
	}
	if p.seen.Collected() { // another pacer collected meanwhile: that one served
		p.bytes.Store(0)
		p.running.Store(false)
		return
	}
	go p.collect()
}

func (p *closedPacer) collect() {
	for {
		p.bytes.Store(0)
		runtime.GC()
		p.seen.Note()
		if p.bytes.Load() < ClosedGCBytes {
			break
		}
	}
	p.running.Store(false)
	// A close between the check and the store above found a collection
	// still running and started none.
	if p.bytes.Load() >= ClosedGCBytes && p.running.CompareAndSwap(false, true) {
		go p.collect()
	}
}
