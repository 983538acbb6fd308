package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include <stdlib.h>
#include "webtensor.h"
void wt_set_error(const char *msg, size_t n);
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

// The C side of statuses and errors: the codes, their names and the
// messages come from package abi; here they become an int32_t return and
// the calling thread's wt_last_error.

const statusOK = C.int32_t(abi.StatusOK)

// setError records msg as this thread's last error. The exported function
// runs on the caller's OS thread, so the C thread-local is the caller's.
func setError(msg string) {
	if msg == "" {
		C.wt_set_error(nil, 0)
		return
	}
	C.wt_set_error((*C.char)(unsafe.Pointer(unsafe.StringData(msg))), C.size_t(len(msg)))
}

// fail turns an error into its status and records its message.
func fail(err error) C.int32_t {
	setError(err.Error())
	return C.int32_t(abi.StatusOf(err))
}

// guard ends every exported function: a panic becomes WT_ERR_INTERNAL with
// the panic value and the top of the stack in the message, never a crash.
func guard(status *C.int32_t) {
	if r := recover(); r != nil {
		*status = fail(abi.Recovered(r))
	}
}

// done returns WT_OK or the status of err.
func done(err error) C.int32_t {
	if err != nil {
		return fail(err)
	}
	return statusOK
}

// invalid is a WT_ERR_INVALID failure: the NULL pointers and bad counts
// that only C can pass.
func invalid(format string, args ...any) C.int32_t {
	return fail(abi.Invalidf(format, args...))
}

// statusNames are wt_status_string's answers, made once in C memory: the
// header promises static storage.
var statusNames = func() []*C.char {
	out := make([]*C.char, abi.StatusInternal+2)
	for s := range out {
		out[s] = C.CString(abi.StatusString(abi.Status(s)))
	}
	return out
}()

//export wt_status_string
func wt_status_string(status C.int32_t) *C.char {
	if status < 0 || int(status) >= len(statusNames)-1 {
		return statusNames[len(statusNames)-1] // "unknown status"
	}
	return statusNames[status]
}

// goString copies a C string; NULL becomes "" and ok=false.
func goString(s *C.char) (string, bool) {
	if s == nil {
		return "", false
	}
	return C.GoString(s), true
}

// cStringView is goString without the copy: a Go string over the C bytes,
// valid only while the caller's call lasts. The per-op entry point uses it
// for the op name, which abi.Op does not keep.
func cStringView(s *C.char) (string, bool) {
	if s == nil {
		return "", false
	}
	p := unsafe.Pointer(s)
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return unsafe.String((*byte)(p), n), true
}

// writeString copies s (with a NUL) into a caller buffer, reporting the
// size needed.
func writeString(s string, buf *C.char, capacity C.size_t, needed *C.size_t) C.int32_t {
	n := len(s) + 1
	if needed != nil {
		*needed = C.size_t(n)
	}
	if buf == nil && capacity > 0 {
		return invalid("buffer is NULL but capacity is %d", int(capacity))
	}
	if int(capacity) < n {
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "buffer of %d bytes is too small: %d needed (including the NUL)", int(capacity), n))
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), n)
	copy(dst, s)
	dst[n-1] = 0
	return statusOK
}

// writeResult is writeString for a call that returns a string or fails.
func writeResult(s string, err error, buf *C.char, capacity C.size_t, needed *C.size_t) C.int32_t {
	if err != nil {
		return fail(err)
	}
	return writeString(s, buf, capacity, needed)
}

// handles views a C array of n handles, named list with its count named
// count in errors (the count is checked first, then the pointer).
func handles(p *C.wt_tensor, n C.int32_t, list, count string) ([]int64, error) {
	if err := abi.CheckCount(count, int64(n), abi.MaxInputs); err != nil {
		return nil, err
	}
	if n > 0 && p == nil {
		return nil, abi.Invalidf("%s is NULL but %s is %d", list, count, int(n))
	}
	if n == 0 {
		return nil, nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(p)), int(n)), nil
}

// putHandles writes outputs into a caller array of capacity outCap,
// creating none when they do not fit; what names the call in the error.
func putHandles(outs abi.Outputs, dst *C.wt_tensor, outCap C.int32_t, n *C.int32_t, what string) C.int32_t {
	*n = C.int32_t(outs.Len())
	if int(outCap) < outs.Len() {
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "%s returns %d outputs, out_cap is %d", what, outs.Len(), int(outCap)))
	}
	outs.Handles(unsafe.Slice((*int64)(unsafe.Pointer(dst)), outs.Len()))
	return statusOK
}
