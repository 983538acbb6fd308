package main

import (
	"sync"

	"github.com/webtensor/webtensor/core"
)

// Tensors cross the ABI as integer handles into this table, so C never holds
// a Go pointer and a stale handle is an error instead of a dangling pointer.
// Handles are never reused (a 63-bit counter), so a freed handle stays
// invalid forever.

type handle struct {
	t        *core.Tensor
	refs     int64
	readOnly bool // imported through DLPack with the read-only flag
}

// The table holds entries by value: one allocation fewer per op output.
var handles = struct {
	sync.Mutex
	next int64
	m    map[int64]handle
}{next: 1, m: map[int64]handle{}}

// newHandle registers t with one reference.
func newHandle(t *core.Tensor, readOnly bool) int64 {
	handles.Lock()
	defer handles.Unlock()
	h := handles.next
	handles.next++
	handles.m[h] = handle{t: t, refs: 1, readOnly: readOnly}
	return h
}

// lookup finds a live handle.
func lookup(h int64) (handle, error) {
	handles.Lock()
	defer handles.Unlock()
	return lookupLocked(h)
}

func lookupLocked(h int64) (handle, error) {
	e, ok := handles.m[h]
	if !ok {
		if h > 0 && h < handles.next {
			return handle{}, errf(statusHandle, "tensor handle %d was already freed", h)
		}
		return handle{}, errf(statusHandle, "unknown tensor handle %d", h)
	}
	return e, nil
}

// tensorOf is lookup for callers that only need the tensor.
func tensorOf(h int64) (*core.Tensor, error) {
	e, err := lookup(h)
	if err != nil {
		return nil, err
	}
	return e.t, nil
}

func retain(h int64) error {
	handles.Lock()
	defer handles.Unlock()
	e, ok := handles.m[h]
	if !ok {
		return errf(statusHandle, "unknown or freed tensor handle %d", h)
	}
	e.refs++
	handles.m[h] = e
	return nil
}

// release drops a reference; the tensor is forgotten with its last one (its
// memory goes when nothing else, such as a DLPack export, still uses it:
// see closed.noteClosed).
func release(h int64) error {
	handles.Lock()
	e, ok := handles.m[h]
	if !ok {
		defer handles.Unlock()
		if h > 0 && h < handles.next {
			return errf(statusHandle, "tensor handle %d was already freed (double free)", h)
		}
		return errf(statusHandle, "unknown tensor handle %d", h)
	}
	e.refs--
	if e.refs == 0 {
		delete(handles.m, h)
	} else {
		handles.m[h] = e
	}
	handles.Unlock()
	if e.refs == 0 {
		closed.noteClosed(e.t)
	}
	return nil
}

func liveHandles() int {
	handles.Lock()
	defer handles.Unlock()
	return len(handles.m)
}
