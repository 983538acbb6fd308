package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
void wt_set_error(const char *msg, size_t n);
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// Status codes, as in webtensor.h.
const (
	statusOK          = C.WT_OK
	statusInvalid     = C.WT_ERR_INVALID
	statusHandle      = C.WT_ERR_HANDLE
	statusUnsupported = C.WT_ERR_UNSUPPORTED
	statusOOM         = C.WT_ERR_OUT_OF_MEMORY
	statusBuffer      = C.WT_ERR_BUFFER_TOO_SMALL
	statusInternal    = C.WT_ERR_INTERNAL
)

// abiError carries a status code with its message.
type abiError struct {
	status C.int32_t
	msg    string
}

func (e *abiError) Error() string { return e.msg }

func errf(status C.int32_t, format string, args ...any) error {
	return &abiError{status: status, msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error { return errf(statusInvalid, format, args...) }

// prefix adds context to an error's message, keeping its status.
func prefix(err error, format string, args ...any) error {
	status := C.int32_t(statusInvalid)
	var ae *abiError
	if errors.As(err, &ae) {
		status = ae.status
	}
	return &abiError{status: status, msg: fmt.Sprintf(format, args...) + ": " + err.Error()}
}

// setError records msg as this thread's last error. The exported function
// runs on the caller's OS thread, so the C thread-local is the caller's.
func setError(msg string) {
	if msg == "" {
		C.wt_set_error(nil, 0)
		return
	}
	C.wt_set_error((*C.char)(unsafe.Pointer(unsafe.StringData(msg))), C.size_t(len(msg)))
}

// fail turns an error into a status and records its message.
func fail(err error) C.int32_t {
	var ae *abiError
	status := C.int32_t(statusInvalid)
	if errors.As(err, &ae) {
		status = ae.status
	} else if strings.Contains(err.Error(), "cannot allocate") {
		status = statusOOM
	} else if errors.Is(err, core.ErrDeviceUnavailable) || strings.Contains(err.Error(), "no backend") {
		status = statusUnsupported
	}
	setError(err.Error())
	return status
}

// guard ends every exported function: a panic becomes WT_ERR_INTERNAL with
// the panic value and the top of the stack in the message, never a crash.
func guard(status *C.int32_t) {
	if r := recover(); r != nil {
		stack := string(debug.Stack())
		if len(stack) > 600 {
			stack = stack[:600]
		}
		setError(fmt.Sprintf("internal error (please report): %v\n%s", r, stack))
		*status = statusInternal
	}
}

// done returns WT_OK or the status of err.
func done(err error) C.int32_t {
	if err != nil {
		return fail(err)
	}
	return statusOK
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
// for the op name, which it only looks up and formats into messages.
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
		return fail(invalid("buffer is NULL but capacity is %d", int(capacity)))
	}
	if int(capacity) < n {
		return fail(errf(statusBuffer, "buffer of %d bytes is too small: %d needed (including the NUL)", int(capacity), n))
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), n)
	copy(dst, s)
	dst[n-1] = 0
	return statusOK
}
