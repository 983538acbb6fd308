package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
int32_t wt_thread_no_grad(void);
void wt_thread_no_grad_add(int32_t d);
*/
import "C"

import (
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
)

// A no-grad scope of the C ABI belongs to the calling OS thread (kept in a
// C thread-local, gradmode.c): an exported function runs on its caller's
// thread, so it reads the caller's scope and passes it down per call (ops
// get detached inputs, other calls run under core.NoGrad on this
// goroutine). Nothing process-wide is switched.

// threadScopes counts the open scopes of all threads, so a call asks its
// own thread only while some thread has one open.
var threadScopes atomic.Int32

// threadNoGrad reports whether the calling thread is inside wt_no_grad_enter.
func threadNoGrad() bool { return threadScopes.Load() > 0 && C.wt_thread_no_grad() > 0 }

// underThreadGrad runs fn under the calling thread's grad mode.
func underThreadGrad(fn func()) {
	if threadNoGrad() {
		core.NoGrad(fn)
		return
	}
	fn()
}

// detachedIfNoGrad gives an op call detached inputs inside a no-grad scope:
// nothing computed from them is recorded, at no cost to other threads.
func detachedIfNoGrad(ins []*core.Tensor) []*core.Tensor {
	if !threadNoGrad() {
		return ins
	}
	out := make([]*core.Tensor, len(ins))
	for i, t := range ins {
		if t != nil {
			out[i] = t.Detach()
		}
	}
	return out
}

//export wt_no_grad_enter
func wt_no_grad_enter() (status C.int32_t) {
	defer guard(&status)
	C.wt_thread_no_grad_add(1)
	threadScopes.Add(1)
	return statusOK
}

//export wt_no_grad_exit
func wt_no_grad_exit() (status C.int32_t) {
	defer guard(&status)
	if C.wt_thread_no_grad() <= 0 {
		return fail(invalid("wt_no_grad_exit: no_grad exit without a matching enter on this thread"))
	}
	C.wt_thread_no_grad_add(-1)
	threadScopes.Add(-1)
	return statusOK
}
