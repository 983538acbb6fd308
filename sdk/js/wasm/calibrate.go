//go:build js && wasm

package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/webtensor/webtensor/core"
)

// The browser's device choice on a software WebGPU adapter. SwiftShader
// runs compute shaders on the CPU cores the page already has, through an
// emulated GPU, so it can be slower than the CPU backend (TF.js's wasm
// backend beats its WebGPU one 40x there: docs/DESIGN.md). Which one wins
// depends on the browser, the adapter and the machine, so it is measured,
// not guessed from the name: a short fixed workload on both, the faster
// becomes the default (the SDK caches the decision, sdk/js/src/wasm.ts).

// calibrationWorkload says what calibrate times, for the reason the SDK reports.
const calibrationWorkload = "256x256 matmul, tanh(x*x+x) over 262,144 elements and both sums read back"

// calibrationReps runs are timed after one warm-up run (kernels built, the
// WebGPU tuner's decision made), and the median is kept.
const calibrationReps = 3

// calibrate times the workload on webgpu:0 and on the CPU backend; it
// resolves to {webgpu, cpu} in milliseconds (median of the reps) and the
// workload's description. It runs on its own goroutine (an async call), so
// the GPU reads may wait for the event loop.
func calibrate(args) (any, error) {
	gpu, err := timeWorkload(core.Device{Kind: "webgpu"})
	if err != nil {
		return nil, fmt.Errorf("calibrating webgpu:0: %w", err)
	}
	cpu, err := timeWorkload(core.CPU)
	if err != nil {
		return nil, fmt.Errorf("calibrating the CPU backend: %w", err)
	}
	return map[string]any{"webgpu": gpu, "cpu": cpu, "workload": calibrationWorkload}, nil
}

// timeWorkload runs the workload on dev once to warm up, then
// calibrationReps times; the median in milliseconds. Inputs are a fixed
// pattern, not drawn from the generator, so calibrating leaves the page's
// random stream where manualSeed put it.
func timeWorkload(dev core.Device) (float64, error) {
	const n, m = 256, 1 << 18
	pat := func(count int, k float64) []float32 {
		v := make([]float32, count)
		for i := range v {
			v[i] = float32(math.Sin(float64(i)*k) * 0.5)
		}
		return v
	}
	a := core.FromSlice(pat(n*n, 0.37), core.Shape{n, n}, dev)
	b := core.FromSlice(pat(n*n, 0.91), core.Shape{n, n}, dev)
	x := core.FromSlice(pat(m, 0.13), core.Shape{m}, dev)
	defer func() { a.Release(); b.Release(); x.Release() }()
	once := func() error {
		var made []*core.Tensor
		keep := func(t *core.Tensor) *core.Tensor { made = append(made, t); return t }
		defer func() {
			for _, t := range made {
				t.Release()
			}
		}()
		c := keep(core.Call1("matmul", nil, a, b))
		e := keep(core.Call1("tanh", nil, keep(core.Call1("add", nil, keep(core.Call1("mul", nil, x, x)), x))))
		s := keep(core.Call1("add", nil, keep(core.Call1("sum", nil, c)), keep(core.Call1("sum", nil, e))))
		v, err := s.Float32s() // waits for the device: the time includes the work, not just its queueing
		if err == nil && (len(v) != 1 || math.IsNaN(float64(v[0]))) {
			err = fmt.Errorf("the workload gave %v", v)
		}
		return err
	}
	if err := once(); err != nil {
		return 0, err
	}
	times := make([]float64, calibrationReps)
	for i := range times {
		start := time.Now()
		if err := once(); err != nil {
			return 0, err
		}
		times[i] = float64(time.Since(start).Microseconds()) / 1000
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
