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

// The models that load from a zip archive's bytes (abi/multimodal_zip.go,
// abi/diffuse.go): for callers without a file system, the browser first.

// zipBytes is the archive buf holds, nbytes long, checked for fn. The
// loaders copy what they keep (weights are decompressed into tensors), so
// the caller's buffer is only read during the call and need not be copied.
func zipBytes(fn string, buf unsafe.Pointer, nbytes C.size_t) ([]byte, error) {
	if buf == nil && nbytes > 0 {
		return nil, abi.Invalidf("%s: buf is NULL but nbytes is %d", fn, uint64(nbytes))
	}
	if nbytes == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(buf), int(nbytes)), nil
}

//export wt_sentence_encoder_load_zip
func wt_sentence_encoder_load_zip(buf unsafe.Pointer, nbytes C.size_t, device *C.char, out *C.wt_sentence_encoder) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_sentence_encoder_load_zip"
	if out == nil {
		return invalid("%s: out is NULL", fn)
	}
	raw, err := zipBytes(fn, buf, nbytes)
	if err != nil {
		return fail(err)
	}
	d, _ := goString(device)
	h, err := abi.SentenceEncoderLoadZip(raw, d)
	return setObject(h, err, out)
}

//export wt_clip_load_zip
func wt_clip_load_zip(buf unsafe.Pointer, nbytes C.size_t, device *C.char, out *C.wt_clip) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_clip_load_zip"
	if out == nil {
		return invalid("%s: out is NULL", fn)
	}
	raw, err := zipBytes(fn, buf, nbytes)
	if err != nil {
		return fail(err)
	}
	d, _ := goString(device)
	h, err := abi.CLIPLoadZip(raw, d)
	return setObject(h, err, out)
}
