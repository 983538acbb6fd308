package main

/*
#include <stdint.h>
#include <stddef.h>
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/core/safetensors"
)

// The checkpoint validator for the SDKs: each reads a safetensors file's
// layout from here instead of parsing the header itself, so a file is
// accepted or refused, with the same message, in every language.

//export wt_safetensors_header
func wt_safetensors_header(buf unsafe.Pointer, nbytes C.size_t, fileSize C.uint64_t, name *C.char,
	out *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	if buf == nil && nbytes > 0 {
		return fail(invalid("wt_safetensors_header: buf is NULL but nbytes is %d", uint64(nbytes)))
	}
	if uint64(fileSize) > math.MaxInt64 || uint64(nbytes) > uint64(fileSize) {
		return fail(invalid("wt_safetensors_header: %d bytes given of a file of %d", uint64(nbytes), uint64(fileSize)))
	}
	var prefix []byte
	if nbytes > 0 {
		prefix = unsafe.Slice((*byte)(buf), int(nbytes)) // read in place: only the header is looked at
	}
	h, err := safetensors.ParseHeader(prefix, int64(fileSize))
	if err != nil {
		if label, _ := goString(name); label != "" {
			return fail(invalid("%s: %v", label, err))
		}
		return fail(invalid("%v", err))
	}
	return writeString(string(h.JSON()), out, capacity, needed)
}
