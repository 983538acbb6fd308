package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
int32_t *wt_thread_no_grad_depth(void);
*/
import "C"

import (
	"github.com/webtensor/webtensor/abi"
)

// A no-grad scope of the C ABI belongs to the calling OS thread: its depth
// is a C thread-local (gradmode.c), which abi counts through a pointer. An
// exported function runs on its caller's thread, so the pointer is the
// caller's for the whole call.

func threadDepth() *int32 { return (*int32)(C.wt_thread_no_grad_depth()) }

// threadNoGrad reports whether the calling thread is inside wt_no_grad_enter.
func threadNoGrad() bool { return abi.InNoGrad(threadDepth) }

//export wt_no_grad_enter
func wt_no_grad_enter() (status C.int32_t) {
	defer guard(&status)
	abi.NoGradEnter(threadDepth())
	return statusOK
}

//export wt_no_grad_exit
func wt_no_grad_exit() (status C.int32_t) {
	defer guard(&status)
	return done(abi.NoGradExit(threadDepth()))
}
