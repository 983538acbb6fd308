package cpu_test

import (
	"math"
	"math/cmplx"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// Focused tests of the creation, random, quantisation, sparse and spectral
// ops: hand-computed values, gradients and error cases.

func miscCall(t *testing.T, op string, a core.Attrs, ins ...*core.Tensor) *core.Tensor {
	t.Helper()
	out := core.Call1(op, a, ins...)
	require.NoError(t, out.Err(), op)
	return out
}

func miscVals(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

func miscErr(t *testing.T, want string, op string, a core.Attrs, ins ...*core.Tensor) {
	t.Helper()
	out := core.Call1(op, a, ins...)
	require.Error(t, out.Err(), "%s with %v should fail", op, a)
	assert.Contains(t, out.Err().Error(), want)
}

func miscF64(vals []float64, shape ...int) *core.Tensor {
	return core.FromFloat64s(core.F64, core.Shape(shape), vals)
}

func miscI64(vals []int64, shape ...int) *core.Tensor { return core.FromSlice(vals, core.Shape(shape)) }

func TestMiscArangeLinspaceEye(t *testing.T) {
	a := miscCall(t, "arange", core.Attrs{"stop": 5})
	assert.Equal(t, core.I64, a.DType())
	assert.Equal(t, []float64{0, 1, 2, 3, 4}, miscVals(t, a))

	a = miscCall(t, "arange", core.Attrs{"start": 1, "stop": 2, "step": 0.25})
	assert.Equal(t, core.F32, a.DType())
	assert.Equal(t, []float64{1, 1.25, 1.5, 1.75}, miscVals(t, a))

	a = miscCall(t, "arange", core.Attrs{"start": 3, "stop": -3, "step": -2.5, "dtype": core.F64})
	assert.Equal(t, []float64{3, 0.5, -2}, miscVals(t, a))

	a = miscCall(t, "arange", core.Attrs{"start": 4, "stop": 4})
	assert.Equal(t, core.Shape{0}, a.Shape())

	l := miscCall(t, "linspace", core.Attrs{"start": -1, "stop": 1, "steps": 5, "dtype": core.F64})
	assert.Equal(t, []float64{-1, -0.5, 0, 0.5, 1}, miscVals(t, l))
	l = miscCall(t, "linspace", core.Attrs{"start": 0.1, "stop": 0.7, "steps": 7, "dtype": core.F64})
	assert.Equal(t, 0.7, miscVals(t, l)[6], "the last value is exactly stop")
	l = miscCall(t, "linspace", core.Attrs{"start": 0, "stop": 1, "steps": 5, "dtype": core.I64})
	assert.Equal(t, []float64{0, 0, 0, 0, 1}, miscVals(t, l), "integer linspace truncates like PyTorch")
	l = miscCall(t, "linspace", core.Attrs{"start": 3, "stop": 9, "steps": 1})
	assert.Equal(t, []float64{3}, miscVals(t, l))

	e := miscCall(t, "eye", core.Attrs{"n": 2, "m": 3, "dtype": core.I32})
	assert.Equal(t, core.Shape{2, 3}, e.Shape())
	assert.Equal(t, []float64{1, 0, 0, 0, 1, 0}, miscVals(t, e))
	assert.Equal(t, []float64{1, 0, 0, 1}, miscVals(t, miscCall(t, "eye", core.Attrs{"n": 2})))

	miscErr(t, "non-zero", "arange", core.Attrs{"stop": 3, "step": 0})
	miscErr(t, "goes away from stop", "arange", core.Attrs{"start": 0, "stop": 3, "step": -1})
	miscErr(t, "finite", "arange", core.Attrs{"stop": math.Inf(1)})
	miscErr(t, "missing required attribute", "arange", core.Attrs{})
	miscErr(t, "non-negative", "linspace", core.Attrs{"start": 0, "stop": 1, "steps": -2})
	miscErr(t, "non-negative", "eye", core.Attrs{"n": -1})
}

func TestMiscRandomMatchesCoreStream(t *testing.T) {
	const seed, offset = 1234567, 5
	n := 4099 // not a multiple of 4, and large enough to run in parallel
	u := miscVals(t, miscCall(t, "rand", core.Attrs{"shape": []int{n}, "seed": seed, "offset": offset, "dtype": core.F64}))
	z := miscVals(t, miscCall(t, "randn", core.Attrs{"shape": []int{n}, "seed": seed, "offset": offset, "dtype": core.F64}))
	r := miscVals(t, miscCall(t, "randint", core.Attrs{"shape": []int{n}, "low": -7, "high": 1000, "seed": seed, "offset": offset}))
	for i := 0; i < n; i++ {
		require.Equal(t, numerics.PhiloxUniform(seed, offset, i), u[i], "element %d", i)
		require.Equal(t, numerics.PhiloxNormal(seed, offset, i), z[i], "element %d", i)
		require.Equal(t, float64(-7+int64(numerics.PhiloxBits(seed, offset, i, 0)%1007)), r[i], "element %d", i)
	}
}

func TestMiscRandomDeterminism(t *testing.T) {
	fixed := core.Attrs{"shape": []int{6, 7}, "seed": 99, "offset": 3}
	a := miscVals(t, miscCall(t, "randn", fixed))
	b := miscVals(t, miscCall(t, "randn", fixed))
	assert.Equal(t, a, b)
	other := miscVals(t, miscCall(t, "randn", core.Attrs{"shape": []int{6, 7}, "seed": 99, "offset": 4}))
	assert.NotEqual(t, a, other)
	// A later offset continues the same stream: block offset+1 is elements 4.. of offset.
	assert.Equal(t, a[4:], other[:len(other)-4])

	seed, off := core.RNGState()
	defer core.SetRNGState(seed, off)
	core.ManualSeed(7)
	first := miscVals(t, miscCall(t, "rand", core.Attrs{"shape": []int{10}}))
	second := miscVals(t, miscCall(t, "rand", core.Attrs{"shape": []int{10}}))
	assert.NotEqual(t, first, second, "the global generator advances between calls")
	core.ManualSeed(7)
	assert.Equal(t, first, miscVals(t, miscCall(t, "rand", core.Attrs{"shape": []int{10}})))
	assert.Equal(t, second, miscVals(t, miscCall(t, "rand", core.Attrs{"shape": []int{10}})))
}

func miscMeanVar(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v))
}

