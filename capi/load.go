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

// What every wt_*_load shares: the arguments C passes checked and read
// the same way, the new object's handle written the same way, so each
// entry point names only its call.

// setObject writes a new object handle (any of the int64 handle types) or
// fails with err.
func setObject[T ~int64](h int64, err error, out *T) C.int32_t {
	if err != nil {
		return fail(err)
	}
	*out = T(h)
	return statusOK
}

// loadNamed is the body of the wt_*_load calls that take a path and a
// device: out checked, the C strings read (NULL reads as "", which load
// refuses naming fn), the new handle written. A loader that takes no
// device (a tokenizer) is passed a nil one and ignores it.
func loadNamed[T ~int64](fn string, path, device *C.char, out *T, load func(path, device string) (int64, error)) C.int32_t {
	if out == nil {
		return invalid("%s: out is NULL", fn)
	}
	p, _ := goString(path)
	d, _ := goString(device)
	h, err := load(p, d)
	return setObject(h, err, out)
}

// loadFromBuffer is the body of the calls that load a model from the
// caller's bytes and a device (wt_*_load_zip, wt_onnx_load_bytes): out
// checked, the bytes read in place (callerBytes), the new handle written.
func loadFromBuffer[T ~int64](fn string, buf unsafe.Pointer, nbytes C.size_t, device *C.char, out *T,
	load func(data []byte, device string) (int64, error)) C.int32_t {
	if out == nil {
		return invalid("%s: out is NULL", fn)
	}
	raw, err := callerBytes(fn, buf, nbytes)
	if err != nil {
		return fail(err)
	}
	d, _ := goString(device)
	h, err := load(raw, d)
	return setObject(h, err, out)
}

// callerBytes is what buf holds, nbytes long, checked for fn. The loaders
// copy what they keep (weights are decompressed into tensors, parsers keep
// strings), so the caller's buffer is only read during the call and need
// not be copied.
func callerBytes(fn string, buf unsafe.Pointer, nbytes C.size_t) ([]byte, error) {
	if buf == nil && nbytes > 0 {
		return nil, abi.Invalidf("%s: buf is NULL but nbytes is %d", fn, uint64(nbytes))
	}
	if nbytes == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(buf), int(nbytes)), nil
}
