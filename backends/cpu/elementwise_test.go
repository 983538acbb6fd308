package cpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// Focused tests of the elementwise family: hand-computed values at the
// conventions that differ between libraries (rounding, division signs, NaN),
// gradients at ties and singular points, and errors. The shared suite
// covers every sample against PyTorch.

var ewNaN, ewInf = math.NaN(), math.Inf(1)

// ewRun calls op and returns its output values; the op must succeed.
func ewRun(t *testing.T, op string, attrs core.Attrs, in ...*core.Tensor) (*core.Tensor, []float64) {
	t.Helper()
	out := core.Call1(op, attrs, in...)
	require.NoError(t, out.Err(), op)
	v, err := out.Float64s()
	require.NoError(t, err)
	return out, v
}

func ewF64(vals ...float64) *core.Tensor {
	return core.FromSlice(vals, core.Shape{len(vals)})
}

func ewF32(vals ...float32) *core.Tensor {
	return core.FromSlice(vals, core.Shape{len(vals)})
}

// assertSameFloats compares element by element, NaN matching NaN and zeros
// matching by sign.
func assertSameFloats(t *testing.T, want, got []float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		switch {
		case math.IsNaN(want[i]):
			assert.True(t, math.IsNaN(got[i]), "%s[%d]: got %v, want NaN", what, i, got[i])
		case want[i] == 0:
			assert.True(t, got[i] == 0 && math.Signbit(got[i]) == math.Signbit(want[i]),
				"%s[%d]: got %v, want %v (sign of zero matters)", what, i, got[i], want[i])
		default:
			assert.InDelta(t, want[i], got[i], 1e-12*math.Max(1, math.Abs(want[i])), "%s[%d]", what, i)
		}
	}
}

func TestRoundHalvesToEven(t *testing.T) {
	_, v := ewRun(t, "round", nil, ewF64(0.5, 1.5, 2.5, -0.5, -2.5, 2.4999, -7.6))
	assertSameFloats(t, []float64{0, 2, 2, math.Copysign(0, -1), -2, 2, -8}, v, "round")
}

func TestFloorDivideAndRemainderFollowPythonSigns(t *testing.T) {
	a, b := ewF64(5, -5, 5, -5, 0, -5, 7.5), ewF64(3, 3, -3, -3, 2, ewInf, 2)
	_, q := ewRun(t, "floor_divide", nil, a, b)
	assertSameFloats(t, []float64{1, -2, -2, 1, 0, -1, 3}, q, "floor_divide f64")
	_, r := ewRun(t, "remainder", nil, a, b)
	assertSameFloats(t, []float64{2, 1, -1, -2, 0, ewInf, 1.5}, r, "remainder f64")

	ai := core.FromSlice([]int32{5, -5, 5, -5, 7}, core.Shape{5})
	bi := core.FromSlice([]int32{3, 3, -3, -3, 7}, core.Shape{5})
	qo, q := ewRun(t, "floor_divide", nil, ai, bi)
	assert.Equal(t, core.I32, qo.DType())
	assert.Equal(t, []float64{1, -2, -2, 1, 1}, q)
	_, r = ewRun(t, "remainder", nil, ai, bi)
	assert.Equal(t, []float64{2, 1, -1, -2, 0}, r)
}

func TestFloatDivisionByZeroGivesInfinities(t *testing.T) {
	_, q := ewRun(t, "floor_divide", nil, ewF64(1, -1, 0), ewF64(0))
	assertSameFloats(t, []float64{ewInf, -ewInf, ewNaN}, q, "floor_divide by 0")
	_, r := ewRun(t, "remainder", nil, ewF64(1, -1), ewF64(0))
	assertSameFloats(t, []float64{ewNaN, ewNaN}, r, "remainder by 0")
}