func TestMiscRandomDistributions(t *testing.T) {
	const n = 100000
	attrs := func(extra core.Attrs) core.Attrs {
		a := core.Attrs{"shape": []int{n}, "seed": 2024, "offset": 0}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	// Standard errors at n=1e5: mean ~0.001 (uniform), ~0.003 (normal).
	u := miscVals(t, miscCall(t, "rand", attrs(nil)))
	m, v := miscMeanVar(u)
	assert.InDelta(t, 0.5, m, 0.005)
	assert.InDelta(t, 1.0/12, v, 0.002)
	for _, x := range u {
		require.True(t, x >= 0 && x < 1, "uniform draw %v outside [0, 1)", x)
	}
	for _, d := range []core.DType{core.F16, core.BF16} {
		for _, x := range miscVals(t, miscCall(t, "rand", attrs(core.Attrs{"dtype": d}))) {
			require.True(t, x >= 0 && x < 1, "%s uniform draw %v outside [0, 1)", d, x)
		}
	}

	z := miscVals(t, miscCall(t, "randn", attrs(nil)))
	m, v = miscMeanVar(z)
	assert.InDelta(t, 0, m, 0.015)
	assert.InDelta(t, 1, v, 0.02)
	within := 0
	for _, x := range z {
		if math.Abs(x) < 1 {
			within++
		}
	}
	assert.InDelta(t, 0.6827, float64(within)/n, 0.006)

	r := miscVals(t, miscCall(t, "randint", attrs(core.Attrs{"low": -3, "high": 4})))
	counts := map[float64]int{}
	for _, x := range r {
		counts[x]++
	}
	assert.Len(t, counts, 7)
	for x, c := range counts {
		assert.True(t, x >= -3 && x < 4)
		assert.InDelta(t, n/7, c, 600, "value %v", x)
	}

	p := core.FromFloat64s(core.F32, core.Shape{n}, func() []float64 {
		ps := make([]float64, n)
		for i := range ps {
			ps[i] = 0.3
		}
		return ps
	}())
	b := miscVals(t, miscCall(t, "bernoulli", core.Attrs{"seed": 5, "offset": 0}, p))
	m, _ = miscMeanVar(b)
	assert.InDelta(t, 0.3, m, 0.006)

	like := miscCall(t, "randn_like", core.Attrs{"seed": 1}, core.Zeros(core.Shape{3, 2}, core.F64))
	assert.Equal(t, core.Shape{3, 2}, like.Shape())
	assert.Equal(t, core.F64, like.DType())
}

func TestMiscRandomErrors(t *testing.T) {
	miscErr(t, "floating point", "rand", core.Attrs{"shape": []int{2}, "dtype": core.I32})
	miscErr(t, "floating point", "randn_like", nil, core.Zeros(core.Shape{2}, core.I64))
	miscErr(t, "greater than low", "randint", core.Attrs{"shape": []int{2}, "low": 3, "high": 3})
	miscErr(t, "does not fit i8", "randint", core.Attrs{"shape": []int{2}, "high": 200, "dtype": core.I8})
	miscErr(t, "negative dimension", "rand", core.Attrs{"shape": []int{-1}})
	miscErr(t, "outside [0, 1]", "bernoulli", nil, miscF64([]float64{0.5, 1.5}, 2))
	miscErr(t, "outside [0, 1]", "bernoulli", nil, miscF64([]float64{math.NaN()}, 1))
	miscErr(t, "dtype", "bernoulli", nil, miscI64([]int64{0, 1}, 2))
}

func TestMiscQuantize(t *testing.T) {
	x := core.FromSlice([]float32{0.25, 0.75, 1.25, -0.25, 100, -100, float32(math.NaN()), float32(math.Inf(-1))}, core.Shape{8})
	q := miscCall(t, "quantize", core.Attrs{"scale": 0.5, "zero_point": 3}, x)
	assert.Equal(t, core.I8, q.DType())
	// Halves round to even; out-of-range values saturate; NaN goes to qmax as in PyTorch.
	assert.Equal(t, []float64{3, 5, 5, 3, 127, -128, 127, -128}, miscVals(t, q))

	qu := miscCall(t, "quantize", core.Attrs{"scale": []float64{0.5}, "zero_point": []int{3}, "dtype": core.U8}, x)
	assert.Equal(t, []float64{3, 5, 5, 3, 203, 0, 255, 0}, miscVals(t, qu))

	// Per channel along axis 1: column c uses scale[c], zero_point[c].
	xc := miscF64([]float64{0.3, 0.6, 1, 2}, 2, 2)
	qc := miscCall(t, "quantize", core.Attrs{"scale": []float64{0.1, 0.2}, "zero_point": []int{0, 1}, "axis": -1}, xc)
	assert.Equal(t, []float64{3, 4, 10, 11}, miscVals(t, qc))

	d := miscCall(t, "dequantize", core.Attrs{"scale": []float64{0.1, 0.2}, "zero_point": []int{0, 1}, "axis": 1}, qc)
	assert.Equal(t, core.F32, d.DType())
	assert.InDeltaSlice(t, []float64{0.3, 0.6, 1, 2}, miscVals(t, d), 1e-6)

	dq := miscCall(t, "dequantize", core.Attrs{"scale": 0.5, "zero_point": 3}, q)
	assert.Equal(t, []float64{0, 1, 1, 0, 62, -65.5, 62, -65.5}, miscVals(t, dq))

	// Round trip error is at most half a step inside the representable range.
	r := rand.New(rand.NewSource(3))
	vals := make([]float64, 200)
	for i := range vals {
		vals[i] = r.Float64()*4 - 2
	}
	back := miscVals(t, miscCall(t, "dequantize", core.Attrs{"scale": 0.02},
		miscCall(t, "quantize", core.Attrs{"scale": 0.02}, core.FromFloat64s(core.F32, core.Shape{200}, vals))))
	for i, v := range vals {
		want := math.Max(-128*0.02, math.Min(127*0.02, v))
		assert.InDelta(t, want, back[i], 0.01+1e-6)
	}
}

func TestMiscQuantizeErrors(t *testing.T) {
	x := miscF64([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	miscErr(t, "scale has 2 values, want 1", "quantize", core.Attrs{"scale": []float64{1, 2}}, x)
	miscErr(t, "scale has 2 values, want 3", "quantize", core.Attrs{"scale": []float64{1, 2}, "axis": 1}, x)
	miscErr(t, "zero_point has 1 values, want 2", "quantize", core.Attrs{"scale": []float64{1, 2}, "zero_point": 0, "axis": 0}, x)
	miscErr(t, "finite positive", "quantize", core.Attrs{"scale": 0}, x)
	miscErr(t, "finite positive", "quantize", core.Attrs{"scale": -1}, x)
	miscErr(t, "outside the u8 range", "quantize", core.Attrs{"scale": 1, "zero_point": -1, "dtype": core.U8}, x)
	miscErr(t, "out of range", "quantize", core.Attrs{"scale": 1, "axis": 2}, x)
	miscErr(t, "i8 or u8", "quantize", core.Attrs{"scale": 1, "dtype": core.I32}, x)
	miscErr(t, "missing required attribute", "quantize", nil, x)
	miscErr(t, "dtype", "quantize", core.Attrs{"scale": 1}, miscI64([]int64{1}, 1))
	miscErr(t, "dtype", "dequantize", core.Attrs{"scale": 1}, x)
}

func TestMiscSegmentForward(t *testing.T) {
	data := miscF64([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, 2)
	ids := miscI64([]int64{2, 0, 2, 3, 0}, 5)
	a := core.Attrs{"num_segments": 5}
	assert.Equal(t, []float64{12, 14, 0, 0, 6, 8, 7, 8, 0, 0}, miscVals(t, miscCall(t, "segment_sum", a, data, ids)))
	assert.Equal(t, []float64{6, 7, 0, 0, 3, 4, 7, 8, 0, 0}, miscVals(t, miscCall(t, "segment_mean", a, data, ids)))
	assert.Equal(t, []float64{9, 10, 0, 0, 5, 6, 7, 8, 0, 0}, miscVals(t, miscCall(t, "segment_max", a, data, ids)))

	// Maxima of all-negative segments are negative (the zero fill is not a candidate).
	neg := miscF64([]float64{-5, -2, -9}, 3)
	ids32 := core.FromSlice([]int32{1, 1, 0}, core.Shape{3})
	assert.Equal(t, []float64{-9, -2, 0}, miscVals(t, miscCall(t, "segment_max", core.Attrs{"num_segments": 3}, neg, ids32)))

	// NaN propagates through max; integer data keeps its dtype.
	nan := miscVals(t, miscCall(t, "segment_max", core.Attrs{"num_segments": 1}, miscF64([]float64{1, math.NaN(), 3}, 3), miscI64([]int64{0, 0, 0}, 3)))
	assert.True(t, math.IsNaN(nan[0]))
	ints := miscCall(t, "segment_sum", core.Attrs{"num_segments": 2}, core.FromSlice([]int32{5, -7, 9}, core.Shape{3}), miscI64([]int64{1, 1, 0}, 3))
	assert.Equal(t, core.I32, ints.DType())
	assert.Equal(t, []float64{9, -2}, miscVals(t, ints))

	// The sorted path gives the same result as the general one.
	sorted := miscI64([]int64{0, 0, 2, 3, 3}, 5)
	for _, op := range []string{"segment_sum", "segment_mean", "segment_max"} {
		fast := miscVals(t, miscCall(t, op, core.Attrs{"num_segments": 4, "sorted": true}, data, sorted))
		slow := miscVals(t, miscCall(t, op, core.Attrs{"num_segments": 4}, data, sorted))
		assert.Equal(t, slow, fast, op)
	}
}

func TestMiscSegmentGradients(t *testing.T) {
	ids := miscI64([]int64{1, 0, 1, 1}, 4)
	a := core.Attrs{"num_segments": 3}
	up := miscF64([]float64{10, 20, 30}, 3)
	grad := func(op string, vals []float64) []float64 {
		x := miscF64(vals, 4).SetRequiresGrad(true)
		y := miscCall(t, op, a, x, ids)
		require.NoError(t, miscCall(t, "sum", nil, miscCall(t, "mul", nil, y, up)).Backward())
		return miscVals(t, x.Grad())
	}
	assert.Equal(t, []float64{20, 10, 20, 20}, grad("segment_sum", []float64{1, 2, 3, 4}))
	assert.InDeltaSlice(t, []float64{20.0 / 3, 10, 20.0 / 3, 20.0 / 3}, grad("segment_mean", []float64{1, 2, 3, 4}), 1e-12)
	// Rows 0 and 3 tie for segment 1's maximum and share its gradient.
	assert.Equal(t, []float64{10, 10, 0, 10}, grad("segment_max", []float64{5, -1, 2, 5}))
	assert.Equal(t, []float64{0, 10, 0, 20}, grad("segment_max", []float64{1, -1, 2, 5}))
}

func TestMiscSegmentErrors(t *testing.T) {
	data := miscF64([]float64{1, 2, 3}, 3)
	miscErr(t, "segment_ids[1] = 3 is outside [0, 3)", "segment_sum", core.Attrs{"num_segments": 3}, data, miscI64([]int64{0, 3, 1}, 3))
	miscErr(t, "outside [0, 2)", "segment_max", core.Attrs{"num_segments": 2}, data, miscI64([]int64{0, -1, 1}, 3))
	miscErr(t, "sorted is true but segment_ids[2] = 0 follows 1", "segment_mean", core.Attrs{"num_segments": 2, "sorted": true}, data, miscI64([]int64{0, 1, 0}, 3))
	miscErr(t, "must have shape [3]", "segment_sum", core.Attrs{"num_segments": 2}, data, miscI64([]int64{0, 1}, 2))
	miscErr(t, "non-negative", "segment_sum", core.Attrs{"num_segments": -1}, data, miscI64([]int64{0, 0, 0}, 3))
	miscErr(t, "missing required attribute", "segment_sum", nil, data, miscI64([]int64{0, 0, 0}, 3))
	miscErr(t, "dtype", "segment_sum", core.Attrs{"num_segments": 2}, data, miscF64([]float64{0, 0, 0}, 3))
	miscErr(t, "dtype", "segment_mean", core.Attrs{"num_segments": 2}, miscI64([]int64{1, 2, 3}, 3), miscI64([]int64{0, 0, 0}, 3))
	miscErr(t, "scalar", "segment_sum", core.Attrs{"num_segments": 2}, miscF64([]float64{1}), miscI64([]int64{0}, 1))
}

// The 3x4 matrix [[0 2 0 1] [0 0 0 0] [3 0 4 0]] in CSR form.
func miscCSR() (indptr, indices, values *core.Tensor) {
	return miscI64([]int64{0, 2, 2, 4}, 4), miscI64([]int64{3, 1, 0, 2}, 4), miscF64([]float64{1, 2, 3, 4}, 4)
}

func TestMiscSpmmSddmm(t *testing.T) {
	ptr, idx, vals := miscCSR()
	dense := miscF64([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)
	out := miscCall(t, "spmm", nil, ptr, idx, vals, dense)
	assert.Equal(t, core.Shape{3, 2}, out.Shape())
	assert.Equal(t, []float64{2*3 + 7, 2*4 + 8, 0, 0, 3*1 + 4*5, 3*2 + 4*6}, miscVals(t, out))

	a := miscF64([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	b := miscF64([]float64{1, 0, 2, 1, 0, 1, 1, 3}, 2, 4)
	s := miscCall(t, "sddmm", nil, ptr, idx, a, b)
	// (a@b) = [[1 2 4 7] [3 4 10 15] [5 6 16 23]] at (0,3) (0,1) (2,0) (2,2).
	assert.Equal(t, []float64{7, 2, 5, 16}, miscVals(t, s))

	// Gradients of sum(spmm * up): d values[e] = up[r] . dense[c]; d dense = A^T up.
	v := vals.Detach().SetRequiresGrad(true)
	d := dense.Detach().SetRequiresGrad(true)
	up := miscF64([]float64{1, -1, 5, 5, 2, 3}, 3, 2)
	y := miscCall(t, "spmm", nil, ptr, idx, v, d)
	require.NoError(t, miscCall(t, "sum", nil, miscCall(t, "mul", nil, y, up)).Backward())
	assert.Equal(t, []float64{7 - 8, 3 - 4, 2*1 + 3*2, 2*5 + 3*6}, miscVals(t, v.Grad()))
	assert.Equal(t, []float64{3 * 2, 3 * 3, 2 * 1, 2 * -1, 4 * 2, 4 * 3, 1 * 1, 1 * -1}, miscVals(t, d.Grad()))

	// Gradients of sum(sddmm * g): da[r] = sum_e g[e] b[:, c(e)], db[:, c] = sum_e g[e] a[r(e)].
	aa, bb := a.Detach().SetRequiresGrad(true), b.Detach().SetRequiresGrad(true)
	g := miscF64([]float64{1, 2, 3, 4}, 4)
	z := miscCall(t, "sddmm", nil, ptr, idx, aa, bb)
	require.NoError(t, miscCall(t, "sum", nil, miscCall(t, "mul", nil, z, g)).Backward())
	assert.Equal(t, []float64{1*1 + 2*0, 1*3 + 2*1, 0, 0, 3*1 + 4*2, 3*0 + 4*1}, miscVals(t, aa.Grad()))
	assert.Equal(t, []float64{3 * 5, 2 * 1, 4 * 5, 1 * 1, 3 * 6, 2 * 2, 4 * 6, 1 * 2}, miscVals(t, bb.Grad()))
}

func TestMiscSparseErrors(t *testing.T) {
	ptr, idx, vals := miscCSR()
	dense := miscF64(make([]float64, 8), 4, 2)
	miscErr(t, "indices[0] = 3 is outside [0, 3)", "spmm", nil, ptr, idx, vals, miscF64(make([]float64, 6), 3, 2))
	miscErr(t, "indptr[0] is 1", "spmm", nil, miscI64([]int64{1, 2, 2, 4}, 4), idx, vals, dense)
	miscErr(t, "indptr[3] is 3", "spmm", nil, miscI64([]int64{0, 2, 2, 3}, 4), idx, vals, dense)
	miscErr(t, "indptr decreases", "spmm", nil, miscI64([]int64{0, 3, 2, 4}, 4), idx, vals, dense)
	miscErr(t, "indptr decreases", "spmm", nil, miscI64([]int64{0, 9, 2, 4}, 4), idx, vals, dense)
	miscErr(t, "values must have shape [4]", "spmm", nil, ptr, idx, miscF64([]float64{1, 2}, 2), dense)
	miscErr(t, "different dtypes", "spmm", nil, ptr, idx, vals, core.Zeros(core.Shape{4, 2}, core.F32))
	miscErr(t, "dense must be 2-D", "spmm", nil, ptr, idx, vals, miscF64(make([]float64, 4), 4))
	miscErr(t, "dtype", "spmm", nil, miscF64([]float64{0, 2, 2, 4}, 4), idx, vals, dense)
	a := miscF64(make([]float64, 6), 3, 2)
	miscErr(t, "inner dims differ: [3 2] x [3 4]", "sddmm", nil, ptr, idx, a, miscF64(make([]float64, 12), 3, 4))
	miscErr(t, "a has 2 rows, indptr describes 3", "sddmm", nil, ptr, idx, miscF64(make([]float64, 4), 2, 2), miscF64(make([]float64, 8), 2, 4))
	miscErr(t, "indices[0] = 3 is outside [0, 2)", "sddmm", nil, ptr, idx, a, miscF64(make([]float64, 4), 2, 2))
}

// miscNaiveDFT is the textbook O(n^2) transform with sign -1 (or +1 for inverse).
func miscNaiveDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	out := make([]complex128, n)
	for k := range out {
		for j, v := range x {
			out[k] += v * cmplx.Rect(1, sign*2*math.Pi*float64((k*j)%n)/float64(n))
		}
	}
	return out
}

func miscPairs(c []complex128) []float64 {
	out := make([]float64, 0, 2*len(c))
	for _, v := range c {
		out = append(out, real(v), imag(v))
	}
	return out
}

func TestMiscFFTMatchesNaiveDFT(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 64, 100, 257, 1000} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(r.NormFloat64(), r.NormFloat64())
		}
		tol := 1e-12 * float64(n)
		in := miscF64(miscPairs(x), n, 2)
		assert.InDeltaSlice(t, miscPairs(miscNaiveDFT(x, false)), miscVals(t, miscCall(t, "fft", nil, in)), tol, "fft n=%d", n)
		want := miscNaiveDFT(x, true)
		for i := range want {
			want[i] /= complex(float64(n), 0)
		}
		assert.InDeltaSlice(t, miscPairs(want), miscVals(t, miscCall(t, "ifft", nil, in)), tol, "ifft n=%d", n)

		re := make([]float64, n)
		for i := range re {
			re[i] = real(x[i])
		}
		spec := miscVals(t, miscCall(t, "rfft", nil, miscF64(re, n)))
		full := miscNaiveDFT(func() []complex128 {
			c := make([]complex128, n)
			for i := range c {
				c[i] = complex(re[i], 0)
			}
			return c
		}(), false)
		assert.InDeltaSlice(t, miscPairs(full[:n/2+1]), spec, tol, "rfft n=%d", n)
		back := miscVals(t, miscCall(t, "irfft", core.Attrs{"n": n}, miscF64(spec, n/2+1, 2)))
		assert.InDeltaSlice(t, re, back, tol, "irfft(rfft) n=%d", n)
	}
}

func TestMiscFFTAxesNormsAndLengths(t *testing.T) {
	// fft over axis 0 of a [3, 2] complex array equals fft of each column.
	x := miscF64([]float64{1, 0, 2, 1, 0, 3, -1, 1, 4, 0, 5, 2}, 3, 2, 2)
	got := miscVals(t, miscCall(t, "fft", core.Attrs{"axis": 0, "norm": "ortho"}, x))
	for col := 0; col < 2; col++ {
		c := []complex128{complex(1, 0), complex(0, 3), complex(4, 0)}
		if col == 1 {
			c = []complex128{complex(2, 1), complex(-1, 1), complex(5, 2)}
		}
		want := miscNaiveDFT(c, false)
		for k := range want {
			assert.InDelta(t, real(want[k])/math.Sqrt(3), got[(k*2+col)*2], 1e-12)
			assert.InDelta(t, imag(want[k])/math.Sqrt(3), got[(k*2+col)*2+1], 1e-12)
		}
	}
	// n pads with zeros or trims; forward norm scales by 1/n.
	y := miscF64([]float64{1, 0, 1, 0}, 2, 2)
	assert.InDeltaSlice(t, []float64{0.5, 0, 0.25, -0.25, 0, 0, 0.25, 0.25}, miscVals(t, miscCall(t, "fft", core.Attrs{"n": 4, "norm": "forward"}, y)), 1e-12)
	assert.Equal(t, []float64{1, 0}, miscVals(t, miscCall(t, "fft", core.Attrs{"n": 1}, y)))
	// irfft ignores the imaginary parts of DC and Nyquist; default n is 2*(m-1).
	z := miscCall(t, "irfft", nil, miscF64([]float64{4, 7, 0, 0, 2, 9}, 3, 2))
	assert.Equal(t, core.Shape{4}, z.Shape())
	assert.InDeltaSlice(t, []float64{1.5, 0.5, 1.5, 0.5}, miscVals(t, z), 1e-12)
	// f32 in, f32 out.
	f := miscCall(t, "rfft", nil, core.FromSlice([]float32{1, 2, 3}, core.Shape{3}))
	assert.Equal(t, core.F32, f.DType())
	assert.Equal(t, core.Shape{2, 2}, f.Shape())
}

func TestMiscFFTGradients(t *testing.T) {
	// d/dx of sum(re(fft(x))) for a length-3 complex x: column sums of the DFT matrix.
	x := miscF64([]float64{1, 2, 3, 4, 5, 6}, 3, 2).SetRequiresGrad(true)
	up := miscF64([]float64{1, 0, 1, 0, 1, 0}, 3, 2)
	y := miscCall(t, "fft", nil, x)
	require.NoError(t, miscCall(t, "sum", nil, miscCall(t, "mul", nil, y, up)).Backward())
	// sum_k e^{-2pi i kt/3} is 3 at t=0 and 0 elsewhere: only re(x_0) matters.
	assert.InDeltaSlice(t, []float64{3, 0, 0, 0, 0, 0}, miscVals(t, x.Grad()), 1e-12)

	// irfft then rfft with the same n is the identity on the real signal's
	// spectrum, so the gradient of sum(irfft(rfft(s))*g) with respect to s is g.
	s := miscF64([]float64{0.5, -1, 2, 3, 0.25}, 5).SetRequiresGrad(true)
	g := miscF64([]float64{1, 2, 3, 4, 5}, 5)
	back := miscCall(t, "irfft", core.Attrs{"n": 5, "norm": "ortho"}, miscCall(t, "rfft", core.Attrs{"norm": "ortho"}, s))
	assert.InDeltaSlice(t, []float64{0.5, -1, 2, 3, 0.25}, miscVals(t, back), 1e-12)
	require.NoError(t, miscCall(t, "sum", nil, miscCall(t, "mul", nil, back, g)).Backward())
	assert.InDeltaSlice(t, []float64{1, 2, 3, 4, 5}, miscVals(t, s.Grad()), 1e-12)
}

func TestMiscFFTErrors(t *testing.T) {
	x := miscF64(make([]float64, 6), 2, 3)
	miscErr(t, "complex pairs", "fft", nil, x)
	miscErr(t, "complex pairs", "irfft", nil, miscF64(make([]float64, 2), 2))
	miscErr(t, "at least 1, got 0", "fft", core.Attrs{"n": 0}, miscF64(make([]float64, 4), 2, 2))
	miscErr(t, "out of range", "fft", core.Attrs{"axis": 1}, miscF64(make([]float64, 4), 2, 2))
	miscErr(t, "want one of", "ifft", core.Attrs{"norm": "none"}, miscF64(make([]float64, 4), 2, 2))
	miscErr(t, "at least 1, got 0", "irfft", nil, miscF64(make([]float64, 2), 1, 2))
	miscErr(t, "dtype", "rfft", nil, miscI64([]int64{1, 2}, 2))
	miscErr(t, "scalar", "rfft", nil, miscF64([]float64{1}))
	miscErr(t, "at least 1, got 0", "rfft", nil, miscF64(nil, 0))
}
