package webgpu_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
)

// reductions lists every reduction with the attributes that reduce axes
// (argmax and argmin take one axis, or none for the flat index).
func reductions(axes []int) map[string]core.Attrs {
	out := map[string]core.Attrs{}
	for _, op := range []string{"sum", "mean", "prod", "max", "min", "any", "all", "var", "std", "logsumexp"} {
		out[op] = core.Attrs{"axes": axes}
	}
	for _, ord := range []float64{0, 1, 2, 3, math.Inf(1), math.Inf(-1)} {
		out[fmt.Sprintf("norm ord=%v", ord)] = core.Attrs{"axes": axes, "ord": ord}
	}
	arg := core.Attrs{}
	if len(axes) == 1 {
		arg = core.Attrs{"axis": axes[0]}
	}
	out["argmax"], out["argmin"] = arg, arg
	return out
}

func opName(label string) string {
	var op string
	fmt.Sscan(label, &op)
	return op
}

// matchCPU runs every reduction of x over axes on the GPU and the CPU, or
// those named in only.
func matchCPU(t *testing.T, x *core.Tensor, axes []int, view func(*core.Tensor) *core.Tensor, only ...string) {
	t.Helper()
	for label, attrs := range reductions(axes) {
		if len(only) > 0 && !slices.Contains(only, label) {
			continue
		}
		t.Run(fmt.Sprintf("%s over %v", label, axes), func(t *testing.T) {
			want := core.Call1(opName(label), attrs, view(x))
			got := core.Call1(opName(label), attrs, view(x.To(gpu)))
			closeTo(t, got.To(core.CPU), want, 1e-4)
		})
	}
}

// Issue 26, item 6: the GPU summed 2^28 broadcast ones to 134,217,472 and
// 2^32+5 of them to 5. A reduced dim every input broadcasts is now read
// once and accounted for (times the repeat count, to its power, or as is),
// so huge views reduce exactly and fast, whatever the driver.
func TestBroadcastReductionsCountEveryMember(t *testing.T) {
	needGPU(t)
	one := core.FromFloat64s(core.F32, core.Shape{1}, []float64{1}, gpu)
	for _, n := range []int{1 << 28, 1<<32 + 5} {
		ones := core.Call1("expand", core.Attrs{"shape": []int{n}}, one)
		sum, err := core.Call1("sum", nil, ones).Float64s()
		require.NoError(t, err)
		assert.Equal(t, float64(float32(n)), sum[0], "sum of %d broadcast ones", n)
		mean, err := core.Call1("mean", nil, ones).Float64s()
		require.NoError(t, err)
		assert.Equal(t, 1.0, mean[0])
	}
	// Every reduction over a view broadcast along the reduced dims, against
	// the CPU's: repeats counted in sums and variances, powers in products,
	// the first index of the full view from argmax.
	x := core.FromFloat64s(core.F32, core.Shape{3, 1, 5}, randn(core.Shape{3, 1, 5}, 7))
	wide := func(x *core.Tensor) *core.Tensor {
		return core.Call1("expand", core.Attrs{"shape": []int{3, 70000, 5}}, x)
	}
	for _, axes := range [][]int{{1}, {0, 1}, {1, 2}, {0, 1, 2}} {
		matchCPU(t, x, axes, wide)
	}
	// Integers: exact in i64 while the result fits the i32 the GPU holds it
	// in, refused past it.
	three := core.FromFloat64s(core.I32, core.Shape{1}, []float64{3}, gpu)
	v, err := core.Call1("sum", nil, core.Call1("expand", core.Attrs{"shape": []int{1 << 29}}, three)).Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{3 << 29}, v)
	_, err = core.Call1("sum", nil, core.Call1("expand", core.Attrs{"shape": []int{1<<32 + 5}}, three)).Int64s()
	require.ErrorContains(t, err, "does not fit the 32-bit integers WebGPU holds i64 in")
	v, err = core.Call1("prod", nil, core.Call1("expand", core.Attrs{"shape": []int{19}}, three)).Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{1162261467}, v, "3^19")
	_, err = core.Call1("prod", nil, core.Call1("expand", core.Attrs{"shape": []int{20}}, three)).Int64s()
	require.ErrorContains(t, err, "does not fit")
}

