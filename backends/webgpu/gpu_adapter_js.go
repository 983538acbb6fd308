//go:build js

package webgpu

import (
	"regexp"
	"syscall/js"
	"unsafe"

	"github.com/cogentcore/webgpu/wgpu"
)

// softwareName matches the adapters that run shaders on the CPU: Chromium's
// SwiftShader, Mesa's llvmpipe/lavapipe, Windows' WARP.
var softwareName = regexp.MustCompile(`(?i)swiftshader|llvmpipe|lavapipe|software|microsoft basic render|\bwarp\b`)

// adapterInfo reads GPUAdapter.info, which the wgpu package leaves empty in
// the browser. Without it Capabilities().Software would be false for
// SwiftShader, and the browser SDK could not tell a software adapter (worth
// measuring against the CPU path) from a GPU (taken as it is).
func adapterInfo(a *wgpu.Adapter) wgpu.AdapterInfo {
	// wgpu.Adapter in the browser is one js.Value (the GPUAdapter), with no
	// accessor for it.
	v := *(*js.Value)(unsafe.Pointer(a))
	info := v.Get("info")
	str := func(k string) string {
		if info.Type() != js.TypeObject {
			return ""
		}
		if s := info.Get(k); s.Type() == js.TypeString {
			return s.String()
		}
		return ""
	}
	out := wgpu.AdapterInfo{
		VendorName:        str("vendor"),
		Architecture:      str("architecture"),
		Name:              str("device"),
		DriverDescription: str("description"),
		AdapterType:       wgpu.AdapterTypeUnknown,
		BackendType:       wgpu.BackendTypeWebGPU, // the browser's; which API it sits on is not exposed
	}
	if out.DriverDescription == "" { // browsers that leave the description empty still name vendor and architecture
		out.DriverDescription = out.VendorName + " " + out.Architecture
	}
	// isFallbackAdapter moved from GPUAdapter to GPUAdapterInfo (Chrome 131);
	// either says the browser's own software implementation.
	fallback := v.Get("isFallbackAdapter").Truthy() || (info.Type() == js.TypeObject && info.Get("isFallbackAdapter").Truthy())
	if fallback || softwareName.MatchString(out.VendorName+" "+out.Architecture+" "+out.Name+" "+out.DriverDescription) {
		out.AdapterType = wgpu.AdapterTypeCPU
	}
	return out
}
