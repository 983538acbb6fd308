//go:build linux && cgo

package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
)

// The shape and index kernels against the CPU backend, beyond the
// reference vectors: every dtype, strided, transposed and broadcast views,
// more pieces than one launch takes, duplicate scatter targets, integer
// sums that wrap, sizes that span many blocks of the compactions, and the
// fallback paths for inputs with many dims. Then the in-kernel index
// checks: the error the next read returns carries the CPU's message, and
// the backend works on after it.

var cpuDev = core.Device{Kind: "cpu"}

// arg is one input: values of a dtype and shape, made on a device
// contiguous or strided, then optionally viewed.
type arg struct {
	d       core.DType
	shape   core.Shape
	vals    []float64
	strided bool
	view    func(*core.Tensor) *core.Tensor
}

func (a arg) on(dev core.Device) *core.Tensor {
	t := core.MakeLayout(a.d, a.shape, a.vals, a.strided, dev)
	if a.view != nil {
		t = a.view(t)
	}
	return t
}

func (a arg) asStrided() arg { a.strided = true; return a }

// permuted views the input through permute(dims).
func (a arg) permuted(dims ...int) arg {
	a.view = func(t *core.Tensor) *core.Tensor { return core.Call1("permute", core.Attrs{"dims": dims}, t) }
	return a
}

type diffCase struct {
	name  string
	op    string
	attrs core.Attrs
	args  []arg
	tol   float64 // of float outputs, relative (and absolute near 0); 0: exact
}

var (
	allDTypes   = storedDTypes() // core.AllDTypes but u64, which CUDA refuses
	numeric     = []core.DType{core.F32, core.F16, core.BF16, core.F64, core.I64, core.I32, core.U32, core.I16, core.I8, core.U8}
	floatTypes  = []core.DType{core.F32, core.F16, core.BF16, core.F64}
	indexDTypes = []core.DType{core.I64, core.I32, core.U32, core.I16, core.I8, core.U8}
)

func storedDTypes() []core.DType {
	var out []core.DType
	for _, d := range core.AllDTypes {
		if d != core.U64 {
			out = append(out, d)
		}
	}
	return out
}

// values draws n values that dtype d holds exactly, over its whole range
// for integers (so sums wrap).
func values(rng *rand.Rand, d core.DType, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch d {
		case core.F32, core.F64, core.F16, core.BF16:
			v[i] = math.Round(rng.NormFloat64()*300) / 64
		case core.Bool:
			v[i] = float64(rng.IntN(2))
		case core.U8:
			v[i] = float64(rng.IntN(256))
		case core.I8:
			v[i] = float64(rng.IntN(256) - 128)
		case core.I16:
			v[i] = float64(rng.IntN(65536) - 32768)
		case core.U16:
			v[i] = float64(rng.IntN(65536))
		case core.U32:
			v[i] = float64(rng.Uint32())
		case core.I32:
			v[i] = float64(int32(rng.Uint32()))
		default:
			v[i] = float64(rng.Int64N(1<<50) - 1<<49)
		}
	}
	return v
}

func rnd(rng *rand.Rand, d core.DType, shape ...int) arg {
	s := core.Shape(shape)
	return arg{d: d, shape: s, vals: values(rng, d, s.Numel())}
}

// ints is an integer tensor of values in [lo, hi).
func ints(rng *rand.Rand, d core.DType, lo, hi int, shape ...int) arg {
	s := core.Shape(shape)
	v := make([]float64, s.Numel())
	for i := range v {
		v[i] = float64(lo + rng.IntN(hi-lo))
	}
	return arg{d: d, shape: s, vals: v}
}

func boolMask(rng *rand.Rand, p float64, shape ...int) arg {
	s := core.Shape(shape)
	v := make([]float64, s.Numel())
	for i := range v {
		if rng.Float64() < p {
			v[i] = 1
		}
	}
	return arg{d: core.Bool, shape: s, vals: v}
}

// sumTol is the tolerance of sums in another order.
func sumTol(d core.DType) float64 {
	switch d {
	case core.F32:
		return 1e-5
	case core.F64:
		return 1e-12
	case core.F16, core.BF16:
		return 1e-2
	}
	return 0
}

