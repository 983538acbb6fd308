package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
)

func ran(sdk, backend string, fb ...core.Fallback) conformance.Result {
	if fb == nil {
		fb = []core.Fallback{}
	}
	return conformance.Result{SDK: sdk, Backend: backend, Detail: "a device", Fallbacks: fb}
}

// A device column passes with no CPU fallback and only declared host work.
func TestCleanDeviceColumnsPass(t *testing.T) {
	host := core.Fallback{Device: "webgpu:0", Op: "spmm", Count: 4, Kind: core.FallbackHost, Reason: "reads indptr back"}
	r := checkDevices([]conformance.Result{
		ran("go", "cpu"),
		ran("go", "webgpu", host),
		{SDK: "python", Backend: "cuda", Detail: "unavailable: cuda: no CUDA device: " + core.NoDeviceText},
		{SDK: "browser", Backend: "webgpu", Detail: "Chrome"}, // no fallback call there yet
	})
	assert.Zero(t, r.fails, r.bad)
	assert.Contains(t, r.rows, "| `go / webgpu` | a device | 0 | 4 (spmm x4) |")
	assert.Contains(t, strings.Join(r.rows, "\n"), "| `python / cuda` | - (cuda: no CUDA device")
	assert.Contains(t, r.rows, "| `browser / webgpu` | Chrome | not reported | not reported |")
}

// Every way a device column can hide work fails, naming the column and why.
func TestDishonestDeviceColumnsFail(t *testing.T) {
	cases := []struct {
		name string
		cols []conformance.Result
		want string
	}{
		{"CPU fallback", []conformance.Result{ran("go", "webgpu",
			core.Fallback{Device: "webgpu:0", Op: "abs", Count: 2, Kind: core.FallbackCPU})},
			"go / webgpu: op calls ran on the CPU instead of webgpu: abs x2"},
		{"fallback from a library before the kind field", []conformance.Result{ran("c", "cuda",
			core.Fallback{Device: "cuda:0", Op: "fft", Count: 1})},
			"c / cuda: op calls ran on the CPU instead of cuda: fft x1"},
		{"undeclared host work", []conformance.Result{ran("java", "webgpu",
			core.Fallback{Device: "webgpu:0", Op: "mystery", Count: 1, Kind: core.FallbackHost})},
			"java / webgpu: mystery did host-side work no backend declared"},
		{"adapter that did not open", []conformance.Result{
			{SDK: "node", Backend: "webgpu", Detail: "open failed: webgpu: adapter \"x\" refused a device"}},
			"node / webgpu: this machine has the device but its backend did not open"},
		{"no device here, yet another SDK ran on one", []conformance.Result{ran("go", "webgpu"),
			{SDK: "python", Backend: "webgpu", Detail: "unavailable: no webgpu device here"}},
			"python / webgpu says no webgpu device, but go / webgpu ran on one"},
		{"no fallback report from a native runner", []conformance.Result{
			{SDK: "c", Backend: "webgpu", Detail: "a device"}},
			"c / webgpu: the runner did not report its fallbacks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := checkDevices(c.cols)
			assert.Equal(t, 1, r.fails)
			if assert.Len(t, r.bad, 1) {
				assert.Contains(t, r.bad[0], c.want)
			}
		})
	}
	// The ops that fell back fail their cells too.
	r := checkDevices([]conformance.Result{ran("go", "webgpu",
		core.Fallback{Device: "webgpu:0", Op: "abs", Count: 2, Kind: core.FallbackCPU})})
	assert.Equal(t, map[string]bool{"abs": true}, r.fellBack[0])
	// A CPU column's own ops are no fallback.
	r = checkDevices([]conformance.Result{ran("go", "cpu")})
	assert.Zero(t, r.fails)
}
