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

// The domain libraries' methods by name (abi/call.go): one export for all
// of them, the result read back through a handle.

//export wt_call
func wt_call(target *C.char, self C.int64_t, argsJSON *C.char, data unsafe.Pointer, nbytes C.size_t,
	out *C.wt_call_result) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_call: out is NULL")
	}
	t, ok := goString(target)
	if !ok || t == "" {
		return invalid("wt_call: target is NULL or empty")
	}
	args, _ := goString(argsJSON)
	raw, err := callerBytes("wt_call", data, nbytes)
	if err != nil {
		return fail(err)
	}
	if raw == nil && data != nil {
		raw = []byte{} // empty data, not none: a loader says what is wrong with it
	}
	h, err := abi.CallToResult(t, int64(self), args, raw, abi.CallContext{NoGrad: threadNoGrad()})
	return setObject(h, err, out)
}

//export wt_call_result_json
func wt_call_result_json(result C.wt_call_result, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.CallResultJSON(int64(result))
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_call_result_free
func wt_call_result_free(result C.wt_call_result) (status C.int32_t) {
	defer guard(&status)
	return done(abi.CallResultFree(int64(result)))
}

// setObject writes a new handle (any of the int64 handle types) or fails
// with err.
func setObject[T ~int64](h int64, err error, out *T) C.int32_t {
	if err != nil {
		return fail(err)
	}
	*out = T(h)
	return statusOK
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
