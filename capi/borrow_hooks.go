package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include <stdlib.h>
#include "webtensor.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// Hooks for borrow_test.go (cgo is not allowed in tests): C memory to lend,
// the flag's value, and the call itself.

type cBlock struct {
	data unsafe.Pointer
	flag *C.int32_t
}

func newCBlock(n int) cBlock {
	return cBlock{data: C.calloc(C.size_t(max(n, 1)), 1), flag: (*C.int32_t)(C.calloc(1, 4))}
}

func (b cBlock) bytes(n int) []byte { return unsafe.Slice((*byte)(b.data), n) }

func (b cBlock) released() int32 { return atomic.LoadInt32((*int32)(unsafe.Pointer(b.flag))) }

func (b cBlock) free() {
	C.free(b.data)
	C.free(unsafe.Pointer(b.flag))
}

func callBorrow(b cBlock, offset, nbytes int, dtype int32, shape []int64, noFlag bool) (int32, int64) {
	var out C.wt_tensor
	flag := b.flag
	if noFlag {
		flag = nil
	}
	var sp *C.int64_t
	if len(shape) > 0 {
		sp = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	st := wt_tensor_from_host_borrowed(unsafe.Add(b.data, offset), C.size_t(nbytes), C.int32_t(dtype), sp, C.int32_t(len(shape)), flag, &out)
	return int32(st), int64(out)
}
