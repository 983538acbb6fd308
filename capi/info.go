package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

//export wt_build_info
func wt_build_info(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return writeString(abi.BuildInfo(), buf, capacity, needed)
}

//export wt_manual_seed
func wt_manual_seed(seed C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	abi.ManualSeed(uint64(seed))
	return statusOK
}

//export wt_rng_state
func wt_rng_state(seed, offset *C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	if seed == nil || offset == nil {
		return invalid("wt_rng_state: seed or offset is NULL")
	}
	s, o := abi.RNGState()
	*seed, *offset = C.uint64_t(s), C.uint64_t(o)
	return statusOK
}

//export wt_set_rng_state
func wt_set_rng_state(seed, offset C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	abi.SetRNGState(uint64(seed), uint64(offset))
	return statusOK
}

//export wt_collect
func wt_collect() (status C.int32_t) {
	defer guard(&status)
	abi.Collect()
	return statusOK
}

//export wt_promote_types
func wt_promote_types(a, b C.int32_t, out *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_promote_types: out is NULL")
	}
	d, err := abi.PromoteTypes(int64(a), int64(b))
	if err == nil {
		*out = C.int32_t(d)
	}
	return done(err)
}
