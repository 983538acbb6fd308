package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include <stdlib.h>
#include "webtensor.h"
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

// The ONNX calls as a C caller makes them, for capi's tests (Go test files
// cannot use cgo; see testhooks.go).

func callOnnxLoad(path, device string) (int32, int64) {
	var cp, cd *C.char
	if path != "" {
		cp = C.CString(path)
		defer C.free(unsafe.Pointer(cp))
	}
	if device != "" {
		cd = C.CString(device)
		defer C.free(unsafe.Pointer(cd))
	}
	var out C.wt_onnx
	st := wt_onnx_load(cp, cd, &out)
	return int32(st), int64(out)
}

func callOnnxLoadBytes(data []byte) (int32, int64) {
	var buf unsafe.Pointer
	if len(data) > 0 {
		buf = C.CBytes(data)
		defer C.free(buf)
	}
	var out C.wt_onnx
	st := wt_onnx_load_bytes(buf, C.size_t(len(data)), nil, &out)
	return int32(st), int64(out)
}

func callOnnxFree(m int64) int32 { return int32(wt_onnx_free(C.wt_onnx(m))) }

// callOnnxNames reads every input (or output) name through the count and
// the indexed name, growing the buffer as told.
func callOnnxNames(m int64, outputs bool) (int32, []string) {
	count, name := wt_onnx_input_count, wt_onnx_input_name
	if outputs {
		count, name = wt_onnx_output_count, wt_onnx_output_name
	}
	var n C.int32_t
	if st := count(C.wt_onnx(m), &n); st != statusOK {
		return int32(st), nil
	}
	out := make([]string, n)
	for i := range out {
		var needed C.size_t
		st := name(C.wt_onnx(m), C.int32_t(i), nil, 0, &needed)
		if st != C.int32_t(abi.StatusBufferTooSmall) {
			return int32(st), nil
		}
		buf := (*C.char)(C.malloc(needed))
		st = name(C.wt_onnx(m), C.int32_t(i), buf, needed, &needed)
		out[i] = C.GoString(buf)
		C.free(unsafe.Pointer(buf))
		if st != statusOK {
			return int32(st), nil
		}
	}
	return int32(statusOK), out
}

func callOnnxName(m int64, outputs bool, i int) int32 {
	var needed C.size_t
	if outputs {
		return int32(wt_onnx_output_name(C.wt_onnx(m), C.int32_t(i), nil, 0, &needed))
	}
	return int32(wt_onnx_input_name(C.wt_onnx(m), C.int32_t(i), nil, 0, &needed))
}

func callOnnxInfo(m int64) (int32, string) {
	var needed C.size_t
	st := wt_onnx_info_json(C.wt_onnx(m), nil, 0, &needed)
	if st != C.int32_t(abi.StatusBufferTooSmall) {
		return int32(st), ""
	}
	buf := (*C.char)(C.malloc(needed))
	defer C.free(unsafe.Pointer(buf))
	st = wt_onnx_info_json(C.wt_onnx(m), buf, needed, &needed)
	return int32(st), C.GoString(buf)
}

// callOnnxRun passes names and handles in C memory; a name "\x00" is
// passed as NULL.
func callOnnxRun(m int64, names []string, inputs []int64, outCap int) (status int32, outs []int64, nOut int32) {
	n := len(inputs)
	var cnames **C.char
	var cin *C.wt_tensor
	if len(names) > 0 {
		cnames = (**C.char)(C.calloc(C.size_t(len(names)), C.size_t(unsafe.Sizeof(uintptr(0)))))
		defer C.free(unsafe.Pointer(cnames))
		for i, s := range names {
			if s == "\x00" {
				continue
			}
			p := C.CString(s)
			defer C.free(unsafe.Pointer(p))
			unsafe.Slice(cnames, len(names))[i] = p
		}
	}
	if n > 0 {
		cin = (*C.wt_tensor)(C.malloc(C.size_t(8 * n)))
		defer C.free(unsafe.Pointer(cin))
		for i, h := range inputs {
			unsafe.Slice(cin, n)[i] = C.wt_tensor(h)
		}
	}
	var cout *C.wt_tensor
	if outCap > 0 {
		cout = (*C.wt_tensor)(C.malloc(C.size_t(8 * outCap)))
		defer C.free(unsafe.Pointer(cout))
	}
	var cn C.int32_t
	st := wt_onnx_run(C.wt_onnx(m), cnames, cin, C.int32_t(n), cout, C.int32_t(outCap), &cn)
	if st == statusOK {
		for _, h := range unsafe.Slice(cout, int(cn)) {
			outs = append(outs, int64(h))
		}
	}
	return int32(st), outs, int32(cn)
}

// callOnnxRunValues passes the tensors and the layout in C memory; a
// layout "\x00" is passed as NULL.
func callOnnxRunValues(m int64, tensors []int64, layout string) (int32, int64) {
	var cin *C.wt_tensor
	if n := len(tensors); n > 0 {
		cin = (*C.wt_tensor)(C.malloc(C.size_t(8 * n)))
		defer C.free(unsafe.Pointer(cin))
		for i, h := range tensors {
			unsafe.Slice(cin, n)[i] = C.wt_tensor(h)
		}
	}
	var cl *C.char
	if layout != "\x00" {
		cl = C.CString(layout)
		defer C.free(unsafe.Pointer(cl))
	}
	var out C.wt_onnx_values
	st := wt_onnx_run_values(C.wt_onnx(m), cin, C.int32_t(len(tensors)), cl, &out)
	return int32(st), int64(out)
}

// callOnnxValuesLayout reads the layout through the buffer protocol: the
// size asked with a NULL buffer, then the string.
func callOnnxValuesLayout(v int64) (int32, string) {
	var needed C.size_t
	st := wt_onnx_values_layout_json(C.wt_onnx_values(v), nil, 0, &needed)
	if st != C.int32_t(abi.StatusBufferTooSmall) {
		return int32(st), ""
	}
	buf := (*C.char)(C.malloc(needed))
	defer C.free(unsafe.Pointer(buf))
	st = wt_onnx_values_layout_json(C.wt_onnx_values(v), buf, needed, &needed)
	return int32(st), C.GoString(buf)
}

func callOnnxValuesTensors(v int64, outCap int) (status int32, outs []int64, nOut int32) {
	var cout *C.wt_tensor
	if outCap > 0 {
		cout = (*C.wt_tensor)(C.malloc(C.size_t(8 * outCap)))
		defer C.free(unsafe.Pointer(cout))
	}
	var cn C.int32_t
	st := wt_onnx_values_tensors(C.wt_onnx_values(v), cout, C.int32_t(outCap), &cn)
	if st == statusOK {
		for _, h := range unsafe.Slice(cout, int(cn)) {
			outs = append(outs, int64(h))
		}
	}
	return int32(st), outs, int32(cn)
}

func callOnnxValuesFree(v int64) int32 { return int32(wt_onnx_values_free(C.wt_onnx_values(v))) }
