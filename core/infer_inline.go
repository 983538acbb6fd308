package core

import (
	"reflect"

	"github.com/webtensor/webtensor/core/oprules"
)

// Most ops infer through one of three shared rules (InferSame,
// InferBroadcast, InferBroadcastBool), and each call of one allocated its
// result. runKernel only reads the result to allocate the outputs, so for
// these rules it computes the result into the kernel call's own storage
// instead: one allocation less per elementwise op, the per-op overhead that
// an SDK's small ops pay.

// inlineInfer names the shared rule an op's Infer is (inferOther: any other).
type inlineInfer uint8

const (
	inferOther inlineInfer = iota
	inferSame
	inferBroadcast
	inferBroadcastBool
)

// inlineInferOf recognises the shared rules by function identity, once,
// when the op is registered.
func inlineInferOf(f func([]Meta, Attrs) ([]Meta, error)) inlineInfer {
	if f == nil {
		return inferOther
	}
	switch reflect.ValueOf(f).Pointer() {
	case reflect.ValueOf(InferSame).Pointer():
		return inferSame
	case reflect.ValueOf(InferBroadcast).Pointer():
		return inferBroadcast
	case reflect.ValueOf(InferBroadcastBool).Pointer():
		return inferBroadcastBool
	}
	return inferOther
}

// inferred is room for one output's metadata and dims.
type inferred struct {
	meta [1]Meta
	dims [4]int
}

// infer runs def's Infer, in r when it is a shared rule that fits. The
// result may share r and the inputs' shapes: read it before either changes.
func (r *inferred) infer(def *OpDef, in []Meta, a Attrs) ([]Meta, error) {
	switch def.inline {
	case inferSame:
		r.meta[0] = in[0] // the caller copies the shape (Empty)
		return r.meta[:], nil
	case inferBroadcast, inferBroadcastBool:
		ok, err := r.broadcast(in)
		if !ok {
			break
		}
		if def.inline == inferBroadcastBool {
			r.meta[0].DType = Bool
		}
		return r.meta[:], err
	}
	return def.Infer(in, a)
}

// broadcast is InferBroadcast into r; ok is false when the rank is over
// four (InferBroadcast then allocates).
func (r *inferred) broadcast(in []Meta) (ok bool, err error) {
	var buf [4]Shape // on the stack for the usual one to four inputs
	shapes := buf[:0]
	rank := 0
	for _, m := range in {
		if m.DType != Invalid {
			shapes = append(shapes, m.Shape)
			rank = max(rank, len(m.Shape))
		}
	}
	if rank > len(r.dims) {
		return false, nil
	}
	if err := oprules.BroadcastInto(r.dims[:rank:rank], shapes); err != nil {
		return true, err
	}
	r.meta[0] = Meta{Shape: r.dims[:rank:rank], DType: in[0].DType}
	return true, nil
}
