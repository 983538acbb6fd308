package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

// cAttrs reads wt_attr structs in place for abi.Op: only what C alone can
// get wrong (NULL strings and lists) is checked here.
type cAttrs struct {
	p *C.wt_attr
	n C.int32_t
}

func (a cAttrs) Len() int { return int(a.n) }

func (a cAttrs) At(i int) (abi.Attr, error) {
	if a.p == nil {
		return abi.Attr{}, abi.Invalidf("attrs is NULL but n_attrs is %d", int(a.n))
	}
	c := unsafe.Slice(a.p, int(a.n))[i]
	name, _ := goString(c.name)
	at := abi.Attr{Name: name, Kind: abi.AttrKind(c.kind), I: int64(c.i), F: float64(c.f)}
	switch at.Kind {
	case abi.AttrString:
		s, ok := goString(c.s)
		if !ok {
			return abi.Attr{}, abi.Invalidf("attribute %q: string is NULL", name)
		}
		at.S = s
	case abi.AttrInts, abi.AttrFloats:
		if err := abi.CheckAttrList(name, int64(c.len)); err != nil {
			return abi.Attr{}, err
		}
		n := int(c.len)
		list := unsafe.Pointer(c.ints)
		what := "ints"
		if at.Kind == abi.AttrFloats {
			list, what = unsafe.Pointer(c.floats), "floats"
		}
		if n > 0 && list == nil {
			return abi.Attr{}, abi.Invalidf("attribute %q: %s is NULL but len is %d", name, what, n)
		}
		switch {
		case n == 0: // an empty list: abi makes it
		case at.Kind == abi.AttrInts:
			at.Ints = unsafe.Slice((*int64)(list), n)
		default:
			at.Floats = unsafe.Slice((*float64)(list), n)
		}
	}
	return at, nil
}

//export wt_op
func wt_op(name *C.char, inputs *C.wt_tensor, nInputs C.int32_t, attrs *C.wt_attr, nAttrs C.int32_t, outputs *C.wt_tensor, outCap C.int32_t, nOutputs *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	op, ok := cStringView(name)
	if !ok {
		return invalid("wt_op: name is NULL")
	}
	if nOutputs == nil {
		return invalid("wt_op %s: n_outputs is NULL", op)
	}
	if (outputs == nil && outCap > 0) || outCap < 0 {
		return invalid("%s: outputs is NULL or out_cap is negative (out_cap %d)", op, int(outCap))
	}
	ins, err := handles(inputs, nInputs, "inputs", "n_inputs")
	if err != nil {
		return fail(abi.Prefix(err, "%s", op))
	}
	var al abi.AttrList // nil when there are none: boxing cAttrs costs an op an allocation
	if nAttrs != 0 {
		al = cAttrs{attrs, nAttrs}
	}
	outs, err := abi.Op(op, ins, al, threadNoGrad())
	if err != nil {
		return fail(err)
	}
	return putHandles(outs, outputs, outCap, nOutputs, op)
}

//export wt_manifest_json
func wt_manifest_json(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	m, err := abi.ManifestJSON()
	return writeResult(m, err, buf, capacity, needed)
}
