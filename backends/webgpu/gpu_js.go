//go:build js

package webgpu

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"unsafe"

	"github.com/cogentcore/webgpu/wgpu"
)

// syncCalls counts the synchronous calls from JavaScript now running (the
// browser SDK's bridge marks each one). Inside one, nothing may wait for a
// WebGPU promise: the promise settles on the event loop, which the
// synchronous call is blocking, so the Go runtime would deadlock and abort
// the whole module.
var syncCalls atomic.Int32

// EnterSyncCall marks a synchronous call from JavaScript; call the returned
// function when it returns.
func EnterSyncCall() (exit func()) {
	syncCalls.Add(1)
	return func() { syncCalls.Add(-1) }
}

// ErrNeedsEventLoop is the error of a GPU wait inside a synchronous call.
var ErrNeedsEventLoop = errors.New("webgpu: reading GPU memory in the browser waits for the event loop, " +
	"which a synchronous call blocks; use the async form (await tensor.data(), await tensor.toAsync(\"cpu\"), await wt.opAsync(...))")

// canBlock says whether this goroutine may wait for the GPU.
func canBlock() error {
	if syncCalls.Load() > 0 {
		return ErrNeedsEventLoop
	}
	return nil
}

// defaultMatmul is what runs untuned: the browser times nothing (timing
// needs waits that synchronous op calls cannot make), and the register-
// blocked kernels are the safe choice on every adapter there, software
// (SwiftShader) or GPU.
const defaultMatmul = variantRegBlock

// mapRead maps stage for reading; the caller holds b.mu. In the browser
// the mapping resolves on the JavaScript event loop; blocking this goroutine
// lets the Go runtime return to it until the callback fires.
func (b *Backend) mapRead(stage *wgpu.Buffer, size uint64) error {
	if err := canBlock(); err != nil {
		return err
	}
	done := make(chan wgpu.BufferMapAsyncStatus, 1)
	if err := stage.MapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.BufferMapAsyncStatus) { done <- s }); err != nil {
		return fmt.Errorf("webgpu: map for readback: %w", err)
	}
	// Let go of b.mu while the event loop runs: the page may call ops
	// (synchronously) before this read settles, and they must not wait for
	// a lock this goroutine holds until the event loop turns - the module
	// would deadlock. The copy into stage is already submitted, and queue
	// order keeps later work from changing what it reads; stage itself is
	// out of the pool until readback returns it.
	b.mu.Unlock()
	s := <-done
	b.mu.Lock()
	if err := takeDeviceErrors(); err != nil {
		return err
	}
	if s != wgpu.BufferMapAsyncStatusSuccess {
		return fmt.Errorf("webgpu: readback mapping failed with status %v", s)
	}
	return nil
}

// waitIdle blocks until submitted work has finished; the caller holds b.mu.
// In a synchronous call it returns at once: the queue keeps its order, so
// later reads still see the work.
func (b *Backend) waitIdle() {
	if canBlock() != nil {
		return
	}
	done := make(chan struct{}, 1)
	b.queue.OnSubmittedWorkDone(func(wgpu.QueueWorkDoneStatus) { done <- struct{}{} })
	b.mu.Unlock() // as in mapRead: synchronous calls may come meanwhile
	<-done
	b.mu.Lock()
}

// requiredFeatures asks for nothing extra in the browser: kernels hold f16
// in f32 there.
func requiredFeatures(*wgpu.Adapter) []wgpu.FeatureName { return nil }

// The browser reports WebGPU validation errors (a shader its compiler
// rejects, a bad binding) as events on the device, after the call that
// caused them has returned. They are collected here and the next read fails
// with them, so a broken kernel never passes off zeros as a result.
var deviceErrors struct {
	sync.Mutex
	msgs []string
}

// watchErrors listens for the device's uncaptured errors and its loss.
func watchErrors(dev *wgpu.Device) {
	// wgpu.Device in the browser is one js.Value (the GPUDevice), with no
	// accessor for it.
	jsDev := *(*js.Value)(unsafe.Pointer(dev))
	record := func(msg string) {
		deviceErrors.Lock()
		if len(deviceErrors.msgs) < 8 {
			deviceErrors.msgs = append(deviceErrors.msgs, msg)
		}
		deviceErrors.Unlock()
	}
	jsDev.Set("onuncapturederror", js.FuncOf(func(_ js.Value, args []js.Value) any {
		record(args[0].Get("error").Get("message").String())
		return nil
	}))
	jsDev.Get("lost").Call("then", js.FuncOf(func(_ js.Value, args []js.Value) any {
		record("device lost: " + args[0].Get("message").String())
		return nil
	}))
}

// takeDeviceErrors returns (and forgets) the errors reported since the last call.
func takeDeviceErrors() error {
	deviceErrors.Lock()
	defer deviceErrors.Unlock()
	if len(deviceErrors.msgs) == 0 {
		return nil
	}
	msg := strings.Join(deviceErrors.msgs, "; ")
	deviceErrors.msgs = nil
	return fmt.Errorf("webgpu: the browser's WebGPU reported an error in earlier work, so its results are not valid: %s", msg)
}

// uploadSubmitBytes: the browser keeps no staging copy for us.
const uploadSubmitBytes = 1 << 62

// reclaimLocked has nothing to do in the browser: it frees a destroyed
// buffer itself once the GPU is done with it.
func (b *Backend) reclaimLocked() {}

// writeBuffer copies data into buf at offset. The library's WriteBuffer
// hands WebGPU a view of the module's memory, which is empty if the Go heap
// grows (and with it the memory) before the browser reads it: seen as
// "Number of bytes to write is too large" on an upload. A JavaScript-owned
// copy cannot move.
func (b *Backend) writeBuffer(buf *wgpu.Buffer, offset uint64, data []byte) error {
	u := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(u, data)
	// wgpu.Queue and wgpu.Buffer are each one js.Value in the browser.
	jsQueue := *(*js.Value)(unsafe.Pointer(b.queue))
	jsBuf := *(*js.Value)(unsafe.Pointer(buf))
	jsQueue.Call("writeBuffer", jsBuf, offset, u, 0, len(data))
	return nil
}