// One rule for integer division (issue 26, item 10): x // 0, x % 0 and
// 0 ** -n (which is 1 / 0^n; it used to give 0) are errors.
func TestIntegerDivisionByZeroIsAnError(t *testing.T) {
	for _, op := range []string{"floor_divide", "remainder"} {
		a := core.FromSlice([]int64{1, 2, 3}, core.Shape{3})
		b := core.FromSlice([]int64{1, 0, 2}, core.Shape{3})
		out := core.Call1(op, nil, a, b)
		require.Error(t, out.Err(), op)
		assert.Contains(t, out.Err().Error(), op+": integer division by zero")
	}
	// Broadcast: the zero base meets the negative exponent only in the
	// second row.
	a := core.FromSlice([]int32{2, 0}, core.Shape{2, 1})
	b := core.FromSlice([]int32{3, -1}, core.Shape{2})
	out := core.Call1("pow", nil, a, b)
	require.Error(t, out.Err())
	assert.Contains(t, out.Err().Error(), "pow: integer division by zero")
	v, err := core.Call1("pow", nil, core.FromSlice([]int32{2, 0}, core.Shape{2, 1}), core.FromSlice([]int32{3, 1}, core.Shape{2})).Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{8, 2, 0, 0}, v, "no negative exponent with a zero base")
}

func TestIntegerPowIsExact(t *testing.T) {
	a := core.FromSlice([]int64{2, -2, 3, 1, -1, -1, 0, 3}, core.Shape{8})
	b := core.FromSlice([]int64{62, 3, -1, -5, -3, -4, 1, 0}, core.Shape{8})
	out, v := ewRun(t, "pow", nil, a, b)
	assert.Equal(t, core.I64, out.DType())
	got, err := out.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{1 << 62, -8, 0, 1, -1, 1, 0, 1}, got, "values %v", v)
}

func TestExtremaPropagateNaNAndKeepZeroSigns(t *testing.T) {
	negZero := math.Copysign(0, -1)
	a, b := ewF64(ewNaN, 1, 2, negZero, 0), ewF64(1, ewNaN, 3, 0, negZero)
	_, mx := ewRun(t, "maximum", nil, a, b)
	assertSameFloats(t, []float64{ewNaN, ewNaN, 3, negZero, 0}, mx, "maximum")
	_, mn := ewRun(t, "minimum", nil, a, b)
	assertSameFloats(t, []float64{ewNaN, ewNaN, 2, negZero, 0}, mn, "minimum")
	// the float32 fast path agrees
	_, mx32 := ewRun(t, "maximum", nil, ewF32(float32(ewNaN), 1, 2), ewF32(1, float32(ewNaN), 3))
	assertSameFloats(t, []float64{ewNaN, ewNaN, 3}, mx32, "maximum f32")
}

func TestSignReluAndAbsEdgeValues(t *testing.T) {
	negZero := math.Copysign(0, -1)
	_, s := ewRun(t, "sign", nil, ewF32(float32(ewNaN), float32(negZero), -3, 2))
	assertSameFloats(t, []float64{0, 0, -1, 1}, s, "sign")
	_, r := ewRun(t, "relu", nil, ewF32(float32(ewNaN), float32(negZero), -3, 2))
	assertSameFloats(t, []float64{ewNaN, negZero, 0, 2}, r, "relu")
	_, ab := ewRun(t, "abs", nil, ewF32(float32(negZero), -3))
	assertSameFloats(t, []float64{0, 3}, ab, "abs")
	ri, rv := ewRun(t, "relu", nil, core.FromSlice([]int32{-4, 0, 9}, core.Shape{3}))
	assert.Equal(t, core.I32, ri.DType())
	assert.Equal(t, []float64{0, 0, 9}, rv)
}

func TestIntegerWrapAround(t *testing.T) {
	n, v := ewRun(t, "neg", nil, core.FromSlice([]uint8{1, 0, 200}, core.Shape{3}))
	assert.Equal(t, core.U8, n.DType())
	assert.Equal(t, []float64{255, 0, 56}, v)
	_, v = ewRun(t, "abs", nil, core.FromSlice([]int8{-128, -5, 7}, core.Shape{3}))
	assert.Equal(t, []float64{-128, 5, 7}, v)
	_, v = ewRun(t, "square", nil, core.FromSlice([]uint8{20, 3}, core.Shape{2}))
	assert.Equal(t, []float64{144, 9}, v)
}

