package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

// The trace functions (abi/trace.go), their C arguments checked here.

//export wt_profile_start
func wt_profile_start(flags C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return done(abi.TraceStart(int64(flags)))
}

//export wt_profile_stop
func wt_profile_stop() (status C.int32_t) {
	defer guard(&status)
	return done(abi.TraceStop())
}

//export wt_profile_write
func wt_profile_write(path *C.char) (status C.int32_t) {
	defer guard(&status)
	p, ok := goString(path)
	if !ok {
		return invalid("wt_profile_write: path is NULL")
	}
	return done(abi.TraceWrite(p))
}

//export wt_profile_json
func wt_profile_json(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.TraceJSON()
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_profile_exit_path
func wt_profile_exit_path(buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return writeResult(abi.TraceAtExitPath(), nil, buf, capacity, needed)
}
