package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// Borrowed imports are zero-copy input for callers that cannot hand over a
// DLPack deleter: a deleter may run on any thread, and some hosts (a
// JavaScript engine through an FFI) cannot be called back from one. Instead
// the caller keeps its memory alive and watches a flag: the library stores
// 1 in *released (atomically, from whichever thread frees the storage) once
// nothing of it uses the memory any more, and never touches either again.

//export wt_tensor_from_host_borrowed
func wt_tensor_from_host_borrowed(data unsafe.Pointer, nbytes C.size_t, dtype C.int32_t, shape *C.int64_t, ndim C.int32_t, released *C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil || released == nil {
		return invalid("wt_tensor_from_host_borrowed: out or released is NULL")
	}
	l, err := parseLayout(dtype, shape, ndim, nil)
	if err != nil {
		return fail(err)
	}
	size := l.DType.Size()
	want, err := l.DataSize(uint64(nbytes))
	if err != nil {
		return fail(err)
	}
	flag := (*int32)(unsafe.Pointer(released))
	if want == 0 {
		atomic.StoreInt32(flag, 1) // nothing to borrow
		h, err := abi.NewOutput(core.Zeros(l.Shape, l.DType, core.CPU))
		return setHandle(h, err, out)
	}
	if data == nil {
		return invalid("wt_tensor_from_host_borrowed: data is NULL for %d bytes", want)
	}
	if uintptr(data)%uintptr(size) != 0 {
		return invalid("wt_tensor_from_host_borrowed: data at %p is not aligned to %d bytes for %s", data, size, l.DType)
	}
	backend, err := core.BackendFor(core.CPU)
	if err != nil {
		return fail(err)
	}
	atomic.StoreInt32(flag, 0)
	mem := unsafe.Slice((*byte)(data), want)
	storage := cpu.WrapHost(mem, func() { atomic.StoreInt32(flag, 1) })
	t := core.WrapStorage(backend, storage, l.Shape, core.ContiguousStrides(l.Shape), 0, l.DType)
	h, err := abi.NewOutput(t)
	return setHandle(h, err, out)
}