// Mesa's lavapipe stops a shader's loops after 65,535 iterations in all,
// silently (gpu_looplimit.go): a sum over a group of 70,000 gave 65,535. The
// reductions split every group into parts a thread may loop over, on any
// device: here many groups (which alone would not be split) of 70,000, and
// few long ones, which need several levels.
func TestReductionsOfLongGroupsMatchCPU(t *testing.T) {
	needGPU(t)
	row := core.FromFloat64s(core.F32, core.Shape{1, 70000}, randn(core.Shape{1, 70000}, 5))
	// One of each kind of reducer: the work is 77 million reads each.
	matchCPU(t, row, []int{1}, func(x *core.Tensor) *core.Tensor {
		return core.Call1("expand", core.Attrs{"shape": []int{1100, 70000}}, x)
	}, "sum", "var", "prod", "min", "any", "argmax", "norm ord=2")
	x := core.FromFloat64s(core.F32, core.Shape{3, 200000}, randn(core.Shape{3, 200000}, 11))
	same := func(x *core.Tensor) *core.Tensor { return x }
	matchCPU(t, x, []int{1}, same)
	matchCPU(t, x, []int{0, 1}, same)
	// A group whose first part ends with its best value, and a NaN late in
	// another: the first best and the first NaN win across parts.
	vals := make([]float64, 300000)
	vals[4094], vals[250000], vals[290000] = 9, 9, math.NaN()
	y := core.FromFloat64s(core.F32, core.Shape{300000}, vals)
	for _, op := range []string{"argmax", "argmin", "max"} {
		want := core.Call1(op, nil, y)
		got := core.Call1(op, nil, y.To(gpu))
		closeTo(t, got.To(core.CPU), want, 0)
	}
	y = core.Call1("slice", core.Attrs{"axis": 0, "start": 0, "stop": 200000}, y)
	closeTo(t, core.Call1("argmax", nil, y.To(gpu)).To(core.CPU), core.Call1("argmax", nil, y), 0)
}

// Issue 26, item 8: the GPU holds i64 in i32, and an i64 sum past it
// wrapped (three 2^30 gave -2^30). Integer sums are exact in two words
// through every level, products track overflow, and a result outside i32
// fails the op, naming it.
func TestIntegerReductionsAreExactOrRefused(t *testing.T) {
	needGPU(t)
	ints := func(d core.DType, vals ...float64) *core.Tensor {
		return core.FromFloat64s(d, core.Shape{len(vals)}, vals, gpu)
	}
	_, err := core.Call1("sum", nil, ints(core.I32, 1<<30, 1<<30, 1<<30)).Int64s()
	require.ErrorContains(t, err, "sum: a result does not fit the 32-bit integers WebGPU holds i64 in")
	cases := []struct {
		name string
		op   string
		x    *core.Tensor
		want int64
	}{
		{"fits", "sum", ints(core.I32, 1<<29, 1<<29, 1<<29), 3 << 29},
		{"passes i32 on the way", "sum", ints(core.I32, 1<<30, 1<<30, -(1 << 30), -(1 << 30), 5), 5},
		{"i64 input", "sum", ints(core.I64, -2147483648, 2147483647, 1), 0},
		{"bool", "sum", ints(core.Bool, 1, 0, 1, 1), 3},
		{"u8", "sum", ints(core.U8, 255, 255, 7), 517},
		{"product", "prod", ints(core.I32, 1<<15, 1<<15, -1), -(1 << 30)},
		{"zero after an overflow", "prod", ints(core.I32, 1<<20, 1<<20, 0, 3), 0},
		{"i32 min", "prod", ints(core.I32, -(1 << 16), 1<<15), -(1 << 31)},
	}
	for _, c := range cases {
		v, err := core.Call1(c.op, nil, c.x).Int64s()
		require.NoError(t, err, c.name)
		assert.Equal(t, []int64{c.want}, v, c.name)
	}
	for _, x := range []*core.Tensor{ints(core.I32, 1<<16, 1<<15), ints(core.I32, 1<<20, 1<<20, 3)} {
		_, err := core.Call1("prod", nil, x).Int64s()
		require.ErrorContains(t, err, "prod: a result does not fit")
	}
	// Long groups: the partial sums of the first level pass i32, the
	// total does not.
	n := 300000
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64(20000 - 40000*(i%2)) // +20000, -20000, ...
	}
	vals[0] = 1 << 30
	long := core.FromFloat64s(core.I32, core.Shape{2, n / 2}, vals)
	want, err := core.Call1("sum", core.Attrs{"axes": []int{1}}, long).Int64s()
	require.NoError(t, err)
	got, err := core.Call1("sum", core.Attrs{"axes": []int{1}}, long.To(gpu)).Int64s()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	// u32 sums stay u32 and wrap, as on the CPU.
	u := ints(core.U32, 4294967295, 2)
	v, err := core.Call1("sum", nil, u).Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, v)
}