func near(got, want, tol float64) bool {
	if got == want || (got != got && want != want) {
		return true
	}
	return tol > 0 && math.Abs(got-want) <= tol*(1+math.Abs(want))
}

// runDiff calls the op on the CPU and on dev (b's device) and compares.
func runDiff(t *testing.T, b *cuda.Backend, dev core.Device, c diffCase) {
	t.Helper()
	require.NotNil(t, b.Kernel(c.op), "%s has no CUDA kernel: %s would run the CPU's", c.op, dev)
	call := func(dev core.Device) []*core.Tensor {
		ins := make([]*core.Tensor, len(c.args))
		for i, a := range c.args {
			ins[i] = a.on(dev)
			require.NoError(t, ins[i].Err())
		}
		outs, err := core.Call(c.op, ins, c.attrs)
		require.NoError(t, err, "%s on %s", c.op, dev)
		return outs
	}
	want, got := call(cpuDev), call(dev)
	require.Len(t, got, len(want))
	for j := range want {
		wv, err := want[j].Float64s()
		require.NoError(t, err)
		gv, err := got[j].Float64s()
		require.NoError(t, err, "output %d", j)
		require.Equal(t, want[j].DType(), got[j].DType(), "output %d dtype", j)
		require.Equal(t, []int(want[j].Shape()), []int(got[j].Shape()), "output %d shape", j)
		tol := 0.0
		if want[j].DType().IsFloat() {
			tol = c.tol
		}
		bad := 0
		for i := range wv {
			if !near(gv[i], wv[i], tol) {
				if bad == 0 {
					t.Errorf("output %d: flat index %d: got %v, want %v", j, i, gv[i], wv[i])
				}
				bad++
			}
		}
		if bad > 1 {
			t.Errorf("output %d: %d of %d values differ", j, bad, len(wv))
		}
	}
}

func shapeCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for i, d := range allDTypes {
		var pieces []arg
		for p := range 13 {
			a := rnd(rng, d, 2, p%4, 3)
			if p%3 == 0 {
				a = a.asStrided()
			}
			pieces = append(pieces, a)
		}
		cs = append(cs, diffCase{name: "concat_13_" + d.String(), op: "concat", attrs: core.Attrs{"axis": 1}, args: pieces})
		var stacked []arg
		for range 12 {
			stacked = append(stacked, rnd(rng, d, 3, 2).permuted(1, 0))
		}
		cs = append(cs, diffCase{name: "stack_12_" + d.String(), op: "stack", attrs: core.Attrs{"axis": 1}, args: stacked})
		cs = append(cs,
			diffCase{name: "split_13_" + d.String(), op: "split", attrs: core.Attrs{"sections": 13, "axis": 1}, args: []arg{rnd(rng, d, 4, 17, 3).asStrided()}},
			diffCase{name: "split_sizes_" + d.String(), op: "split", attrs: core.Attrs{"sizes": []int{0, 5, 12}, "axis": -2}, args: []arg{rnd(rng, d, 2, 17, 3).permuted(0, 1, 2)}},
			diffCase{name: "chunk_12_" + d.String(), op: "chunk", attrs: core.Attrs{"chunks": 12}, args: []arg{rnd(rng, d, 30)}},
			diffCase{name: "flip_" + d.String(), op: "flip", attrs: core.Attrs{"axes": []int{0, 2}}, args: []arg{rnd(rng, d, 3, 4, 5).permuted(2, 0, 1)}},
			diffCase{name: "roll_flat_transposed_" + d.String(), op: "roll", attrs: core.Attrs{"shifts": []int{-7}}, args: []arg{rnd(rng, d, 3, 4, 5).permuted(1, 2, 0)}},
			diffCase{name: "roll_flat_" + d.String(), op: "roll", attrs: core.Attrs{"shifts": []int{23}}, args: []arg{rnd(rng, d, 3, 4).asStrided()}},
			diffCase{name: "roll_axes_" + d.String(), op: "roll", attrs: core.Attrs{"shifts": []int{1, -9, 4}, "axes": []int{0, 2, 0}}, args: []arg{rnd(rng, d, 3, 4, 5).asStrided()}},
			diffCase{name: "tile_" + d.String(), op: "tile", attrs: core.Attrs{"reps": []int{2, 1, 3}}, args: []arg{rnd(rng, d, 3, 2).permuted(1, 0)}},
			diffCase{name: "repeat_interleave_flat_" + d.String(), op: "repeat_interleave", attrs: core.Attrs{"repeats": 3}, args: []arg{rnd(rng, d, 3, 4).permuted(1, 0)}},
			diffCase{name: "repeat_interleave_axis_" + d.String(), op: "repeat_interleave", attrs: core.Attrs{"repeats": 2, "axis": 1}, args: []arg{rnd(rng, d, 3, 4, 2).asStrided()}},
			diffCase{name: "pad_constant_crop_" + d.String(), op: "pad", attrs: core.Attrs{"pads": []int{2, -1, -1, 3, 1, 0}, "value": -300.75},
				args: []arg{rnd(rng, d, 2, 4, 5).asStrided()}},
			diffCase{name: "pad_reflect_" + d.String(), op: "pad", attrs: core.Attrs{"pads": []int{2, 3, 3, 1}, "mode": "reflect"}, args: []arg{rnd(rng, d, 2, 4, 5).permuted(0, 2, 1)}},
			diffCase{name: "pad_replicate_" + d.String(), op: "pad", attrs: core.Attrs{"pads": []int{2, 3, 0, 2}, "mode": "replicate"}, args: []arg{rnd(rng, d, 3, 1, 4).asStrided()}},
			diffCase{name: "slice_grad_" + d.String(), op: "_slice_grad", attrs: core.Attrs{"shape": []int{3, 11, 2}, "axis": 1, "start": -10, "step": 3},
				args: []arg{rnd(rng, d, 3, 4, 2).asStrided()}},
		)
		if i%3 == 0 {
			// Too many dims to merge into eight: the remap takes these.
			cs = append(cs,
				diffCase{name: "tile_remap_" + d.String(), op: "tile", attrs: core.Attrs{"reps": []int{2, 2, 2, 2, 2}}, args: []arg{rnd(rng, d, 2, 3, 2, 3, 2).asStrided()}},
				diffCase{name: "repeat_interleave_remap_" + d.String(), op: "repeat_interleave", attrs: core.Attrs{"repeats": 2, "axis": 3},
					args: []arg{rnd(rng, d, 2, 2, 2, 2, 2, 2, 2, 2).asStrided()}},
			)
		}
	}
	for _, d := range floatTypes {
		for _, mode := range []string{"reflect", "replicate", "constant"} {
			pads := []int{3, 2, 1, 2}
			if mode == "constant" {
				pads = []int{-1, 2, 2, -1}
			}
			in := core.Shape{2, 4, 5}
			out := core.Shape{2, 4 + pads[2] + pads[3], 5 + pads[0] + pads[1]}
			cs = append(cs, diffCase{name: "pad_grad_" + mode + "_" + d.String(), op: "_pad_grad",
				attrs: core.Attrs{"pads": pads, "mode": mode, "shape": []int(in)}, args: []arg{rnd(rng, d, out...).asStrided()}})
		}
	}
	return cs
}

func indexCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for i, d := range allDTypes {
		id := indexDTypes[i%len(indexDTypes)]
		perm := make([]float64, 0, 18)
		for range 6 {
			for _, v := range rng.Perm(4)[:3] {
				perm = append(perm, float64(v))
			}
		}
		scatterIdx := arg{d: id, shape: core.Shape{6, 3}, vals: perm}.permuted(1, 0)
		cs = append(cs,
			diffCase{name: "gather_" + d.String(), op: "gather", attrs: core.Attrs{"axis": 0},
				args: []arg{rnd(rng, d, 4, 5, 3).asStrided(), ints(rng, id, 0, 4, 6, 5, 2)}},
			diffCase{name: "gather_last_" + d.String(), op: "gather", attrs: core.Attrs{"axis": -1},
				args: []arg{rnd(rng, d, 4, 5, 3).permuted(2, 1, 0), ints(rng, id, 0, 4, 2, 4, 7)}},
			diffCase{name: "take_along_axis_" + d.String(), op: "take_along_axis", attrs: core.Attrs{"axis": -1},
				args: []arg{rnd(rng, d, 2, 1, 5), ints(rng, core.I64, -5, 5, 1, 3, 4)}},
			diffCase{name: "index_select_" + d.String(), op: "index_select", attrs: core.Attrs{"axis": 1},
				args: []arg{rnd(rng, d, 5, 4).permuted(1, 0), ints(rng, id, 0, 5, 7).asStrided()}},
			diffCase{name: "index_select_scalar_" + d.String(), op: "index_select", attrs: core.Attrs{"axis": 0},
				args: []arg{rnd(rng, d, 5, 4), ints(rng, id, 0, 5)}},
			diffCase{name: "embedding_" + d.String(), op: "embedding",
				args: []arg{rnd(rng, d, 6, 3).asStrided(), ints(rng, id, 0, 6, 2, 4).permuted(1, 0)}},
			// Distinct targets in every column: the result is determined.
			diffCase{name: "scatter_" + d.String(), op: "scatter", attrs: core.Attrs{"axis": 0},
				args: []arg{rnd(rng, d, 4, 6).asStrided(), scatterIdx, rnd(rng, d, 5, 7).asStrided()}},
			diffCase{name: "masked_fill_" + d.String(), op: "masked_fill", attrs: core.Attrs{"value": -300.75},
				args: []arg{rnd(rng, d, 4, 5).asStrided(), boolMask(rng, 0.5, 1, 5)}},
			diffCase{name: "masked_fill_x_broadcast_" + d.String(), op: "masked_fill", attrs: core.Attrs{"value": math.Inf(1)},
				args: []arg{rnd(rng, d, 5), boolMask(rng, 0.5, 3, 5)}},
			diffCase{name: "masked_select_" + d.String(), op: "masked_select",
				args: []arg{rnd(rng, d, 30, 25).permuted(1, 0), boolMask(rng, 0.4, 25, 1)}},
			diffCase{name: "nonzero_" + d.String(), op: "nonzero", args: []arg{rnd(rng, d, 4, 3, 5).asStrided()}},
		)
	}
	for i, d := range numeric {
		id := indexDTypes[i%len(indexDTypes)]
		cs = append(cs,
			diffCase{name: "scatter_add_" + d.String(), op: "scatter_add", attrs: core.Attrs{"axis": 0}, tol: sumTol(d),
				args: []arg{rnd(rng, d, 5, 4), ints(rng, id, 0, 5, 40, 4), rnd(rng, d, 41, 5).asStrided()}},
			diffCase{name: "index_add_" + d.String(), op: "index_add", attrs: core.Attrs{"axis": 1}, tol: sumTol(d),
				args: []arg{rnd(rng, d, 3, 5).asStrided(), ints(rng, id, 0, 5, 30), rnd(rng, d, 3, 30)}},
			diffCase{name: "index_add_alpha_" + d.String(), op: "index_add", attrs: core.Attrs{"axis": 0, "alpha": map[bool]float64{true: 0.375, false: -3}[d.IsFloat()]},
				tol: sumTol(d), args: []arg{rnd(rng, d, 4, 3), ints(rng, id, 0, 4, 9), rnd(rng, d, 3, 9).permuted(1, 0)}},
		)
		for r, reduce := range []string{"sum", "mean", "amax", "amin"} {
			include := (i+r)%2 == 0
			cs = append(cs, diffCase{name: fmt.Sprintf("scatter_reduce_%s_%v_%s", reduce, include, d), op: "scatter_reduce",
				attrs: core.Attrs{"axis": 1, "reduce": reduce, "include_self": include}, tol: sumTol(d),
				args: []arg{rnd(rng, d, 6, 3).permuted(1, 0), ints(rng, id, 0, 6, 3, 20), rnd(rng, d, 3, 21).asStrided()}})
		}
	}
	for _, d := range indexDTypes {
		cs = append(cs,
			diffCase{name: "wrap_index_" + d.String(), op: "_wrap_index", attrs: core.Attrs{"size": 7},
				args: []arg{ints(rng, d, -7*map[bool]int{true: 0, false: 1}[d == core.U8 || d == core.U32], 7, 3, 5).asStrided()}},
			diffCase{name: "one_hot_" + d.String(), op: "one_hot", args: []arg{ints(rng, d, 0, 9, 4, 3).permuted(1, 0)}},
			diffCase{name: "one_hot_given_" + d.String(), op: "one_hot", attrs: core.Attrs{"num_classes": 11}, args: []arg{ints(rng, d, 0, 9, 5)}},
		)
	}
	// Large enough for every block of the compactions to walk several tiles.
	big := core.Shape{300, 250}
	cs = append(cs,
		diffCase{name: "masked_select_big", op: "masked_select", args: []arg{rnd(rng, core.F32, big...), boolMask(rng, 0.3, 250)}},
		diffCase{name: "nonzero_big", op: "nonzero", args: []arg{ints(rng, core.I32, -1, 2, 40, 50, 60).permuted(2, 0, 1)}},
		diffCase{name: "nonzero_scalar", op: "nonzero", args: []arg{{d: core.Bool, vals: []float64{1}}}},
		diffCase{name: "nonzero_special", op: "nonzero", args: []arg{{d: core.F16, shape: core.Shape{6}, vals: []float64{0, math.NaN(), math.Copysign(0, -1), math.Inf(-1), 0, 1e-7}}}},
	)
	mask := boolMask(rng, 0.3, 300, 1)
	n := 0
	for _, v := range mask.vals {
		n += int(v) * 250
	}
	cs = append(cs, diffCase{name: "masked_select_grad_big", op: "_masked_select_grad", attrs: core.Attrs{"shape": []int(big)},
		args: []arg{rnd(rng, core.F64, 2*n).view2(n), mask}})
	return append(cs, extremumGradCases(rng)...)
}

