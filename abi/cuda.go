//go:build !js

package abi

import (
	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
)

// What the CUDA backend adds to the device functions. Only here does abi
// name a backend: CUDA's report and options are its own types, and the
// backend does not compile for js/wasm (cuda_js.go stands in there).

func cudaInfo(b core.Backend, info map[string]any) {
	cb, ok := b.(*cuda.Backend)
	if !ok {
		return
	}
	info["cuda"] = cb.Info()
	info["memory"] = cb.MemoryStats()
	if free, total, err := cb.DeviceMemory(); err == nil {
		info["device_free_bytes"], info["device_total_bytes"] = free, total
	}
	info["allow_tf32"] = cb.AllowTF32()
}

// cudaSetTF32 reports whether b is a CUDA device, which alone has TF32.
func cudaSetTF32(b core.Backend, on bool) bool {
	cb, ok := b.(*cuda.Backend)
	if ok {
		cb.SetAllowTF32(on)
	}
	return ok
}
