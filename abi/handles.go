package abi

import (
	"sync"

	"github.com/webtensor/webtensor/core"
)

// Tensors cross the ABI as integer handles into this table, so a caller
// never holds a Go pointer and a stale handle is an error instead of a
// dangling pointer. Handles are never reused (a 63-bit counter), so a
// freed handle stays invalid forever and its error can say it was freed;
// the count of live entries is what leak checks read (wt_live_tensors).

// Bounds on what one call may pass.
const (
	MaxInputs   = 1 << 12 // op and graph inputs and outputs
	MaxAttrs    = 256
	MaxAttrList = 1 << 20
	MaxRank     = core.MaxRank // ndim, everywhere in the ABI (DLPack producers included)
	MaxParams   = 1 << 20      // the parameters an optimiser or a clip takes: a model may have many
)

type entry struct {
	t        *core.Tensor
	refs     int64
	readOnly bool // imported through DLPack with the read-only flag
}

// The table holds entries by value: one allocation fewer per op output.
var table = struct {
	sync.Mutex
	next int64
	m    map[int64]entry
}{next: 1, m: map[int64]entry{}}

// NewHandle registers t with one reference. readOnly marks memory a DLPack
// producer lent read-only, so re-exports of it stay read-only.
func NewHandle(t *core.Tensor, readOnly bool) int64 {
	table.Lock()
	defer table.Unlock()
	h := table.next
	table.next++
	table.m[h] = entry{t: t, refs: 1, readOnly: readOnly}
	return h
}

// NewOutput is NewHandle for a call's result: a tensor carrying an error
// (core's errors are sticky) becomes that error instead of a handle.
func NewOutput(t *core.Tensor) (int64, error) {
	if err := t.Err(); err != nil {
		return 0, err
	}
	return NewHandle(t, false), nil
}

// Lookup finds a live handle's tensor and whether it is read-only.
func Lookup(h int64) (t *core.Tensor, readOnly bool, err error) {
	table.Lock()
	defer table.Unlock()
	e, err := lookupLocked(h)
	return e.t, e.readOnly, err
}

func lookupLocked(h int64) (entry, error) {
	e, ok := table.m[h]
	if !ok {
		if h > 0 && h < table.next {
			return entry{}, Errorf(StatusHandle, "tensor handle %d was already freed", h)
		}
		return entry{}, Errorf(StatusHandle, "unknown tensor handle %d", h)
	}
	return e, nil
}

// TensorOf is Lookup for callers that only need the tensor.
func TensorOf(h int64) (*core.Tensor, error) {
	t, _, err := Lookup(h)
	return t, err
}

// TensorRetain is wt_tensor_retain: one more reference.
func TensorRetain(h int64) error {
	table.Lock()
	defer table.Unlock()
	e, ok := table.m[h]
	if !ok {
		return Errorf(StatusHandle, "unknown or freed tensor handle %d", h)
	}
	e.refs++
	table.m[h] = e
	return nil
}

// TensorFree is wt_tensor_free: drops a reference; the tensor is forgotten
// with its last one (its memory goes when nothing else, such as a view or
// a DLPack export, still uses it: see closed.go).
func TensorFree(h int64) error {
	table.Lock()
	e, ok := table.m[h]
	if !ok {
		defer table.Unlock()
		if h > 0 && h < table.next {
			return Errorf(StatusHandle, "tensor handle %d was already freed (double free)", h)
		}
		return Errorf(StatusHandle, "unknown tensor handle %d", h)
	}
	e.refs--
	if e.refs == 0 {
		delete(table.m, h)
	} else {
		table.m[h] = e
	}
	table.Unlock()
	if e.refs == 0 {
		closed.noteClosed(e.t)
	}
	return nil
}

// LiveTensors is wt_live_tensors: the number of live handles.
func LiveTensors() int {
	table.Lock()
	defer table.Unlock()
	return len(table.m)
}

// inputs are an op's resolved input handles. readOnly holds the storages
// of read-only imports, so views of them stay read-only; it is nil when
// there are none, as almost always.
type inputs struct {
	ts       []*core.Tensor
	readOnly map[core.Storage]bool
}

// resolveInputs looks up op inputs under one lock of the table; 0 is an
// absent optional input.
func resolveInputs(hs []int64) (inputs, error) {
	if err := CheckCount("n_inputs", int64(len(hs)), MaxInputs); err != nil {
		return inputs{}, err
	}
	in := inputs{ts: make([]*core.Tensor, len(hs))}
	if len(hs) == 0 {
		return in, nil
	}
	table.Lock()
	defer table.Unlock()
	for i, h := range hs {
		if h == 0 {
			continue
		}
		e, err := lookupLocked(h)
		if err != nil {
			return inputs{}, Prefix(err, "input %d", i)
		}
		in.ts[i] = e.t
		if e.readOnly {
			if in.readOnly == nil {
				in.readOnly = map[core.Storage]bool{}
			}
			in.readOnly[e.t.Storage()] = true
		}
	}
	return in, nil
}

// tensorList resolves a list of required handles (graph inputs and
// outputs); what names the list in errors.
func tensorList(hs []int64, what string) ([]*core.Tensor, error) {
	return boundedList(hs, what, MaxInputs)
}

// paramList is tensorList for a model's parameters, of which there may be
// more than an op has inputs.
func paramList(hs []int64, what string) ([]*core.Tensor, error) {
	return boundedList(hs, what, MaxParams)
}

func boundedList(hs []int64, what string, limit int) ([]*core.Tensor, error) {
	if err := CheckCount(what+": count", int64(len(hs)), limit); err != nil {
		return nil, err
	}
	out := make([]*core.Tensor, len(hs))
	for i, h := range hs {
		t, err := TensorOf(h)
		if err != nil {
			return nil, Prefix(err, "%s %d", what, i)
		}
		out[i] = t
	}
	return out, nil
}

// Outputs are the tensors an op or a graph returned, not yet registered:
// a caller whose buffer is too small for them registers none.
type Outputs struct {
	ts       []*core.Tensor
	readOnly map[core.Storage]bool
}

// Len is the number of outputs.
func (o Outputs) Len() int { return len(o.ts) }

// Handles registers the outputs into dst (at least Len long); an output
// sharing a read-only input's storage is read-only too.
func (o Outputs) Handles(dst []int64) {
	for i, t := range o.ts {
		dst[i] = NewHandle(t, o.readOnly[t.Storage()])
	}
}