// view2 takes every other element of a 1-D input (n of them).
func (a arg) view2(n int) arg {
	a.view = func(t *core.Tensor) *core.Tensor {
		return core.Call1("slice", core.Attrs{"axis": 0, "step": 2, "stop": 2 * n}, t)
	}
	return a
}

// extremumGradCases feed _scatter_extremum_grad the result of a
// scatter_reduce (computed on the CPU) over values with many ties.
func extremumGradCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for i, d := range floatTypes {
		for _, reduce := range []string{"amax", "amin"} {
			include := i%2 == 0
			x, src := ints(rng, d, -2, 3, 4, 5), ints(rng, d, -2, 3, 6, 6)
			idx := ints(rng, core.I64, 0, 4, 6, 5)
			attrs := core.Attrs{"axis": 0, "include_self": include}
			res := core.Call1("scatter_reduce", core.Attrs{"axis": 0, "reduce": reduce, "include_self": include}, x.on(cpuDev), idx.on(cpuDev), src.on(cpuDev))
			rv, err := res.Float64s()
			if err != nil {
				panic(err)
			}
			cs = append(cs, diffCase{name: fmt.Sprintf("extremum_grad_%s_%s", reduce, d), op: "_scatter_extremum_grad", attrs: attrs,
				args: []arg{rnd(rng, d, 4, 5).asStrided(), x, idx, src.asStrided(), {d: d, shape: core.Shape{4, 5}, vals: rv}}})
		}
	}
	return cs
}

