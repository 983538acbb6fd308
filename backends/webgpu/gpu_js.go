//go:build js

package webgpu

import (
	"fmt"

	"github.com/cogentcore/webgpu/wgpu"
)

// mapRead maps stage for reading. In the browser the mapping resolves on
// the JavaScript event loop; blocking this goroutine lets the Go runtime
// return to it until the callback fires.
func (b *Backend) mapRead(stage *wgpu.Buffer, size uint64) error {
	done := make(chan wgpu.BufferMapAsyncStatus, 1)
	if err := stage.MapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.BufferMapAsyncStatus) { done <- s }); err != nil {
		return fmt.Errorf("webgpu: map for readback: %w", err)
	}
	if s := <-done; s != wgpu.BufferMapAsyncStatusSuccess {
		return fmt.Errorf("webgpu: readback mapping failed with status %v", s)
	}
	return nil
}

// waitIdle blocks until submitted work has finished.
func (b *Backend) waitIdle() {
	done := make(chan struct{}, 1)
	b.queue.OnSubmittedWorkDone(func(wgpu.QueueWorkDoneStatus) { done <- struct{}{} })
	<-done
}

// requiredFeatures asks for nothing extra in the browser: kernels hold f16
// in f32 there.
func requiredFeatures(*wgpu.Adapter) []wgpu.FeatureName { return nil }
