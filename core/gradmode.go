package core

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Grad mode belongs to the goroutine that sets it, as PyTorch's belongs to
// a thread: NoGrad on one goroutine (an optimiser step, an evaluation)
// leaves the forward passes other goroutines are recording alone, and
// Backward switches nothing off (its rules work on detached tensors, so
// nothing they compute is recorded). Go has no goroutine-local storage, so
// a scope is kept in a map keyed by goroutine id; while no goroutine is in
// a scope, GradEnabled is one atomic load and never looks the id up. The C
// ABI keeps its scopes per OS thread (capi) and passes them down per call.

var (
	// scopes counts the open NoGrad scopes of all goroutines.
	scopes atomic.Int32
	// depth holds each goroutine's open scopes (goroutine id -> int);
	// only the goroutine itself writes its entry.
	depth sync.Map
	// processOff counts the process-wide scopes of EnterNoGrad.
	processOff atomic.Int32
)

// GradEnabled reports whether ops the calling goroutine makes are recorded
// for autograd: not inside NoGrad (on this goroutine) nor between
// EnterNoGrad and ExitNoGrad (anywhere).
func GradEnabled() bool {
	if processOff.Load() > 0 {
		return false
	}
	if scopes.Load() == 0 {
		return true
	}
	_, off := depth.Load(goroutineID())
	return !off
}

// NoGrad runs fn without recording the ops it makes on the calling
// goroutine for autograd. Other goroutines, including any fn starts, record
// as usual.
func NoGrad(fn func()) {
	defer NoGradScope()()
	fn()
}

// NoGradScope turns recording off for the calling goroutine until the
// returned function is called (once, by the same goroutine): NoGrad for
// code that cannot wrap a closure, as in `defer core.NoGradScope()()`.
// Scopes nest.
func NoGradScope() (end func()) {
	id := goroutineID()
	n, _ := depth.Load(id)
	d, _ := n.(int)
	depth.Store(id, d+1)
	scopes.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			scopes.Add(-1)
			if n, _ := depth.Load(id); n.(int) > 1 {
				depth.Store(id, n.(int)-1)
			} else {
				depth.Delete(id)
			}
		})
	}
}

// EnterNoGrad and ExitNoGrad bracket a process-wide no-grad scope, for a
// single-threaded host that cannot tie a scope to a goroutine (the js/wasm
// SDK, whose calls each run on a new goroutine). Everywhere else use NoGrad
// or NoGradScope, which do not stop other goroutines from recording. Calls
// nest; an exit without an enter is an error.
func EnterNoGrad() { processOff.Add(1) }

// ExitNoGrad ends the innermost scope opened by EnterNoGrad.
func ExitNoGrad() error {
	for {
		n := processOff.Load()
		if n <= 0 {
			return fmt.Errorf("no_grad exit without a matching enter")
		}
		if processOff.CompareAndSwap(n, n-1) {
			return nil
		}
	}
}
