//go:build js

package webgpu

import "github.com/cogentcore/webgpu/wgpu"

// newInstance is the browser's navigator.gpu.
func newInstance() *wgpu.Instance { return wgpu.CreateInstance(nil) }
