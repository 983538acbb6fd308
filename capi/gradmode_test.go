package main

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A no-grad scope belongs to the thread that opened it: ops another thread
// makes meanwhile are recorded, ops of the scope's thread are not, and an
// exit on a thread without a scope is an error. (Each goroutine is locked
// to its thread, as every C caller is on its own.)
func TestNoGradScopeIsPerThread(t *testing.T) {
	pinThread(t)
	w := mustTensor(t, []float32{1, 2, 3}, 3)
	defer callFree(w)
	require.Equal(t, int32(statusOK), callSetRequiresGrad(w, true), lastError())

	entered, checked := make(chan struct{}), make(chan struct{})
	var inScope, outside bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the thread in no_grad
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		assert.Equal(t, int32(statusOK), callNoGradEnter(), lastError())
		close(entered)
		<-checked
		if st, outs, _ := callOp("mul", false, []int64{w, w}, nil, 1); assert.Equal(t, int32(statusOK), st, lastError()) {
			_, inScope = callRequiresGrad(outs[0])
			callFree(outs[0])
		}
		assert.Equal(t, int32(statusOK), callNoGradExit(), lastError())
	}()
	go func() { // another thread, while the first is in its scope
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		<-entered
		if st, outs, _ := callOp("mul", false, []int64{w, w}, nil, 1); assert.Equal(t, int32(statusOK), st, lastError()) {
			_, outside = callRequiresGrad(outs[0])
			callFree(outs[0])
		}
		assert.Equal(t, int32(statusInvalid), callNoGradExit(), "an exit on a thread with no scope")
		assert.Contains(t, lastError(), "without a matching enter on this thread")
		close(checked)
	}()
	wg.Wait()
	assert.False(t, inScope, "an op inside the thread's no_grad scope was recorded")
	assert.True(t, outside, "another thread's op was not recorded while one thread was in no_grad")
}

// A freed gradient handle given to wt_backward is an error, never taken for
// "no gradient" (which is 0).
func TestBackwardWithFreedGradientIsAnError(t *testing.T) {
	pinThread(t)
	w := mustTensor(t, []float32{1, 2}, 2)
	defer callFree(w)
	require.Equal(t, int32(statusOK), callSetRequiresGrad(w, true), lastError())
	st, outs, _ := callOp("mul", false, []int64{w, w}, nil, 1)
	require.Equal(t, int32(statusOK), st, lastError())
	y := outs[0]
	defer callFree(y)
	g := mustTensor(t, []float32{1, 1}, 2)
	require.Equal(t, int32(statusOK), callFree(g))
	assert.Equal(t, int32(statusHandle), callBackward(y, g))
	assert.Contains(t, lastError(), "gradient")
	st, grad := callGrad(w)
	require.Equal(t, int32(statusOK), st)
	assert.Zero(t, grad, "a failed backward accumulated a gradient")
}