func TestTranscendentalOpsPromoteIntegersToF32(t *testing.T) {
	in := core.FromSlice([]int32{0, 1, 2}, core.Shape{3})
	for _, op := range []string{"exp", "log", "sqrt", "sigmoid", "erf", "reciprocal"} {
		out := core.Call1(op, nil, in)
		require.NoError(t, out.Err(), op)
		assert.Equal(t, core.F32, out.DType(), op)
	}
	_, v := ewRun(t, "exp", nil, in)
	assert.InDeltaSlice(t, []float64{1, math.E, math.Exp(2)}, v, 1e-6)
	b, v := ewRun(t, "sqrt", nil, core.FromSlice([]bool{true, false}, core.Shape{2}))
	assert.Equal(t, core.F32, b.DType())
	assert.Equal(t, []float64{1, 0}, v)
}

func TestActivationValues(t *testing.T) {
	x := ewF64(1, -1, 0)
	_, v := ewRun(t, "gelu", nil, x)
	assert.InDeltaSlice(t, []float64{0.8413447460685429, -0.15865525393145707, 0}, v, 1e-15)
	_, v = ewRun(t, "gelu", core.Attrs{"approximate": "tanh"}, x)
	assert.InDeltaSlice(t, []float64{0.8411919906082768, -0.15880800939172324, 0}, v, 1e-15)
	_, v = ewRun(t, "silu", nil, x)
	assert.InDeltaSlice(t, []float64{1 / (1 + math.Exp(-1)), -1 / (1 + math.E), 0}, v, 1e-15)
	_, v = ewRun(t, "leaky_relu", core.Attrs{"negative_slope": 0.2}, x)
	assert.InDeltaSlice(t, []float64{1, -0.2, 0}, v, 1e-15)
	_, v = ewRun(t, "elu", core.Attrs{"alpha": 2}, x)
	assert.InDeltaSlice(t, []float64{1, 2 * (math.Exp(-1) - 1), 0}, v, 1e-15)
	// above the threshold softplus is the identity
	_, v = ewRun(t, "softplus", core.Attrs{"beta": 2, "threshold": 3}, ewF64(2, 1, -30))
	assert.InDeltaSlice(t, []float64{2, math.Log1p(math.Exp(2)) / 2, math.Exp(-60) / 2}, v, 1e-15)
}

func TestClampBounds(t *testing.T) {
	_, v := ewRun(t, "clamp", core.Attrs{"min": -1, "max": 2}, ewF64(-3, 0.5, 5, ewNaN))
	assertSameFloats(t, []float64{-1, 0.5, 2, ewNaN}, v, "clamp")
	_, v = ewRun(t, "clamp", core.Attrs{"min": 1, "max": -1}, ewF32(-3, 0, 5))
	assertSameFloats(t, []float64{-1, -1, -1}, v, "clamp min > max")
	_, v = ewRun(t, "clamp", core.Attrs{"max": 0}, ewF32(-3, 5))
	assertSameFloats(t, []float64{-3, 0}, v, "clamp max only")
	out, v := ewRun(t, "clamp", core.Attrs{"min": -2.5, "max": 3.5},
		core.FromSlice([]int64{-9, -2, 0, 3, 9}, core.Shape{5}))
	assert.Equal(t, core.I64, out.DType())
	assert.Equal(t, []float64{-2, -2, 0, 3, 3}, v, "integer bounds round inward")
}

func TestNanToNumDefaultsFollowTheDType(t *testing.T) {
	special := []float64{ewNaN, ewInf, -ewInf, 1.5}
	cases := []struct {
		d   core.DType
		max float64
	}{{core.F32, math.MaxFloat32}, {core.F16, 65504}, {core.BF16, 3.3895313892515355e38}, {core.F64, math.MaxFloat64}}
	for _, c := range cases {
		_, v := ewRun(t, "nan_to_num", nil, core.FromFloat64s(c.d, core.Shape{4}, special))
		assert.Equal(t, []float64{0, c.max, -c.max, 1.5}, v, "%s", c.d)
	}
	_, v := ewRun(t, "nan_to_num", core.Attrs{"nan": -1, "posinf": 9}, core.FromFloat64s(core.F32, core.Shape{4}, special))
	assert.Equal(t, []float64{-1, 9, -math.MaxFloat32, 1.5}, v)
}

