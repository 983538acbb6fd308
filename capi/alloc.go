package main

/*
#include <stdlib.h>
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/backends/cpu"
)

// CPU tensors made through the ABI live in C memory (64-byte aligned), so a
// DLPack export can hand their address to C without a copy and without
// breaking the rule that C never holds Go pointers. The CPU backend frees
// the block when the storage is released or garbage collected.
func init() {
	cpu.SetHostAllocator(func(n int) ([]byte, func(), error) {
		var p unsafe.Pointer
		size := max(n, 1)
		if C.posix_memalign(&p, 64, C.size_t(size)) != 0 || p == nil {
			return nil, nil, errf(statusOOM, "cannot allocate %d bytes of host memory", n)
		}
		return unsafe.Slice((*byte)(p), n), func() { C.free(p) }, nil
	})
}
