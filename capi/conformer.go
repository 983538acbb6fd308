package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

// Speech encoding and resampling (abi/conformer.go): wt_conformer_* and
// wt_audio_resample.

//export wt_conformer_load
func wt_conformer_load(dir, device *C.char, out *C.wt_conformer) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_conformer_load", dir, device, out, abi.ConformerLoad)
}

//export wt_conformer_free
func wt_conformer_free(model C.wt_conformer) (status C.int32_t) {
	defer guard(&status)
	return done(abi.ConformerFree(int64(model)))
}

//export wt_conformer_sampling_rate
func wt_conformer_sampling_rate(model C.wt_conformer, rate *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return getInt32("wt_conformer_sampling_rate", rate, int64(model), abi.ConformerSamplingRate)
}

//export wt_conformer_encode
func wt_conformer_encode(model C.wt_conformer, waves *C.wt_tensor, n C.int32_t, out, frameMask *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_conformer_encode: out is NULL")
	}
	hs, err := handles(waves, n, "waves", "n_waves")
	if err != nil {
		return fail(abi.Prefix(err, "wt_conformer_encode"))
	}
	hidden, mask, err := abi.ConformerEncode(int64(model), hs, frameMask != nil)
	return setWithOptional(hidden, mask, err, out, frameMask)
}

//export wt_audio_resample
func wt_audio_resample(x C.wt_tensor, fromHz, toHz C.int32_t, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_audio_resample: out is NULL")
	}
	h, err := abi.AudioResample(int64(x), int(fromHz), int(toHz))
	return setHandle(h, err, out)
}
