package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"strings"
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// Bounds on what one call may pass, so a garbage count is an error rather
// than a huge read.
const (
	maxInputs   = 1 << 12
	maxAttrs    = 256
	maxAttrList = 1 << 20
)

// parseInputs resolves input handles (under one lock of the table). The map
// holds the storages of read-only imports, so views of them stay read-only;
// it is nil when there are none, as almost always.
func parseInputs(inputs *C.wt_tensor, n C.int32_t) ([]*core.Tensor, map[core.Storage]bool, error) {
	if n < 0 || n > maxInputs {
		return nil, nil, invalid("n_inputs %d out of range (0..%d)", int(n), maxInputs)
	}
	if n > 0 && inputs == nil {
		return nil, nil, invalid("inputs is NULL but n_inputs is %d", int(n))
	}
	out := make([]*core.Tensor, n)
	if n == 0 {
		return out, nil, nil
	}
	var readOnly map[core.Storage]bool
	handles.Lock()
	defer handles.Unlock()
	for i, h := range unsafe.Slice((*C.wt_tensor)(inputs), int(n)) {
		if h == 0 {
			continue // an absent optional input
		}
		e, err := lookupLocked(int64(h))
		if err != nil {
			return nil, nil, prefix(err, "input %d", i)
		}
		out[i] = e.t
		if e.readOnly {
			if readOnly == nil {
				readOnly = map[core.Storage]bool{}
			}
			readOnly[e.t.Storage()] = true
		}
	}
	return out, readOnly, nil
}

func parseAttrs(attrs *C.wt_attr, n C.int32_t) (core.Attrs, error) {
	if n < 0 || n > maxAttrs {
		return nil, invalid("n_attrs %d out of range (0..%d)", int(n), maxAttrs)
	}
	if n > 0 && attrs == nil {
		return nil, invalid("attrs is NULL but n_attrs is %d", int(n))
	}
	if n == 0 {
		return nil, nil // core treats no attributes and an empty map alike
	}
	out := core.Attrs{}
	for i, a := range unsafe.Slice(attrs, int(n)) {
		name, ok := goString(a.name)
		if !ok || name == "" {
			return nil, invalid("attribute %d has no name", i)
		}
		if _, dup := out[name]; dup {
			return nil, invalid("attribute %q given twice", name)
		}
		v, err := attrValue(name, a)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func attrValue(name string, a C.wt_attr) (any, error) {
	listLen := func() (int, error) {
		if a.len < 0 || a.len > maxAttrList {
			return 0, invalid("attribute %q: list length %d out of range (0..%d)", name, int64(a.len), maxAttrList)
		}
		return int(a.len), nil
	}
	switch a.kind {
	case C.WT_ATTR_INT:
		return int(a.i), nil
	case C.WT_ATTR_FLOAT:
		return float64(a.f), nil
	case C.WT_ATTR_BOOL:
		return a.i != 0, nil
	case C.WT_ATTR_STRING:
		s, ok := goString(a.s)
		if !ok {
			return nil, invalid("attribute %q: string is NULL", name)
		}
		return s, nil
	case C.WT_ATTR_INTS:
		n, err := listLen()
		if err != nil {
			return nil, err
		}
		if n > 0 && a.ints == nil {
			return nil, invalid("attribute %q: ints is NULL but len is %d", name, n)
		}
		vals := make([]int, n)
		if n > 0 {
			for i, v := range unsafe.Slice((*int64)(unsafe.Pointer(a.ints)), n) {
				vals[i] = int(v)
			}
		}
		return vals, nil
	case C.WT_ATTR_FLOATS:
		n, err := listLen()
		if err != nil {
			return nil, err
		}
		if n > 0 && a.floats == nil {
			return nil, invalid("attribute %q: floats is NULL but len is %d", name, n)
		}
		vals := make([]float64, n)
		if n > 0 {
			copy(vals, unsafe.Slice((*float64)(unsafe.Pointer(a.floats)), n))
		}
		return vals, nil
	case C.WT_ATTR_DTYPE:
		if a.i < 0 || a.i > 255 || !core.DType(a.i).Valid() {
			return nil, invalid("attribute %q: unknown dtype code %d", name, int64(a.i))
		}
		return core.DType(a.i), nil
	}
	return nil, invalid("attribute %q: unknown kind %d (see wt_attr_kind)", name, int(a.kind))
}

//export wt_op
func wt_op(name *C.char, inputs *C.wt_tensor, nInputs C.int32_t, attrs *C.wt_attr, nAttrs C.int32_t, outputs *C.wt_tensor, outCap C.int32_t, nOutputs *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	op, ok := cStringView(name)
	if !ok {
		return fail(invalid("wt_op: name is NULL"))
	}
	if nOutputs == nil {
		return fail(invalid("wt_op %s: n_outputs is NULL", op))
	}
	if (outputs == nil && outCap > 0) || outCap < 0 {
		return fail(invalid("%s: outputs is NULL or out_cap is negative (out_cap %d)", op, int(outCap)))
	}
	ins, readOnly, err := parseInputs(inputs, nInputs)
	if err != nil {
		return fail(prefix(err, "%s", op))
	}
	a, err := parseAttrs(attrs, nAttrs)
	if err != nil {
		return fail(prefix(err, "%s", op))
	}
	def, found := core.LookupOp(op)
	if !found { // core.Call says why, with suggestions; it may keep the name, so copy it
		_, err := core.Call(strings.Clone(op), ins, a)
		return fail(err)
	}
	outs, err := core.CallDef(def, detachedIfNoGrad(ins), a)
	if err != nil {
		return fail(err)
	}
	*nOutputs = C.int32_t(len(outs))
	if int(outCap) < len(outs) {
		return fail(errf(statusBuffer, "%s returns %d outputs, out_cap is %d", op, len(outs), int(outCap)))
	}
	dst := unsafe.Slice((*C.wt_tensor)(outputs), len(outs))
	for i, o := range outs {
		dst[i] = C.wt_tensor(newHandle(o, readOnly[o.Storage()]))
	}
	return statusOK
}
