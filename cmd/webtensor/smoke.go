package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/webtensor/webtensor/core"
)

// smokeOps are the doctor's quick check of a device: ten ops across the
// families (elementwise, reduction, scan, matmul, nn, convolution, index),
// each compared with the CPU backend.
var smokeOps = []struct {
	name string
	run  func(x, w *core.Tensor) *core.Tensor
}{
	{"add", func(x, _ *core.Tensor) *core.Tensor { return x.Add(x) }},
	{"exp", func(x, _ *core.Tensor) *core.Tensor { return core.Call1("exp", nil, x) }},
	{"sum", func(x, _ *core.Tensor) *core.Tensor { return core.Call1("sum", core.Attrs{"axes": []int{1}}, x) }},
	{"cumsum", func(x, _ *core.Tensor) *core.Tensor { return core.Call1("cumsum", core.Attrs{"axis": 1}, x) }},
	{"matmul", func(x, w *core.Tensor) *core.Tensor { return x.Matmul(w) }},
	{"softmax", func(x, _ *core.Tensor) *core.Tensor { return core.Call1("softmax", core.Attrs{"axis": -1}, x) }},
	{"layer_norm", func(x, _ *core.Tensor) *core.Tensor {
		return core.Call1("layer_norm", core.Attrs{"normalized_shape": []int{24}}, x)
	}},
	{"conv2d", func(x, _ *core.Tensor) *core.Tensor {
		img := x.Reshape(core.Shape{2, 4, 4, 6})
		return core.Call1("conv2d", core.Attrs{"padding": []int{1}}, img, core.Call1("ones", core.Attrs{"shape": []int{3, 4, 3, 3}, "device": img.Device().String()}))
	}},
	{"argmax", func(x, _ *core.Tensor) *core.Tensor { return core.Call1("argmax", core.Attrs{"axis": 1}, x) }},
	{"sort", func(x, _ *core.Tensor) *core.Tensor {
		outs, err := core.Call("sort", []*core.Tensor{x}, core.Attrs{"axis": 1})
		if err != nil {
			return core.ErrTensor(err)
		}
		return outs[0]
	}},
}

// smokeTest runs smokeOps on dev and returns a one-line verdict.
func smokeTest(dev core.Device) string {
	x := core.Call1("randn", core.Attrs{"shape": []int{8, 24}, "seed": 11})
	w := core.Call1("randn", core.Attrs{"shape": []int{24, 16}, "seed": 12})
	xd, wd := x.To(dev), w.To(dev)
	var failed []string
	start := time.Now()
	for _, op := range smokeOps {
		want, err1 := op.run(x, w).Float64s()
		got, err2 := op.run(xd, wd).Float64s()
		switch {
		case err2 != nil:
			failed = append(failed, fmt.Sprintf("%s (%v)", op.name, err2))
		case err1 != nil || len(got) != len(want):
			failed = append(failed, op.name+" (wrong size)")
		default:
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-3*(1+math.Abs(want[i])) {
					failed = append(failed, fmt.Sprintf("%s (element %d: %v, cpu %v)", op.name, i, got[i], want[i]))
					break
				}
			}
		}
	}
	took := time.Since(start).Round(time.Millisecond)
	if len(failed) > 0 {
		return fmt.Sprintf("smoke test FAILED: %d of %d ops in %v: %s", len(failed), len(smokeOps), took, strings.Join(failed, "; "))
	}
	return fmt.Sprintf("smoke test passed: %d ops match the cpu backend, %v", len(smokeOps), took)
}
