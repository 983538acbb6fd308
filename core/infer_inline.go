package core

import (
	"reflect"

	"github.com/webtensor/webtensor/core/oprules"
)

// Most ops infer through one of three shared rules (InferSame,
// InferBroadcast, InferBroadcastBool), and each call of one allocated its
// result and the inputs' metadata. runKernel only reads the result to
// allocate the outputs, so for these rules it computes the result from the
// inputs into the kernel call's own storage instead: one allocation less
// and 128 bytes fewer per elementwise op, the per-op overhead that an SDK's
// small ops pay.

// inlineInfer names the shared rule an op's Infer is (inferOther: any other).
type inlineInfer uint8

const (
	inferOther inlineInfer = iota
	inferSame
	inferSameBool  // a unary op with a bool result (unaryDef)
	inferSameFloat // a unary op whose integer inputs give f32 (unaryDef)
	inferBroadcast
	inferBroadcastBool
)

// inlineInferOf recognises the shared rules by function identity, once,
// when the op is registered (unaryDef marks its ops itself: their Infer is
// a method value, which has no identity to compare).
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

// inline computes def's result into r from the inputs themselves when
// Infer is a shared rule that fits (ok); the result may share r and the
// inputs' shapes, so read it before either changes.
func (r *inferred) inline(def *OpDef, inputs []*Tensor) (ms []Meta, ok bool, err error) {
	switch def.inline {
	case inferSame, inferSameBool, inferSameFloat:
		if len(inputs) == 0 || inputs[0] == nil {
			return nil, false, nil
		}
		r.meta[0] = inputs[0].Meta() // the caller copies the shape (Empty)
		switch d := &r.meta[0].DType; {
		case def.inline == inferSameBool:
			*d = Bool
		case def.inline == inferSameFloat && !d.IsFloat():
			*d = F32
		}
		return r.meta[:], true, nil
	case inferBroadcast, inferBroadcastBool:
		var buf [4]Meta // on the stack: nothing here keeps it
		in := buf[:0]
		for _, t := range inputs {
			if t != nil {
				in = append(in, t.Meta())
			}
		}
		if ok, err := r.broadcast(in); !ok || err != nil {
			return nil, ok, err
		}
		if def.inline == inferBroadcastBool {
			r.meta[0].DType = Bool
		}
		return r.meta[:], true, nil
	}
	return nil, false, nil
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

// inferOf runs def's Infer on the inputs' metadata.
func inferOf(def *OpDef, inputs []*Tensor, a Attrs) ([]Meta, error) {
	var buf [4]Meta // escapes through Infer: allocated only on this path
	return def.Infer(metas(inputs, buf[:]), a)
}
