//go:build !js

package webgpu

import (
	"fmt"

	"github.com/cogentcore/webgpu/wgpu"
)

// mapRead maps stage for reading and waits, polling the device.
func (b *Backend) mapRead(stage *wgpu.Buffer, size uint64) error {
	var status wgpu.BufferMapAsyncStatus
	done := false
	err := stage.MapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.BufferMapAsyncStatus) { status, done = s, true })
	if err != nil {
		return fmt.Errorf("webgpu: map for readback: %w", err)
	}
	for !done {
		b.device.Poll(true, nil)
	}
	if status != wgpu.BufferMapAsyncStatusSuccess {
		return fmt.Errorf("webgpu: readback mapping failed with status %v", status)
	}
	return nil
}

// waitIdle blocks until submitted work has finished.
func (b *Backend) waitIdle() { b.device.Poll(true, nil) }
