package main

/*
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

// callSafetensorsHeader calls wt_safetensors_header with the file's first
// nbytes bytes in C memory, as a C caller would, growing the output buffer
// as told (Go test files cannot use cgo; see testhooks.go).
func callSafetensorsHeader(file []byte, nbytes int, name string) (status int32, out, msg string) {
	cbuf := C.CBytes(file[:nbytes])
	defer C.free(cbuf)
	var cname *C.char
	if name != "" {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	var needed C.size_t
	capacity := C.size_t(16)
	for {
		buf := (*C.char)(C.malloc(capacity))
		st := wt_safetensors_header(cbuf, C.size_t(nbytes), C.uint64_t(len(file)), cname, buf, capacity, &needed)
		s := C.GoString(buf)
		C.free(unsafe.Pointer(buf))
		switch {
		case st == C.int32_t(abi.StatusBufferTooSmall) && needed > capacity:
			capacity = needed
		case st != statusOK:
			return int32(st), "", lastError()
		default:
			return int32(st), s, ""
		}
	}
}
