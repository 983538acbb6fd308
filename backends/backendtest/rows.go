package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// RunRowBodies checks the kernels a GPU backend derives from row bodies
// (core.ElementBody with Rows) beyond the ops' samples: rms_norm's over
// rows shorter than the lanes, rows many times longer and more rows than
// one grid dimension holds (65535 workgroups), with and without its
// optional weight; and a test op whose body uses row_max and row_min,
// over rows with NaN and infinities, and stores from one lane only.
func RunRowBodies(t *testing.T, dev core.Device) {
	rng := rand.New(rand.NewPCG(7, 11))
	t.Run("kernels_keyed_by_output_dtype", func(t *testing.T) {
		// A bf16 output and an f32 one are both f32 words on WebGPU, but
		// the bf16 kernel rounds what it stores: a kernel cached by the
		// words' type alone gave the f32 call bf16's rounding.
		xs := randFloats(rng, 6)
		a := map[string]core.Attrs{"rms_norm": {"normalized_shape": []int{3}}, "tril": nil}
		for _, op := range []string{"rms_norm", "tril"} {
			for _, d := range []core.DType{core.BF16, core.F32} {
				ins := func(dev core.Device) []*core.Tensor {
					x := core.FromSlice(xs, core.Shape{2, 3}, dev)
					if op == "tril" {
						return []*core.Tensor{x.Cast(d)}
					}
					return []*core.Tensor{x.Cast(d), nil}
				}
				requireClose(t, callRow(t, core.CPU, op, ins(core.CPU), a[op]), callRow(t, dev, op, ins(dev), a[op]), 1e-6)
			}
		}
	})
	for _, shape := range []core.Shape{{70000, 3}, {3, 5000}, {5, 64}, {2, 1}} {
		for _, weighted := range []bool{false, true} {
			t.Run(fmt.Sprintf("rms_norm_%v_weight_%t", shape, weighted), func(t *testing.T) {
				n := shape[len(shape)-1]
				xs, ws := randFloats(rng, shape.Numel()), randFloats(rng, n)
				a := core.Attrs{"normalized_shape": []int{n}, "eps": 1e-5}
				ins := func(d core.Device) []*core.Tensor {
					in := []*core.Tensor{core.FromSlice(xs, shape, d), nil}
					if weighted {
						in[1] = core.FromSlice(ws, core.Shape{n}, d)
					}
					return in
				}
				want := callRow(t, core.CPU, "rms_norm", ins(core.CPU), a)
				before := fallbacksOf(dev, "rms_norm")
				got := callRow(t, dev, "rms_norm", ins(dev), a)
				require.Equal(t, before, fallbacksOf(dev, "rms_norm"), "rms_norm fell back to the CPU on %v", dev)
				requireClose(t, want, got, 1e-5)
			})
		}
	}
	t.Run("row_max_row_min", func(t *testing.T) {
		registerRowRange()
		inf := float32(math.Inf(1))
		rows := [][]float32{{1, -2, 3}, {float32(math.NaN()), 1, 2}, {inf, 0, 1}, {-inf, 0, 1}}
		long := randFloats(rng, 300)
		long[217] = 9
		long[31] = -9
		rows = append(rows, long[:3], long[3:6])
		var xs []float32
		var want []float64
		for _, r := range rows[:4] {
			xs = append(xs, r...)
			want = append(want, rangePlusHalfSum(r))
		}
		before := fallbacksOf(dev, "_test_row_range")
		got := callRow(t, dev, "_test_row_range", []*core.Tensor{core.FromSlice(xs, core.Shape{4, 3}, dev)}, nil)
		require.Equal(t, before, fallbacksOf(dev, "_test_row_range"), "_test_row_range fell back to the CPU on %v", dev)
		requireClose(t, want, got, 1e-6)
		got = callRow(t, dev, "_test_row_range", []*core.Tensor{core.FromSlice(long, core.Shape{1, 300}, dev)}, nil)
		requireClose(t, []float64{rangePlusHalfSum(long)}, got, 1e-5)
	})
}

func randFloats(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// callRow calls op on dev and reads its output back as float64s.
func callRow(t *testing.T, dev core.Device, op string, ins []*core.Tensor, a core.Attrs) []float64 {
	t.Helper()
	out, err := core.Call(op, ins, a)
	require.NoError(t, err, "%s on %v", op, dev)
	require.Equal(t, dev, out[0].Device())
	v, err := out[0].Float64s()
	require.NoError(t, err)
	return v
}

// requireClose wants got within rel of want, elementwise (NaN where want
// is NaN, an infinity where want is one).
func requireClose(t *testing.T, want, got []float64, rel float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		switch {
		case math.IsNaN(w):
			require.True(t, math.IsNaN(got[i]), "element %d: want NaN, got %v", i, got[i])
		case math.IsInf(w, 0):
			require.Equal(t, w, got[i], "element %d", i)
		default:
			require.InDelta(t, w, got[i], rel*max(1, math.Abs(w)), "element %d", i)
		}
	}
}

// rangePlusHalfSum is _test_row_range's value of a row: max - min +
// sum/2, NaN where the row holds one (row_max and row_min let NaN win).
func rangePlusHalfSum(r []float32) float64 {
	hi, lo, sum := math.Inf(-1), math.Inf(1), 0.0
	for _, v := range r {
		f := float64(v)
		if math.IsNaN(f) {
			return f
		}
		hi, lo, sum = max(hi, f), min(lo, f), sum+f
	}
	return hi - lo + sum/2
}

var rowRangeOnce sync.Once

// registerRowRange registers _test_row_range, an op that exists only for
// this check (no CPU kernel, no samples): one value per row of its 2-d
// input, max - min + sum/2, stored by lane 0.
func registerRowRange() {
	rowRangeOnce.Do(func() {
		core.MustRegister(&core.OpDef{
			Name: "_test_row_range", Category: "reduce", Internal: true, Doc: "max - min + sum/2 of each row (a test of row bodies).",
			Inputs: []core.InputSpec{{Name: "x", DTypes: []core.DType{core.F32}}},
			Infer: func(in []core.Meta, _ core.Attrs) ([]core.Meta, error) {
				return []core.Meta{{Shape: core.Shape{in[0].Shape[0]}, DType: core.F32}}, nil
			},
			GPUBody: &core.ElementBody{
				Rows: func(ins []core.Shape, _ core.Shape, _ core.Attrs) int { return ins[0][0] },
				Body: func(t core.BodyTypes, _ core.Attrs, _ core.BodySlots) string {
					return `
	let n = dim0(1u);
	var hi = -3.0e38;
	var lo = 3.0e38;
	var sum: ` + t.Float + ` = 0.0;
	var nan = false;
	for (var j = lane; j < n; j += lanes) {
		let v = x0(row * n + j);
		if is_nan(v) {
			nan = true;
		} else {
			hi = max(hi, v);
			lo = min(lo, v);
		}
		sum += v;
	}
	if nan {
		hi = sum;
	}
	let top = row_max(hi);
	let bottom = row_min(lo);
	let total = row_sum(sum);
	if lane == 0u {
		store(row, top - bottom + total / 2.0);
	}`
				},
			},
		})
	})
}
