package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include <stdlib.h>
#include "webtensor.h"
const char *wt_last_error(void);
const char *wt_version(void);
*/
import "C"

import (
	"unsafe"
)

// Go test files cannot use cgo, so the tests and fuzzers reach the exported
// functions through these thin adapters, which build the C arguments in C
// memory exactly as a C caller would and free them afterwards.

type goAttr struct {
	Name   string
	Kind   int32
	I      int64
	F      float64
	S      string
	Ints   []int64
	Floats []float64
	NilStr bool // pass s = NULL
}

func callOp(name string, nilName bool, inputs []int64, attrs []goAttr, outCap int) (status int32, outs []int64, nOut int32) {
	var cname *C.char
	if !nilName {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	var cin *C.wt_tensor
	if len(inputs) > 0 {
		cin = (*C.wt_tensor)(C.malloc(C.size_t(8 * len(inputs))))
		defer C.free(unsafe.Pointer(cin))
		for i, h := range inputs {
			unsafe.Slice(cin, len(inputs))[i] = C.wt_tensor(h)
		}
	}
	var cattrs *C.wt_attr
	if len(attrs) > 0 {
		cattrs = (*C.wt_attr)(C.calloc(C.size_t(len(attrs)), C.size_t(unsafe.Sizeof(C.wt_attr{}))))
		defer C.free(unsafe.Pointer(cattrs))
		for i, a := range attrs {
			ca := &unsafe.Slice(cattrs, len(attrs))[i]
			if a.Name != "" {
				ca.name = C.CString(a.Name)
				defer C.free(unsafe.Pointer(ca.name))
			}
			ca.kind, ca.i, ca.f, ca.len = C.int32_t(a.Kind), C.int64_t(a.I), C.double(a.F), C.int64_t(len(a.Ints)+len(a.Floats))
			if !a.NilStr {
				ca.s = C.CString(a.S)
				defer C.free(unsafe.Pointer(ca.s))
			}
			if len(a.Ints) > 0 {
				ca.ints = (*C.int64_t)(C.malloc(C.size_t(8 * len(a.Ints))))
				defer C.free(unsafe.Pointer(ca.ints))
				copy(unsafe.Slice((*int64)(unsafe.Pointer(ca.ints)), len(a.Ints)), a.Ints)
			}
			if len(a.Floats) > 0 {
				ca.floats = (*C.double)(C.malloc(C.size_t(8 * len(a.Floats))))
				defer C.free(unsafe.Pointer(ca.floats))
				copy(unsafe.Slice((*float64)(unsafe.Pointer(ca.floats)), len(a.Floats)), a.Floats)
			}
		}
	}
	cout := (*C.wt_tensor)(C.malloc(C.size_t(8 * max(outCap, 1))))
	defer C.free(unsafe.Pointer(cout))
	var n C.int32_t
	st := wt_op(cname, cin, C.int32_t(len(inputs)), cattrs, C.int32_t(len(attrs)), cout, C.int32_t(outCap), &n)
	if st == statusOK {
		for _, h := range unsafe.Slice(cout, int(n)) {
			outs = append(outs, int64(h))
		}
	}
	return int32(st), outs, int32(n)
}

func callFromData(data []byte, nbytes int, dtype int32, shape []int64, ndim int32, device string) (int32, int64) {
	var cdata unsafe.Pointer
	if len(data) > 0 {
		cdata = C.CBytes(data)
		defer C.free(cdata)
	}
	var cshape *C.int64_t
	if len(shape) > 0 {
		cshape = (*C.int64_t)(C.malloc(C.size_t(8 * len(shape))))
		defer C.free(unsafe.Pointer(cshape))
		copy(unsafe.Slice((*int64)(unsafe.Pointer(cshape)), len(shape)), shape)
	}
	var cdev *C.char
	if device != "" {
		cdev = C.CString(device)
		defer C.free(unsafe.Pointer(cdev))
	}
	var out C.wt_tensor
	st := wt_tensor_from_data(cdata, C.size_t(nbytes), C.int32_t(dtype), cshape, C.int32_t(ndim), cdev, &out)
	return int32(st), int64(out)
}

func callToHost(h int64, n int) (int32, []byte) {
	buf := C.malloc(C.size_t(max(n, 1)))
	defer C.free(buf)
	st := wt_tensor_to_host(C.wt_tensor(h), buf, C.size_t(n))
	return int32(st), C.GoBytes(buf, C.int(n))
}

func lastError() string { return C.GoString(C.wt_last_error()) }

func callFree(h int64) int32 { return int32(wt_tensor_free(C.wt_tensor(h))) }

func callBackward(h, g int64) int32 { return int32(wt_backward(C.wt_tensor(h), C.wt_tensor(g))) }

func callGrad(h int64) (int32, int64) {
	var g C.wt_tensor
	st := wt_tensor_grad(C.wt_tensor(h), &g)
	return int32(st), int64(g)
}

func callSetRequiresGrad(h int64, on bool) int32 {
	v := C.int32_t(0)
	if on {
		v = 1
	}
	return int32(wt_tensor_set_requires_grad(C.wt_tensor(h), v))
}

func callNoGradEnter() int32 { return int32(wt_no_grad_enter()) }

func callNoGradExit() int32 { return int32(wt_no_grad_exit()) }

func callRequiresGrad(h int64) (int32, bool) {
	var on C.int32_t
	st := wt_tensor_requires_grad(C.wt_tensor(h), &on)
	return int32(st), on != 0
}

func callManifest() (int32, string) {
	var needed C.size_t
	wt_manifest_json(nil, 0, &needed)
	buf := (*C.char)(C.malloc(needed))
	defer C.free(unsafe.Pointer(buf))
	st := wt_manifest_json(buf, needed, &needed)
	return int32(st), C.GoString(buf)
}

func callVersion() string { return C.GoString(C.wt_version()) }

// opLoop calls wt_op(name, inputs) n times with the C arguments built once,
// freeing each output, so a benchmark times the entry point and not this
// adapter. It returns the first failing status.
func opLoop(name string, inputs []int64, n int) int32 {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	cin := (*C.wt_tensor)(C.malloc(C.size_t(8 * max(len(inputs), 1))))
	defer C.free(unsafe.Pointer(cin))
	for i, h := range inputs {
		unsafe.Slice(cin, len(inputs))[i] = C.wt_tensor(h)
	}
	cout := (*C.wt_tensor)(C.malloc(8 * 4))
	defer C.free(unsafe.Pointer(cout))
	nOut := (*C.int32_t)(C.malloc(4))
	defer C.free(unsafe.Pointer(nOut))
	for range n {
		if st := wt_op(cname, cin, C.int32_t(len(inputs)), nil, 0, cout, 4, nOut); st != statusOK {
			return int32(st)
		}
		for _, h := range unsafe.Slice(cout, int(*nOut)) {
			if st := wt_tensor_free(h); st != statusOK {
				return int32(st)
			}
		}
	}
	return int32(statusOK)
}