// A count, size or stride past what a WGSL u32/i32 holds is refused with
// an error that says so, where it used to wrap into a wrong result: here
// the size of the axis an index_select checks its indices against.
func TestCountsPastThirtyTwoBitsAreRefused(t *testing.T) {
	needGPU(t)
	x := core.Call1("expand", core.Attrs{"shape": []int{1<<31 + 3, 2}}, core.FromFloat64s(core.F32, core.Shape{1, 2}, []float64{1, 2}, gpu))
	idx := core.FromFloat64s(core.I64, core.Shape{2}, []float64{5, 1 << 30}, gpu)
	_, err := core.Call1("index_select", core.Attrs{"axis": 0}, x, idx).Float64s()
	require.ErrorContains(t, err, "2147483651")
	require.ErrorContains(t, err, "does not fit the 32-bit integers GPU kernels index with")
}

// A matmul's threads loop over K: on a device with a loop limit the
// register-blocked kernels stopped short (wrong from K = 66,000, the vec4
// ones from 270,000); such products now take the tiled kernel.
func TestLongInnerProductsMatchCPU(t *testing.T) {
	needGPU(t)
	const k = 70000
	a := core.FromFloat64s(core.F32, core.Shape{4, k}, randn(core.Shape{4, k}, 21))
	b := core.FromFloat64s(core.F32, core.Shape{k, 3}, randn(core.Shape{k, 3}, 22))
	want := a.Matmul(b)
	closeTo(t, a.To(gpu).Matmul(b.To(gpu)).To(core.CPU), want, 1e-3)
	// b^T stored row-major: the a @ W^T layout.
	bt := b.Transpose().Contiguous().To(gpu).Transpose()
	closeTo(t, a.To(gpu).Matmul(bt).To(core.CPU), want, 1e-3)
}

// Kernels whose threads loop over a whole row (softmax, layer norm, scans,
// class losses) are right or refused on a device with a loop limit, never
// cut short: on lavapipe a layer norm over 40,000 and a cross entropy over
// 16,000 classes came out wrong without an error.
func TestLongRowsAreRightOrRefused(t *testing.T) {
	needGPU(t)
	x := core.FromFloat64s(core.F32, core.Shape{2, 40000}, randn(core.Shape{2, 40000}, 31))
	labels := core.FromFloat64s(core.I64, core.Shape{2}, []float64{3, 39000})
	cases := map[string]func(x *core.Tensor, labels *core.Tensor) *core.Tensor{
		"softmax":     func(x, _ *core.Tensor) *core.Tensor { return core.Call1("softmax", core.Attrs{"axis": 1}, x) },
		"log_softmax": func(x, _ *core.Tensor) *core.Tensor { return core.Call1("log_softmax", core.Attrs{"axis": 1}, x) },
		"layer_norm": func(x, _ *core.Tensor) *core.Tensor {
			return core.Call1("layer_norm", core.Attrs{"normalized_shape": []int{40000}}, x)
		},
		"cumsum": func(x, _ *core.Tensor) *core.Tensor {
			return core.Call1("cumsum", core.Attrs{"axis": 1}, core.Call1("concat", core.Attrs{"axis": 1}, x, x))
		},
		"cross_entropy": func(x, l *core.Tensor) *core.Tensor { return core.Call1("cross_entropy", nil, x, l) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			got := f(x.To(gpu), labels.To(gpu))
			if err := got.Err(); err != nil {
				require.ErrorContains(t, err, "silently stops every shader loop after")
				return
			}
			closeTo(t, got.To(core.CPU), f(x, labels), 1e-3)
		})
	}
}
