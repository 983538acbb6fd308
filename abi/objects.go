package abi

import (
	"sync"

	"github.com/webtensor/webtensor/core"
)

// objects is a table of one kind of ABI object (optimisers, state dicts)
// behind integer handles, with the tensor table's rules: a handle is never
// reused, so a freed one stays an error that says so.
type objects[T any] struct {
	mu   sync.Mutex
	what string // names the kind in errors: "optimizer", "state dict"
	next int64
	m    map[int64]T
}

func newObjects[T any](what string) *objects[T] {
	return &objects[T]{what: what, next: 1, m: map[int64]T{}}
}

func (o *objects[T]) add(v T) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.next
	o.next++
	o.m[h] = v
	return h
}

func (o *objects[T]) get(h int64) (T, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.m[h]
	if !ok {
		return v, o.missing(h)
	}
	return v, nil
}

func (o *objects[T]) free(h int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.m[h]; !ok {
		return o.missing(h)
	}
	delete(o.m, h)
	return nil
}

func (o *objects[T]) missing(h int64) error {
	if h > 0 && h < o.next {
		return Errorf(StatusHandle, "%s handle %d was already freed", o.what, h)
	}
	return Errorf(StatusHandle, "unknown %s handle %d", o.what, h)
}

// replaceTensors points each handle hs[i] at news[i] where it still holds
// olds[i]; a handle freed or given another value meanwhile is left alone.
// The handle keeps its number, so every SDK object holding it sees the new
// value, as a torch parameter updated in place sees it; views, exports and
// graphs of the old tensor keep the old values (tensors are immutable).
// This is how an optimiser step and a state dict load reach the SDKs'
// parameters. readOnly marks the new values that share read-only memory.
func replaceTensors(hs []int64, olds, news []*core.Tensor, readOnly []bool) {
	var dropped []*core.Tensor
	table.Lock()
	for i, h := range hs {
		e, ok := table.m[h]
		if !ok || e.t != olds[i] {
			continue
		}
		dropped = append(dropped, e.t)
		e.t = news[i]
		e.readOnly = readOnly != nil && readOnly[i]
		table.m[h] = e
	}
	table.Unlock()
	for _, t := range dropped {
		closed.noteClosed(t)
	}
}