func TestValueTestsGiveBool(t *testing.T) {
	x := ewF32(float32(ewNaN), float32(ewInf), 0, -2)
	for op, want := range map[string][]float64{
		"isnan": {1, 0, 0, 0}, "isinf": {0, 1, 0, 0}, "logical_not": {0, 0, 1, 0},
	} {
		out, v := ewRun(t, op, nil, x)
		assert.Equal(t, core.Bool, out.DType(), op)
		assert.Equal(t, want, v, op)
	}
	_, v := ewRun(t, "isnan", nil, core.FromSlice([]int32{1, 0}, core.Shape{2}))
	assert.Equal(t, []float64{0, 0}, v)
}

func TestComparisonsAreExactForLargeIntegers(t *testing.T) {
	big := int64(1) << 53
	a := core.FromSlice([]int64{big + 1, big, -3}, core.Shape{3})
	b := core.FromSlice([]int64{big, big, -3}, core.Shape{3})
	want := map[string][]float64{
		"eq": {0, 1, 1}, "ne": {1, 0, 0}, "lt": {0, 0, 0}, "le": {0, 1, 1}, "gt": {1, 0, 0}, "ge": {1, 1, 1},
	}
	for op, w := range want {
		out, v := ewRun(t, op, nil, a, b)
		assert.Equal(t, core.Bool, out.DType(), op)
		assert.Equal(t, w, v, op)
	}
	_, v := ewRun(t, "ne", nil, ewF32(float32(ewNaN), 1), ewF32(float32(ewNaN), 1))
	assert.Equal(t, []float64{1, 0}, v, "NaN is unequal to itself")
}

func TestLogicalOpsTakeAnyDTypes(t *testing.T) {
	a := ewF32(float32(ewNaN), 0, 0.5, 0)
	b := core.FromSlice([]int32{1, 1, 0, 0}, core.Shape{4})
	for op, want := range map[string][]float64{
		"logical_and": {1, 0, 0, 0}, "logical_or": {1, 1, 1, 0}, "logical_xor": {0, 1, 1, 0},
	} {
		out, v := ewRun(t, op, nil, a, b)
		assert.Equal(t, core.Bool, out.DType(), op)
		assert.Equal(t, want, v, op)
	}
	column := core.FromSlice([]bool{true, false}, core.Shape{2, 1})
	row := core.FromSlice([]bool{false, false, true}, core.Shape{3})
	_, v := ewRun(t, "logical_or", nil, column, row)
	assert.Equal(t, []float64{1, 1, 1, 0, 0, 1}, v, "broadcast")
}

func TestWhereBroadcastsAndPromotes(t *testing.T) {
	cond := core.FromSlice([]bool{true, false}, core.Shape{2, 1})
	a := core.FromSlice([]float32{1, 2, 3}, core.Shape{3})
	b := core.FromSlice([]int32{-7}, core.Shape{})
	out, v := ewRun(t, "where", nil, cond, a, b)
	assert.Equal(t, core.F32, out.DType())
	assert.Equal(t, core.Shape{2, 3}, out.Shape())
	assert.Equal(t, []float64{1, 2, 3, -7, -7, -7}, v)

	ints, v := ewRun(t, "where", nil, core.FromSlice([]bool{true, false}, core.Shape{2}),
		core.FromSlice([]int64{1 << 60, 1}, core.Shape{2}), core.FromSlice([]uint8{200, 200}, core.Shape{2}))
	assert.Equal(t, core.I64, ints.DType())
	got, err := ints.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{1 << 60, 200}, got, "values %v", v)
}

func TestWhereGradientGoesToTheChosenInput(t *testing.T) {
	cond := core.FromSlice([]bool{true, false, true}, core.Shape{3})
	a := core.FromSlice([]float64{1, 2, 3}, core.Shape{3}).SetRequiresGrad(true)
	b := core.FromSlice([]float64{10}, core.Shape{1}).SetRequiresGrad(true)
	up := ewF64(1, 2, 4)
	loss := core.Call1("sum", nil, core.Call1("mul", nil, core.Call1("where", nil, cond, a, b), up))
	require.NoError(t, loss.Backward())
	ga, _ := a.Grad().Float64s()
	gb, _ := b.Grad().Float64s()
	assert.Equal(t, []float64{1, 0, 4}, ga)
	assert.Equal(t, []float64{2}, gb)
}

