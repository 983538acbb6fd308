//go:build !js

package webgpu

import (
	"fmt"
	"time"

	"github.com/cogentcore/webgpu/wgpu"
)

// canBlock says whether this goroutine may wait for the GPU: natively it
// always may.
func canBlock() error { return nil }

// defaultMatmul is what runs untuned: tiled on hardware, replaced by the
// register-blocked kernel on software adapters (see open).
const defaultMatmul = variantTiled

// adapterInfo is wgpu-native's own description of the adapter.
func adapterInfo(a *wgpu.Adapter) wgpu.AdapterInfo { return a.GetInfo() }

// watchErrors: wgpu-native reports validation errors through the calls
// themselves.
func watchErrors(*wgpu.Device) {}

// writeBuffer copies data into buf at offset.
func (b *Backend) writeBuffer(buf *wgpu.Buffer, offset uint64, data []byte) error {
	b.unsubmitted += uint64(len(data))
	return b.queue.WriteBuffer(buf, offset, data)
}

// mapRead maps stage for reading and waits, polling the device.
func (b *Backend) mapRead(stage *wgpu.Buffer, size uint64) error {
	var status wgpu.BufferMapAsyncStatus
	done := false
	err := stage.MapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.BufferMapAsyncStatus) { status, done = s, true })
	if err != nil {
		return fmt.Errorf("webgpu: map for readback: %w", err)
	}
	b.pollUntil(&done)
	if status != wgpu.BufferMapAsyncStatusSuccess {
		return fmt.Errorf("webgpu: readback mapping failed with status %v", status)
	}
	return nil
}

// waitIdle blocks until submitted work has finished.
func (b *Backend) waitIdle() {
	done := false
	b.queue.OnSubmittedWorkDone(func(wgpu.QueueWorkDoneStatus) { done = true })
	b.pollUntil(&done)
}

// pollUntil polls without blocking until *done. A blocking poll gives up
// after wgpu-core's 5 s fence timeout and tears the device down while a
// long kernel (a 2048^3 matmul on a software driver) is still running,
// which crashes the driver; non-blocking polls with short sleeps wait as
// long as the work takes.
func (b *Backend) pollUntil(done *bool) {
	nap := 20 * time.Microsecond
	for {
		b.device.Poll(false, nil)
		if *done {
			return
		}
		time.Sleep(nap)
		nap = min(2*nap, time.Millisecond)
	}
}

// requiredFeatures asks for shader-f16 when the adapter has it, so kernels
// may use f16 math there.
func requiredFeatures(a *wgpu.Adapter) []wgpu.FeatureName {
	if a.HasFeature(wgpu.FeatureNameShaderF16) {
		return []wgpu.FeatureName{wgpu.FeatureNameShaderF16}
	}
	return nil
}

// AdapterReport describes one adapter for `webtensor doctor`.
type AdapterReport struct {
	Name, Driver, Backend, Type string
	Features                    []string
	Limits                      wgpu.Limits
}

// Adapters lists every adapter the wgpu instance sees: those of Vulkan,
// Metal and DX12, the backends it serves (newInstance).
func Adapters() []AdapterReport {
	inst := theInstance()
	if inst == nil {
		return nil
	}
	var out []AdapterReport
	for _, a := range inst.EnumerateAdapters(nil) {
		info := a.GetInfo()
		r := AdapterReport{Name: info.Name, Driver: info.DriverDescription, Backend: info.BackendType.String(),
			Type: info.AdapterType.String(), Limits: a.GetLimits().Limits}
		for _, f := range a.EnumerateFeatures() {
			r.Features = append(r.Features, f.String())
		}
		out = append(out, r)
	}
	return out
}

// uploadSubmitBytes bounds the staging copies wgpu-native keeps for writes
// not yet submitted: past it an upload submits them (reclaimLocked).
// Uploads with no kernel after them (tensors made from host data and
// closed) otherwise held a staging copy each for as long as nothing ran.
const uploadSubmitBytes = 64 << 20

// reclaimLocked makes wgpu-native free what it holds for us: queued writes
// are submitted (an empty submission carries them), which frees their
// staging copies once done, and polling frees the buffers destroyed since
// work using them finished. Work still running keeps both, so a goroutine
// polls until the queue is empty: without it a destroyed buffer lived
// until the next kernel or read happened to poll. The caller holds b.mu.
func (b *Backend) reclaimLocked() {
	if b.unsubmitted > 0 {
		b.queue.Submit()
		b.unsubmitted = 0
	}
	if !b.device.Poll(false, nil) && !b.polling {
		b.polling = true
		go b.pollUntilIdle()
	}
}

// pollUntilIdle polls, under b.mu (poll runs callbacks that other calls
// wait on), until no submitted work is left.
func (b *Backend) pollUntilIdle() {
	nap := 100 * time.Microsecond
	for {
		time.Sleep(nap)
		nap = min(2*nap, 10*time.Millisecond)
		b.mu.Lock()
		idle := b.device.Poll(false, nil)
		if idle {
			b.polling = false
		}
		b.mu.Unlock()
		if idle {
			return
		}
	}
}
