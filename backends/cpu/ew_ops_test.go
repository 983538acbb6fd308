package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The elementwise ops through the registry, on every layout the plans
// distinguish (dense, single value, broadcast row, broadcast column,
// transposed, expanded, offset view, empty) and in f32, f16, bf16, i32 and
// i64, against the same op on float64 (or int64) copies of the inputs -
// the general path, which rounds once - and with the vector kernels off.

// ewLayout builds one operand pair of out shape [rows, cols] from values.
type ewLayout struct {
	name string
	make func(x, y *core.Tensor) (*core.Tensor, *core.Tensor)
}

func ewLayouts(rows, cols int) []ewLayout {
	view := func(t *core.Tensor, shape core.Shape, strides []int, off int) *core.Tensor {
		return core.NewView(t, shape, strides, off)
	}
	return []ewLayout{
		{"dense", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) { return x, y }},
		{"scalar", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) {
			return x, view(y, core.Shape{}, nil, min(3, rows*cols-1))
		}},
		{"scalar-first", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) {
			return view(x, core.Shape{1}, []int{1}, min(1, rows*cols-1)), y
		}},
		{"row", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) {
			return x, view(y, core.Shape{cols}, []int{1}, 0)
		}},
		{"column", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) {
			return view(y, core.Shape{rows, 1}, []int{cols, 1}, 0), x
		}},
		{"transposed", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) {
			// y's storage read as the transpose of a [cols, rows] array.
			return x, view(y, core.Shape{rows, cols}, []int{1, rows}, 0)
		}},
		{"expanded", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) {
			return view(x, core.Shape{rows, cols}, []int{0, 1}, 0), view(y, core.Shape{rows, cols}, []int{1, 0}, 0)
		}},
		{"offset", func(x, y *core.Tensor) (*core.Tensor, *core.Tensor) {
			// Misaligned for the vector kernels: x starts one element in.
			n := max(rows*cols-1, 0)
			return view(x, core.Shape{n}, []int{1}, min(1, rows*cols-1)), view(y, core.Shape{n}, []int{1}, 0)
		}},
	}
}

// ewInputs are two [rows*cols] tensors of dtype d whose values mix
// specials and random numbers.
func ewInputs(rng *rand.Rand, d core.DType, n int) (*core.Tensor, *core.Tensor) {
	mk := func() *core.Tensor {
		v := ewValues(rng, n)
		if !d.IsFloat() {
			for i := range v {
				v[i] = float32(math.Round(rng.NormFloat64() * 1000))
			}
		}
		f := make([]float64, n)
		for i, x := range v {
			f[i] = float64(x)
		}
		return core.FromFloat64s(d, core.Shape{n}, f)
	}
	return mk(), mk()
}

// ewSame compares two results element by element: bits for exact ops,
// the registry's tolerance otherwise (NaN matching NaN).
func ewSame(t *testing.T, what string, got, want *core.Tensor, exact bool) {
	t.Helper()
	require.NoError(t, got.Err(), what)
	require.NoError(t, want.Err(), what)
	require.Equal(t, want.Shape(), got.Shape(), what)
	require.Equal(t, want.DType(), got.DType(), what)
	g, err := got.Float64s()
	require.NoError(t, err)
	w, err := want.Float64s()
	require.NoError(t, err)
	tol := core.Tolerances[got.DType()]
	for i := range w {
		ok := math.Float64bits(g[i]) == math.Float64bits(w[i]) || (g[i] != g[i] && w[i] != w[i])
		if !exact && got.DType().IsFloat() {
			ok = tol.Close(g[i], w[i])
		}
		if !ok {
			t.Fatalf("%s: element %d: %v, want %v", what, i, g[i], w[i])
		}
	}
}

// reshaped views a flat tensor as [rows, cols].
func reshaped(t *core.Tensor, rows, cols int) *core.Tensor {
	return core.NewView(t, core.Shape{rows, cols}, []int{cols, 1}, 0)
}

func TestElementwiseOpsMatchTheGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	binary := []string{"add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "atan2"}
	for _, shape := range [][2]int{{3, 5}, {7, 33}, {1, 1}, {33, 1}, {9, 130}, {0, 3}} {
		rows, cols := shape[0], shape[1]
		for _, d := range []core.DType{core.F32, core.F16, core.BF16, core.I32, core.I64} {
			wide := core.F64
			if !d.IsFloat() {
				wide = core.I64
			}
			x, y := ewInputs(rng, d, rows*cols)
			x, y = reshaped(x, rows, cols), reshaped(y, rows, cols)
			for _, l := range ewLayouts(rows, cols) {
				if rows*cols == 0 && l.name != "dense" {
					continue // no element to take a single value or an offset from
				}
				a, b := l.make(x, y)
				aw, bw := core.Call1("cast", core.Attrs{"dtype": wide}, a), core.Call1("cast", core.Attrs{"dtype": wide}, b)
				for _, op := range binary {
					if (op == "div" || op == "atan2") && !d.IsFloat() {
						continue
					}
					want := core.Call1(op, nil, aw, bw)
					if want.DType() != core.Bool {
						want = core.Call1("cast", core.Attrs{"dtype": d}, want)
					}
					what := op + " " + d.String() + " " + l.name
					ewSame(t, what, core.Call1(op, nil, a, b), want, true)
					var plain *core.Tensor
					withoutSIMD(func() { plain = core.Call1(op, nil, a, b) })
					ewSame(t, what+" (Go loops)", plain, want, true)
				}
				if d.IsFloat() {
					c := core.Call1("gt", nil, a, b)
					want := core.Call1("cast", core.Attrs{"dtype": d}, core.Call1("where", nil, c, aw, bw))
					ewSame(t, "where "+d.String()+" "+l.name, core.Call1("where", nil, c, a, b), want, true)
				}
			}
		}
	}
}

func TestUnaryOpsMatchTheGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	type unary struct {
		op    string
		attrs core.Attrs
		exact bool
	}
	ops := []unary{{"neg", nil, true}, {"abs", nil, true}, {"square", nil, true}, {"relu", nil, true}, {"sqrt", nil, true},
		{"exp", nil, false}, {"log", nil, false}, {"tanh", nil, false}, {"sigmoid", nil, false}, {"silu", nil, false},
		{"gelu", nil, false}, {"gelu", core.Attrs{"approximate": "tanh"}, false}, {"erf", nil, false},
		{"sin", nil, false}, {"cos", nil, false}, {"clamp", core.Attrs{"min": -0.5, "max": 2.0}, true}}
	for _, shape := range [][2]int{{3, 5}, {7, 33}, {1, 1}, {9, 130}, {0, 4}} {
		rows, cols := shape[0], shape[1]
		for _, d := range []core.DType{core.F32, core.F16, core.BF16} {
			x, _ := ewInputs(rng, d, rows*cols)
			x = reshaped(x, rows, cols)
			layouts := map[string]*core.Tensor{"dense": x}
			if rows > 0 {
				layouts["transposed"] = core.NewView(x, core.Shape{cols, rows}, []int{1, cols}, 0)
				layouts["expanded"] = core.NewView(x, core.Shape{rows, cols}, []int{0, 1}, 0)
			}
			for name, in := range layouts {
				w := core.Call1("cast", core.Attrs{"dtype": core.F64}, in)
				for _, u := range ops {
					want := core.Call1("cast", core.Attrs{"dtype": d}, core.Call1(u.op, u.attrs, w))
					what := u.op + " " + d.String() + " " + name
					ewSame(t, what, core.Call1(u.op, u.attrs, in), want, u.exact)
					var plain *core.Tensor
					withoutSIMD(func() { plain = core.Call1(u.op, u.attrs, in) })
					ewSame(t, what+" (Go loops)", plain, want, true)
				}
			}
		}
	}
}

func TestCastsMatchTheGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	pairs := [][2]core.DType{{core.F32, core.F16}, {core.F32, core.BF16}, {core.F32, core.I32}, {core.F16, core.F32}, {core.BF16, core.F32}, {core.I32, core.F32}, {core.I8, core.F32}}
	for _, n := range []int{0, 1, 7, 17, 1000, 1 << 16} {
		for _, p := range pairs {
			x, _ := ewInputs(rng, p[0], n)
			if p[0] == core.I32 {
				v := make([]int32, n)
				for i := range v {
					v[i] = int32(rng.Uint32())
				}
				x = core.FromSlice(v, core.Shape{n})
			}
			if p[0] == core.I8 {
				v := make([]int8, n)
				for i := range v {
					v[i] = int8(rng.Uint32())
				}
				x = core.FromSlice(v, core.Shape{n})
			}
			want := core.FromFloat64s(p[1], core.Shape{n}, mustF64(t, x))
			if p[1] == core.I32 || p[0] == core.I32 || p[0] == core.I8 {
				want = core.Call1("cast", core.Attrs{"dtype": p[1]}, core.Call1("cast", core.Attrs{"dtype": core.F64}, x))
			}
			ewSame(t, p[0].String()+"->"+p[1].String(), core.Call1("cast", core.Attrs{"dtype": p[1]}, x), want, true)
		}
	}
}

func mustF64(t *testing.T, x *core.Tensor) []float64 {
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

// gelu's backward runs as a binary vector kernel (the incoming gradient
// times the slope): within the registry's tolerance of the float64 path.
func TestGeluBackwardMatchesTheGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{1, 17, 1000} {
		for _, d := range []core.DType{core.F32, core.F16, core.BF16} {
			// x has every special value; g is finite (an infinite gradient
			// times a slope that underflows in float32 only is NaN here and
			// ±inf in float64, see closeGeluGrad).
			_, x := ewInputs(rng, d, n)
			gv := make([]float64, n)
			for i := range gv {
				gv[i] = rng.NormFloat64()
			}
			g := core.FromFloat64s(d, core.Shape{n}, gv)
			for _, approx := range []string{"none", "tanh"} {
				a := core.Attrs{"approximate": approx}
				f64 := core.Attrs{"dtype": core.F64}
				want := core.Call1("cast", core.Attrs{"dtype": d},
					core.Call1("_gelu_backward", a, core.Call1("cast", f64, g), core.Call1("cast", f64, x)))
				ewSame(t, "gelu backward "+approx+" "+d.String(), core.Call1("_gelu_backward", a, g, x), want, false)
			}
		}
	}
}