// ewGrads runs op on f64 leaves and returns d sum(op(...)) / d input.
func ewGrads(t *testing.T, op string, attrs core.Attrs, in ...[]float64) [][]float64 {
	t.Helper()
	leaves := make([]*core.Tensor, len(in))
	for i, v := range in {
		leaves[i] = ewF64(v...).SetRequiresGrad(true)
	}
	out := core.Call1("sum", nil, core.Call1(op, attrs, leaves...))
	require.NoError(t, out.Err())
	require.NoError(t, out.Backward())
	res := make([][]float64, len(in))
	for i, l := range leaves {
		require.NotNil(t, l.Grad(), "input %d got no gradient", i)
		var err error
		res[i], err = l.Grad().Float64s()
		require.NoError(t, err)
	}
	return res
}

func TestExtremumGradientsSplitTies(t *testing.T) {
	g := ewGrads(t, "maximum", nil, []float64{1, 5, 3}, []float64{2, 4, 3})
	assert.Equal(t, []float64{0, 1, 0.5}, g[0])
	assert.Equal(t, []float64{1, 0, 0.5}, g[1])
	g = ewGrads(t, "minimum", nil, []float64{1, 5, 3}, []float64{2, 4, 3})
	assert.Equal(t, []float64{1, 0, 0.5}, g[0])
	assert.Equal(t, []float64{0, 1, 0.5}, g[1])
}

func TestPowGradientHasNoNaNAtZero(t *testing.T) {
	g := ewGrads(t, "pow", nil, []float64{0, 2, 0, 3}, []float64{2, 0, 0, 2})
	assert.Equal(t, []float64{0, 0, 0, 6}, g[0], "d/da: b*a^(b-1), 0 where b = 0")
	assertSameFloats(t, []float64{0, math.Ln2, 0, 9 * math.Log(3)}, g[1], "d/db: a^b*ln a, 0 where a = 0")
}

func TestPiecewiseGradients(t *testing.T) {
	x := []float64{-2, -0.5, 0.5, 3}
	assert.Equal(t, []float64{0, 0, 1, 1}, ewGrads(t, "relu", nil, x)[0])
	assert.Equal(t, []float64{0.1, 0.1, 1, 1}, ewGrads(t, "leaky_relu", core.Attrs{"negative_slope": 0.1}, x)[0])
	assert.Equal(t, []float64{0, 1, 1, 0}, ewGrads(t, "clamp", core.Attrs{"min": -1, "max": 1}, x)[0])
	assert.Equal(t, []float64{0, 0, 0, 0}, ewGrads(t, "round", nil, x)[0])
	assert.Equal(t, []float64{-1, -1, 1, 1}, ewGrads(t, "abs", nil, x)[0])
	assert.Equal(t, []float64{0, 1, 1}, ewGrads(t, "nan_to_num", nil, []float64{ewInf, 2, -1})[0])
	g := ewGrads(t, "remainder", nil, []float64{7, -7}, []float64{2, 2})
	assert.Equal(t, []float64{1, 1}, g[0])
	assert.Equal(t, []float64{-3, 4}, g[1], "d/db = -floor(a/b)")
}

func TestSmoothGradientsMatchFormulas(t *testing.T) {
	x := []float64{-1.5, -0.2, 0.7, 2}
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	cases := map[string]func(v float64) float64{
		"sigmoid": func(v float64) float64 { return sig(v) * (1 - sig(v)) },
		"tanh":    func(v float64) float64 { return 1 - math.Tanh(v)*math.Tanh(v) },
		"silu":    func(v float64) float64 { return sig(v) * (1 + v*(1-sig(v))) },
		"gelu": func(v float64) float64 {
			return 0.5*(1+math.Erf(v/math.Sqrt2)) + v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi)
		},
		"erf":      func(v float64) float64 { return 2 / math.SqrtPi * math.Exp(-v*v) },
		"softplus": sig,
		"elu": func(v float64) float64 {
			if v > 0 {
				return 1
			}
			return math.Exp(v)
		},
	}
	for op, d := range cases {
		g := ewGrads(t, op, nil, x)[0]
		for i, v := range x {
			assert.InDelta(t, d(v), g[i], 1e-12, "%s'(%v)", op, v)
		}
	}
}

