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

//export wt_sentence_encoder_load_zip
func wt_sentence_encoder_load_zip(buf unsafe.Pointer, nbytes C.size_t, device *C.char, out *C.wt_sentence_encoder) (status C.int32_t) {
	defer guard(&status)
	return loadFromBuffer("wt_sentence_encoder_load_zip", buf, nbytes, device, out, abi.SentenceEncoderLoadZip)
}

//export wt_clip_load_zip
func wt_clip_load_zip(buf unsafe.Pointer, nbytes C.size_t, device *C.char, out *C.wt_clip) (status C.int32_t) {
	defer guard(&status)
	return loadFromBuffer("wt_clip_load_zip", buf, nbytes, device, out, abi.CLIPLoadZip)
}
