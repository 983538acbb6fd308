package abi

import (
	"sync/atomic"

	"github.com/webtensor/webtensor/core"
)

// A no-grad scope of the ABI belongs to its caller's thread, as PyTorch's
// no_grad does: a thread in an optimiser step must not stop another
// thread's forward pass from being recorded. Go has no thread-locals, so
// each layer keeps the depth where its threads are - capi in a C
// thread-local, the browser in one variable (JavaScript calls it from one
// thread) - and hands this package a pointer to it. Calls that record ops
// take the caller's answer as a noGrad argument: ops get detached inputs,
// other calls run under core.NoGrad on the calling goroutine. Nothing
// process-wide is switched.

// openScopes counts the open scopes of all threads, so a call asks for its
// thread's depth only while some thread has a scope open.
var openScopes atomic.Int32

// NoGradEnter is wt_no_grad_enter for a caller whose depth is *depth.
func NoGradEnter(depth *int32) {
	*depth++
	openScopes.Add(1)
}

// NoGradExit is wt_no_grad_exit.
func NoGradExit(depth *int32) error {
	if *depth <= 0 {
		return Invalidf("wt_no_grad_exit: no_grad exit without a matching enter on this thread")
	}
	*depth--
	openScopes.Add(-1)
	return nil
}

// InNoGrad reports whether the caller is inside a no-grad scope; depth,
// which may cost a call into C, is asked only while any scope is open.
func InNoGrad(depth func() *int32) bool {
	return openScopes.Load() > 0 && *depth() > 0
}

// underGrad runs fn under the caller's grad mode.
func underGrad(noGrad bool, fn func()) {
	if noGrad {
		core.NoGrad(fn)
		return
	}
	fn()
}

// detachedIf gives an op call detached inputs inside a no-grad scope:
// nothing computed from them is recorded, at no cost to other threads.
func detachedIf(noGrad bool, ins []*core.Tensor) []*core.Tensor {
	if !noGrad {
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