func TestEmulatedShapeIndexMatchCPU(t *testing.T) {
	emu := needEmulator(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range append(shapeCases(rng), indexCases(rng)...) {
		t.Run(c.name, func(t *testing.T) { runDiff(t, emu, emuDevice, c) })
	}
}

// TestCUDAShapeIndexMatchCPU runs the cases on a real GPU, where threads
// race for real, and adds sizes the emulator would take long over: heavy
// contention on a few scatter targets (narrow dtypes share their CAS
// words), compactions over thousands of blocks.
func TestCUDAShapeIndexMatchCPU(t *testing.T) {
	b := needCUDA(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for _, c := range append(append(shapeCases(rng), indexCases(rng)...), stressCases(rng)...) {
		t.Run(c.name, func(t *testing.T) { runDiff(t, b, gpu, c) })
	}
}

func stressCases(rng *rand.Rand) []diffCase {
	var cs []diffCase
	for _, d := range []core.DType{core.F32, core.F16, core.I8, core.I64, core.U8} {
		cs = append(cs, diffCase{name: "stress_scatter_add_" + d.String(), op: "scatter_add", attrs: core.Attrs{"axis": 0}, tol: 10 * sumTol(d),
			args: []arg{rnd(rng, d, 16, 8), ints(rng, core.I64, 0, 16, 131072, 8), rnd(rng, d, 131072, 8)}})
	}
	for _, d := range []core.DType{core.BF16, core.I16, core.F64, core.U8} {
		for _, reduce := range []string{"amax", "amin", "mean"} {
			cs = append(cs, diffCase{name: "stress_scatter_reduce_" + reduce + "_" + d.String(), op: "scatter_reduce", tol: 10 * sumTol(d),
				attrs: core.Attrs{"axis": 1, "reduce": reduce, "include_self": d == core.F64},
				args:  []arg{rnd(rng, d, 6, 10), ints(rng, core.I32, 0, 10, 6, 100000), rnd(rng, d, 6, 100000)}})
		}
	}
	big := core.Shape{4000, 3000}
	mask := boolMask(rng, 0.3, 4000, 1)
	n := 0
	for _, v := range mask.vals {
		n += int(v) * 3000
	}
	return append(cs,
		diffCase{name: "stress_index_add", op: "index_add", attrs: core.Attrs{"alpha": 0.5}, tol: 1e-4,
			args: []arg{rnd(rng, core.F32, 64, 32), ints(rng, core.I64, 0, 64, 200000), rnd(rng, core.F32, 200000, 32)}},
		diffCase{name: "stress_gather", op: "gather", args: []arg{rnd(rng, core.F32, 1000, 512).permuted(1, 0), ints(rng, core.I64, 0, 512, 4000, 1000)}},
		diffCase{name: "stress_masked_select", op: "masked_select", args: []arg{rnd(rng, core.F32, big...), boolMask(rng, 0.3, 3000)}},
		diffCase{name: "stress_masked_select_grad", op: "_masked_select_grad", attrs: core.Attrs{"shape": []int(big)}, args: []arg{rnd(rng, core.F32, n), mask}},
		diffCase{name: "stress_nonzero", op: "nonzero", args: []arg{ints(rng, core.I8, -1, 2, 200, 300, 400).permuted(2, 0, 1)}},
		diffCase{name: "stress_one_hot", op: "one_hot", args: []arg{ints(rng, core.I32, 0, 1000, 5000)}},
		diffCase{name: "stress_pad_grad", op: "_pad_grad", attrs: core.Attrs{"pads": []int{40, 50, 7, 3}, "mode": "replicate", "shape": []int{16, 64, 64}},
			args: []arg{rnd(rng, core.F32, 16, 74, 154)}},
	)
}

// TestShapeIndexKernelsCompile compiles the kernels of every case above
// with NVRTC for sm_90 (the emulator's g++ accepts some C++ NVRTC does not,
// and the reverse), or finds them in the disk cache NVRTC's images fill;
// the compile-only device reads back zeros, so values are not checked, and
// the second kernels of masked_select and nonzero, which run only when
// something is selected, are left to the GPU runs.
func TestShapeIndexKernelsCompile(t *testing.T) {
	needNVRTC(t)
	rng := rand.New(rand.NewPCG(7, 11))
	compileCases(t, append(shapeCases(rng), indexCases(rng)...))
}

// TestEmulatedIndexChecks: a bad index fails the op at the next read with
// the CPU's message, naming the op, and the backend works on after it.
func TestEmulatedIndexChecks(t *testing.T) {
	needEmulator(t)
	runIndexChecks(t, emuDevice)
}

func TestCUDAIndexChecks(t *testing.T) {
	needCUDA(t)
	runIndexChecks(t, gpu)
}

func runIndexChecks(t *testing.T, dev core.Device) {
	x := arg{d: core.F64, shape: core.Shape{2, 3}, vals: []float64{0, 1, 2, 3, 4, 5}}
	i := func(v ...float64) arg { return arg{d: core.I64, shape: core.Shape{len(v)}, vals: v} }
	m := func(v ...float64) arg { return arg{d: core.I64, shape: core.Shape{1, len(v)}, vals: v} }
	f := func(v ...float64) arg { return arg{d: core.F64, shape: core.Shape{1, len(v)}, vals: v} }
	for _, c := range []diffCase{
		{op: "gather", attrs: core.Attrs{"axis": 1}, args: []arg{x, m(0, 3)}},
		{op: "gather", args: []arg{x, m(-1)}},
		{op: "take_along_axis", args: []arg{x, m(3)}},
		{op: "take_along_axis", args: []arg{x, m(-4)}},
		{op: "index_select", args: []arg{x, i(5)}},
		{op: "index_select", attrs: core.Attrs{"axis": 1}, args: []arg{x, i(0, -1)}},
		{op: "embedding", args: []arg{x, i(2)}},
		{op: "scatter", args: []arg{x, m(0, 2), f(1, 2)}},
		{op: "scatter_add", attrs: core.Attrs{"axis": 1}, args: []arg{x, m(7), f(1)}},
		{op: "scatter_reduce", attrs: core.Attrs{"reduce": "amax", "include_self": false}, args: []arg{x, m(0, -3), f(1, 2)}},
		{op: "scatter_reduce", attrs: core.Attrs{"reduce": "mean"}, args: []arg{x, m(2), f(1)}},
		{op: "index_add", attrs: core.Attrs{"axis": 1}, args: []arg{x, i(3), {d: core.F64, shape: core.Shape{2, 1}, vals: []float64{1, 2}}}},
		{op: "_scatter_extremum_grad", args: []arg{x, x, m(0, 2), f(1, 2), x}},
		{op: "_wrap_index", attrs: core.Attrs{"size": 4}, args: []arg{i(1, -5)}},
		{op: "one_hot", attrs: core.Attrs{"num_classes": 3}, args: []arg{i(1, 3)}},
		{op: "one_hot", attrs: core.Attrs{"num_classes": 3}, args: []arg{i(-2, 1)}},
		{op: "one_hot", args: []arg{i(-2, -1)}},
		{op: "one_hot", attrs: core.Attrs{"num_classes": 0}, args: []arg{i(1)}},
		{op: "_masked_select_grad", attrs: core.Attrs{"shape": []int{3}}, args: []arg{{d: core.F64, shape: core.Shape{3}, vals: []float64{1, 2, 3}},
			{d: core.Bool, shape: core.Shape{3}, vals: []float64{1, 0, 1}}}},
	} {
		t.Run(c.op, func(t *testing.T) {
			want := callErr(c, cpuDev)
			require.Error(t, want, "the CPU accepts this case")
			_, msg, ok := strings.Cut(want.Error(), c.op+": ")
			require.True(t, ok, "the CPU's error names the op: %v", want)
			got := callErr(c, dev)
			if assert.Error(t, got) {
				assert.Contains(t, got.Error(), msg)
				assert.Contains(t, got.Error(), c.op)
			}
			// The error was reported once: the device works on.
			y := core.Call1("flip", nil, x.on(dev))
			v, err := y.Float64s()
			require.NoError(t, err)
			assert.Equal(t, []float64{5, 4, 3, 2, 1, 0}, v)
		})
	}
}

// callErr runs a case and reads its outputs: the call's error or the
// read's.
func callErr(c diffCase, dev core.Device) error {
	ins := make([]*core.Tensor, len(c.args))
	for i, a := range c.args {
		ins[i] = a.on(dev)
	}
	outs, err := core.Call(c.op, ins, c.attrs)
	if err != nil {
		return err
	}
	for _, o := range outs {
		if _, err := o.Float64s(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkCUDAShapeIndex times the kernels on large tensors (b.N calls
// queued, then one synchronisation) and reports the bandwidth of the bytes
// each must read and write, to compare with the GPU's copy bandwidth.
func BenchmarkCUDAShapeIndex(b *testing.B) {
	useRepoVenv()
	be, err := core.BackendFor(gpu)
	if err != nil {
		b.Skipf("no CUDA device: %v", err)
	}
	g := be.(*cuda.Backend)
	on := func(t *core.Tensor) *core.Tensor {
		if err := t.Err(); err != nil {
			b.Fatal(err)
		}
		return t
	}
	randn := func(shape ...int) *core.Tensor {
		return on(core.Call1("randn", core.Attrs{"shape": shape, "seed": 1, "device": "cuda", "dtype": core.F32}))
	}
	randint := func(high int, shape ...int) *core.Tensor {
		return on(core.Call1("randint", core.Attrs{"shape": shape, "low": 0, "high": high, "seed": 2, "device": "cuda", "dtype": core.I64}))
	}
	const M = 1 << 20
	x := randn(8192, 8192) // 256 MiB
	rows := randn(M, 128)
	mask := on(core.Call1("gt", nil, randn(8192, 8192), core.Scalar(0.0, core.F32, gpu)))
	col := randint(8192, 8192, 8192)
	edges := randint(M/8, 2*M)
	gathered := on(core.Call1("index_select", nil, rows, edges))
	cases := []struct {
		name  string
		bytes float64 // read and written
		fn    func() *core.Tensor
	}{
		{"concat_axis1", 2 * 2 * 4 * 8192 * 8192, func() *core.Tensor { return core.Call1("concat", core.Attrs{"axis": 1}, x, x) }},
		{"split_4", 2 * 4 * 8192 * 8192, func() *core.Tensor {
			outs, _ := core.Call("split", []*core.Tensor{x}, core.Attrs{"sections": 4, "axis": 1})
			for _, o := range outs[1:] {
				o.Release()
			}
			return outs[0]
		}},
		{"flip", 2 * 4 * 8192 * 8192, func() *core.Tensor { return core.Call1("flip", core.Attrs{"axes": []int{1}}, x) }},
		{"roll", 2 * 4 * 8192 * 8192, func() *core.Tensor {
			return core.Call1("roll", core.Attrs{"shifts": []int{3, 5}, "axes": []int{0, 1}}, x)
		}},
		{"pad_reflect", 2 * 4 * 8192 * 8192, func() *core.Tensor { return core.Call1("pad", core.Attrs{"pads": []int{2, 2}, "mode": "reflect"}, x) }},
		{"gather_axis1", (4 + 8 + 4) * 8192 * 8192, func() *core.Tensor { return core.Call1("gather", core.Attrs{"axis": 1}, x, col) }},
		{"index_select_rows", (2*4*128 + 8) * 2 * M, func() *core.Tensor { return core.Call1("index_select", nil, rows, edges) }},
		{"index_add_rows", (4*128+8)*2*M + 2*4*128*M/8, func() *core.Tensor {
			return core.Call1("index_add", nil, firstRows(rows, M/8), edges, gathered)
		}},
		{"masked_select", (4 + 2*1 + 4*0.5) * 8192 * 8192, func() *core.Tensor { return core.Call1("masked_select", nil, x, mask) }},
		{"nonzero", (2*1 + 16*0.5) * 8192 * 8192, func() *core.Tensor { return core.Call1("nonzero", nil, mask) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for range 2 {
				on(c.fn()).Release()
			}
			if err := g.Sync(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				on(c.fn()).Release()
			}
			if err := g.Sync(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(c.bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// firstRows is a view of the first n rows of t.
func firstRows(t *core.Tensor, n int) *core.Tensor {
	return core.Call1("slice", core.Attrs{"axis": 0, "stop": n}, t)
}