// ewULPs is the distance between two float32 values in units in the last
// place (0 for equal values and for two NaNs).
func TestFloat32FastPathMatchesGenericPath(t *testing.T) {
	// A large dense input takes the parallel float32 path; the same values
	// as a strided view take the generic float64 path.
	const rows, cols = 300, 257
	vals := make([]float32, rows*cols)
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i))*6) + 0.001
	}
	dense := core.FromSlice(vals, core.Shape{cols, rows})
	strided := core.Call1("transpose", nil, core.Call1("contiguous", nil, core.Call1("transpose", nil, dense)))
	require.NoError(t, strided.Err())
	require.False(t, strided.IsContiguous())
	ops := []struct {
		op    string
		attrs core.Attrs
	}{
		{"relu", nil}, {"abs", nil}, {"neg", nil}, {"square", nil}, {"exp", nil}, {"tanh", nil},
		{"sigmoid", nil}, {"silu", nil}, {"elu", nil}, {"softplus", nil}, {"gelu", nil},
		{"gelu", core.Attrs{"approximate": "tanh"}}, {"clamp", core.Attrs{"min": -1.5, "max": 2.5}},
	}
	for _, c := range ops {
		op, attrs := c.op, c.attrs
		a, err := core.Call1(op, attrs, dense).Float32s()
		require.NoError(t, err, op)
		b, err := core.Call1(op, attrs, strided).Float32s()
		require.NoError(t, err, op)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Errorf("%s: element %d is %v on the fast path, %v on the generic path", op, i, a[i], b[i])
				break
			}
		}
	}
}

func TestElementwiseErrors(t *testing.T) {
	f := ewF32(1, 2, 3)
	i := core.FromSlice([]int32{1, 2, 3}, core.Shape{3})
	bools := core.FromSlice([]bool{true, false, true}, core.Shape{3})
	cases := []struct {
		name, op, want string
		attrs          core.Attrs
		in             []*core.Tensor
	}{
		{"incompatible shapes", "maximum", "cannot be broadcast", nil, []*core.Tensor{f, ewF32(1, 2)}},
		{"float-only activation", "gelu", "has dtype i32", nil, []*core.Tensor{i}},
		{"bool arithmetic", "neg", "has dtype bool", nil, []*core.Tensor{bools}},
		{"bool floor_divide", "floor_divide", "has dtype bool", nil, []*core.Tensor{bools, bools}},
		{"non-bool condition", "where", "has dtype i32", nil, []*core.Tensor{i, f, f}},
		{"where shapes", "where", "cannot be broadcast", nil, []*core.Tensor{bools, f, ewF32(1, 2)}},
		{"unknown gelu form", "gelu", "want one of [none tanh]", core.Attrs{"approximate": "erf"}, []*core.Tensor{f}},
		{"clamp without bounds", "clamp", "at least one of min and max", nil, []*core.Tensor{f}},
		{"NaN bound on integers", "clamp", "min is NaN", core.Attrs{"min": math.NaN()}, []*core.Tensor{i}},
		{"unknown attribute", "leaky_relu", "unknown attribute", core.Attrs{"slope": 0.1}, []*core.Tensor{f}},
		{"missing input", "atan2", "takes 2 input(s)", nil, []*core.Tensor{f}},
		{"gelu backward shapes", "_gelu_backward", "grad shape [3] differs from x shape [2]", nil, []*core.Tensor{f, ewF32(1, 2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out *core.Tensor
			require.NotPanics(t, func() { out = core.Call1(c.op, c.attrs, c.in...) })
			require.Error(t, out.Err())
			assert.Contains(t, out.Err().Error(), c.op+": ")
			assert.Contains(t, out.Err().Error(), c.want)
		})
	}
}
