//go:build webgpu_losspool

package webgpu_test

import (
	"math"
	"testing"

	"github.com/webtensor/webtensor/core"
)

func lpBoth(t *testing.T, op string, ins func(dev core.Device) []*core.Tensor, a core.Attrs) (g, c []float64) {
	t.Helper()
	for _, dev := range []core.Device{gpu, core.CPU} {
		aa := a.Clone()
		if ins == nil {
			aa["device"] = dev.String()
		}
		var in []*core.Tensor
		if ins != nil {
			in = ins(dev)
		}
		outs, err := core.Call(op, in, aa)
		if err != nil {
			t.Fatalf("%s on %v: %v", op, dev, err)
		}
		if outs[0].Device() != dev {
			t.Fatalf("wrong device")
		}
		v, err := outs[0].Float64s()
		if err != nil {
			t.Fatal(err)
		}
		if dev == gpu {
			g = v
		} else {
			c = v
		}
	}
	return
}

func TestLPScratchRandom(t *testing.T) {
	needGPU(t)
	for _, d := range []core.DType{core.F32, core.F16, core.BF16} {
		for _, op := range []string{"rand", "randn"} {
			g, c := lpBoth(t, op, nil, core.Attrs{"shape": []int{1001, 37}, "dtype": d, "seed": 0x123456789AB, "offset": (1 << 32) - 5})
			bad, worst := 0, 0.0
			for i := range g {
				if g[i] != c[i] {
					bad++
					worst = max(worst, math.Abs(g[i]-c[i])/max(math.Abs(c[i]), 1e-3))
				}
			}
			t.Logf("%s %v: %d of %d differ, worst rel %g", op, d, bad, len(g), worst)
		}
	}
	for _, tc := range []core.Attrs{
		{"low": -5, "high": 5}, {"low": -128, "high": 128, "dtype": core.I8}, {"low": 0, "high": 100, "dtype": core.F32},
		{"low": -(1 << 31), "high": 1 << 40}, {"low": 0, "high": 1 << 32, "dtype": core.U32}, {"low": 7, "high": 200, "dtype": core.U8},
	} {
		tc["shape"], tc["seed"], tc["offset"] = []int{999}, 77, 3
		g, c := lpBoth(t, "randint", nil, tc)
		bad := 0
		for i := range g {
			if g[i] != c[i] {
				bad++
			}
		}
		t.Logf("randint %v: %d of %d differ", tc, bad, len(g))
	}
	pv := core.Gen{Shape: core.Shape{50, 41}, DType: core.F32, Kind: "uniform"}.Generate(3)
	for i := range pv {
		pv[i] = math.Abs(pv[i]) - math.Floor(math.Abs(pv[i]))
	}
	g, c := lpBoth(t, "bernoulli", func(dev core.Device) []*core.Tensor {
		return []*core.Tensor{core.FromFloat64s(core.F32, core.Shape{50, 41}, pv, dev).Transpose()}
	}, core.Attrs{"seed": 5, "offset": 11})
	bad := 0
	for i := range g {
		if g[i] != c[i] {
			bad++
		}
	}
	t.Logf("bernoulli: %d of %d differ", bad, len(g))
	xv := core.Gen{Shape: core.Shape{50, 41}, DType: core.F32}.Generate(4)
	for _, p := range []float64{0.1, 0.3, 0.5, 0.7, 1.0 / 3, 0} {
		for _, d := range []core.DType{core.F32, core.F16} {
			g, c := lpBoth(t, "dropout", func(dev core.Device) []*core.Tensor {
				return []*core.Tensor{core.FromFloat64s(d, core.Shape{50, 41}, xv, dev).Transpose()}
			}, core.Attrs{"seed": 5, "offset": 11, "p": p})
			bad := 0
			for i := range g {
				if g[i] != c[i] {
					if bad < 3 {
						t.Logf("  %d: gpu %.10g cpu %.10g", i, g[i], c[i])
					}
					bad++
				}
			}
			t.Logf("dropout p=%v %v: %d of %d differ", p, d, bad, len(g))
		}
	}
}
