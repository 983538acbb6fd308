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

// State dicts and checkpoints (abi/state.go).

// setState writes a new state handle or fails with err.
func setState(h int64, err error, out *C.wt_state) C.int32_t {
	if err != nil {
		return fail(err)
	}
	*out = C.wt_state(h)
	return statusOK
}

//export wt_state_new
func wt_state_new(out *C.wt_state) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_state_new: out is NULL")
	}
	return setState(abi.StateNew(), nil, out)
}

//export wt_state_free
func wt_state_free(s C.wt_state) (status C.int32_t) {
	defer guard(&status)
	return done(abi.StateFree(int64(s)))
}

//export wt_state_put
func wt_state_put(s C.wt_state, name *C.char, t C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	n, ok := goString(name)
	if !ok {
		return invalid("wt_state_put: name is NULL")
	}
	return done(abi.StatePut(int64(s), n, int64(t)))
}

//export wt_state_count
func wt_state_count(s C.wt_state, count *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_state_count", count, func() (int, error) { return abi.StateCount(int64(s)) },
		func(n int) C.int32_t { return C.int32_t(n) })
}

//export wt_state_name
func wt_state_name(s C.wt_state, index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	name, err := abi.StateName(int64(s), int(index))
	return writeResult(name, err, buf, capacity, needed)
}

//export wt_state_get
func wt_state_get(s C.wt_state, index C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_state_get: out is NULL")
	}
	h, err := abi.StateGet(int64(s), int(index))
	return setHandle(h, err, out)
}

//export wt_state_set_metadata
func wt_state_set_metadata(s C.wt_state, key, value *C.char) (status C.int32_t) {
	defer guard(&status)
	k, okK := goString(key)
	v, okV := goString(value)
	if !okK || !okV {
		return invalid("wt_state_set_metadata: key or value is NULL")
	}
	return done(abi.StateSetMetadata(int64(s), k, v))
}

//export wt_state_metadata_count
func wt_state_metadata_count(s C.wt_state, count *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_state_metadata_count", count, func() (int, error) {
		m, err := abi.StateMetadata(int64(s))
		return len(m), err
	}, func(n int) C.int32_t { return C.int32_t(n) })
}

// metadataPart writes part (0: key, 1: value) of metadata entry index.
func metadataPart(s C.wt_state, index C.int32_t, part int, buf *C.char, capacity C.size_t, needed *C.size_t) C.int32_t {
	m, err := abi.StateMetadata(int64(s))
	if err != nil {
		return fail(err)
	}
	e, err := abi.MetadataEntry(m, int(index))
	return writeResult(e[part], err, buf, capacity, needed)
}

//export wt_state_metadata_key
func wt_state_metadata_key(s C.wt_state, index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return metadataPart(s, index, 0, buf, capacity, needed)
}

//export wt_state_metadata_value
func wt_state_metadata_value(s C.wt_state, index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return metadataPart(s, index, 1, buf, capacity, needed)
}

//export wt_state_save
func wt_state_save(s C.wt_state, path *C.char) (status C.int32_t) {
	defer guard(&status)
	p, _ := goString(path)
	return done(abi.StateSave(int64(s), p))
}

//export wt_state_to_bytes
func wt_state_to_bytes(s C.wt_state, buf unsafe.Pointer, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	n, err := abi.StateEncodedSize(int64(s))
	if err != nil {
		return fail(err)
	}
	if needed != nil {
		*needed = C.size_t(n)
	}
	if buf == nil && capacity > 0 {
		return invalid("wt_state_to_bytes: buf is NULL but capacity is %d", int(capacity))
	}
	if int(capacity) < n {
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "wt_state_to_bytes: buffer of %d bytes is too small: %d needed", int(capacity), n))
	}
	raw, err := abi.StateEncode(int64(s))
	if err != nil {
		return fail(err)
	}
	if len(raw) != n { // a state put to meanwhile
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "wt_state_to_bytes: the state changed during the call: %d bytes needed", len(raw)))
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(buf), n), raw)
	}
	return statusOK
}

//export wt_state_load
func wt_state_load(path, device *C.char, metadataOnly C.int32_t, out *C.wt_state) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_state_load: out is NULL")
	}
	p, _ := goString(path)
	d, _ := goString(device)
	h, err := abi.StateLoad(p, d, metadataOnly != 0)
	return setState(h, err, out)
}

//export wt_state_from_bytes
func wt_state_from_bytes(buf unsafe.Pointer, nbytes C.size_t, device, name *C.char, out *C.wt_state) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_state_from_bytes: out is NULL")
	}
	if buf == nil && nbytes > 0 {
		return invalid("wt_state_from_bytes: buf is NULL but nbytes is %d", uint64(nbytes))
	}
	var raw []byte
	if nbytes > 0 {
		raw = unsafe.Slice((*byte)(buf), int(nbytes)) // tensors copy what they keep
	}
	d, _ := goString(device)
	label, _ := goString(name)
	h, err := abi.StateDecode(raw, d, label)
	return setState(h, err, out)
}

//export wt_state_assign
func wt_state_assign(module, values C.wt_state, strict C.int32_t, moduleName *C.char) (status C.int32_t) {
	defer guard(&status)
	label, _ := goString(moduleName)
	return done(abi.StateAssign(int64(module), int64(values), strict != 0, label))
}
