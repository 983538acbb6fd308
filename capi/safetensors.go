package main

/*
#include <stdint.h>
#include <stddef.h>
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

//export wt_safetensors_header
func wt_safetensors_header(buf unsafe.Pointer, nbytes C.size_t, fileSize C.uint64_t, name *C.char,
	out *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if buf == nil && nbytes > 0 {
		return invalid("wt_safetensors_header: buf is NULL but nbytes is %d", uint64(nbytes))
	}
	if err := abi.CheckSafetensorsPrefix(uint64(nbytes), uint64(fileSize)); err != nil {
		return fail(err)
	}
	var prefix []byte
	if nbytes > 0 {
		prefix = unsafe.Slice((*byte)(buf), int(nbytes)) // read in place: only the header is looked at
	}
	label, _ := goString(name)
	h, err := abi.SafetensorsHeader(prefix, uint64(fileSize), label)
	return writeResult(h, err, out, capacity, needed)
}
