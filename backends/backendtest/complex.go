package backendtest

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// RunComplex checks complex64 (and complex128 where the device stores f64)
// arithmetic on dev against Go's math/cmplx, elementwise in complex128: the
// complex forms of the registry ops, the complex category's own ops, the
// reductions, matmul and the layout ops, and gradients against finite
// differences.
func RunComplex(t *testing.T, dev core.Device) {
	b, err := core.BackendFor(dev)
	if err != nil {
		t.Fatalf("open %v: %v", dev, err)
	}
	for _, d := range core.ComplexDTypes {
		if !slices.Contains(b.Capabilities().DTypes, d) {
			continue
		}
		t.Run(d.String(), func(t *testing.T) {
			runComplexUnary(t, dev, d)
			runComplexSpecial(t, dev, d)
			runComplexBinary(t, dev, d)
			runComplexStructure(t, dev, d)
		})
	}
	t.Run("grad", func(t *testing.T) { runComplexGrad(t, dev) })
}

// complexValues are test points: both signs, both axes, small and large.
var complexValues = []complex128{0.5 + 0.25i, -1.5 + 0.75i, 0.3 - 2i, -0.7 - 0.4i, 2 + 0i, 0 - 1.25i, 1e-3 + 2e-3i, 3.5 - 1.5i}

func complexTensor(t *testing.T, dev core.Device, d core.DType, vals []complex128, shape core.Shape) *core.Tensor {
	t.Helper()
	pairs := make([]float64, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, real(v), imag(v))
	}
	x := core.FromFloat64s(d.RealDType(), append(shape.Clone(), 2), pairs, dev).ViewAsComplex()
	if err := x.Err(); err != nil {
		t.Fatalf("make %v tensor: %v", d, err)
	}
	return x
}

func complexResult(t *testing.T, what string, z *core.Tensor) []complex128 {
	t.Helper()
	if err := z.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !z.DType().IsComplex() {
		t.Fatalf("%s: dtype %v, want a complex dtype", what, z.DType())
	}
	p, err := z.ViewAsReal().Float64s()
	if err != nil {
		t.Fatalf("%s: read back: %v", what, err)
	}
	out := make([]complex128, len(p)/2)
	for i := range out {
		out[i] = complex(p[2*i], p[2*i+1])
	}
	return out
}

// complexTol is the relative tolerance of d's arithmetic after a few ops.
func complexTol(d core.DType) float64 {
	if d == core.C128 {
		return 1e-12
	}
	return 2e-5
}

func closeComplex(got, want complex128, tol float64) bool {
	if cmplx.IsNaN(want) {
		return cmplx.IsNaN(got)
	}
	return cmplx.Abs(got-want) <= tol*max(1, cmplx.Abs(want))
}

func expectComplex(t *testing.T, what string, got, want []complex128, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !closeComplex(got[i], want[i], tol) {
			t.Errorf("%s[%d] = %v, want %v (tolerance %g)", what, i, got[i], want[i], tol)
		}
	}
}

func runComplexUnary(t *testing.T, dev core.Device, d core.DType) {
	ops := []struct {
		name string
		f    func(complex128) complex128
	}{
		{"neg", func(z complex128) complex128 { return -z }},
		{"exp", cmplx.Exp}, {"log", cmplx.Log}, {"sqrt", cmplx.Sqrt},
		{"sin", cmplx.Sin}, {"cos", cmplx.Cos}, {"tan", cmplx.Tan},
		{"sinh", cmplx.Sinh}, {"cosh", cmplx.Cosh}, {"tanh", cmplx.Tanh},
		{"asin", cmplx.Asin}, {"acos", cmplx.Acos},
		// C99 and NumPy define atan z = -i atanh(iz), which puts the cut's
		// values at 0 - 1.25i on the other side than Go's cmplx.Atan does.
		{"atan", func(z complex128) complex128 { return -1i * cmplx.Atanh(1i*z) }},
		{"asinh", cmplx.Asinh}, {"acosh", cmplx.Acosh}, {"atanh", cmplx.Atanh},
		{"square", func(z complex128) complex128 { return z * z }},
		{"reciprocal", func(z complex128) complex128 { return 1 / z }},
		{"rsqrt", func(z complex128) complex128 { return 1 / cmplx.Sqrt(z) }},
		{"expm1", func(z complex128) complex128 { return cmplx.Exp(z) - 1 }},
		{"log1p", func(z complex128) complex128 { return cmplx.Log(1 + z) }},
		{"log2", func(z complex128) complex128 { return cmplx.Log(z) / math.Ln2 }},
		{"log10", cmplx.Log10},
		{"sign", func(z complex128) complex128 { return z / complex(cmplx.Abs(z), 0) }},
		{"conj", cmplx.Conj},
	}
	x := complexTensor(t, dev, d, complexValues, core.Shape{2, 4})
	for _, op := range ops {
		got := complexResult(t, op.name, core.Call1(op.name, nil, x))
		want := make([]complex128, len(complexValues))
		for i, z := range complexValues {
			want[i] = op.f(z)
		}
		expectComplex(t, fmt.Sprintf("%s(%v)", op.name, d), got, want, complexTol(d))
	}
	for _, op := range []struct {
		name string
		f    func(complex128) float64
	}{{"abs", cmplx.Abs}, {"angle", cmplx.Phase}, {"real", func(z complex128) float64 { return real(z) }},
		{"imag", func(z complex128) float64 { return imag(z) }}} {
		r := core.Call1(op.name, nil, x)
		got, err := r.Float64s()
		if err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		if r.DType() != d.RealDType() {
			t.Errorf("%s(%v) has dtype %v, want %v", op.name, d, r.DType(), d.RealDType())
		}
		for i, z := range complexValues {
			if want := op.f(z); math.Abs(got[i]-want) > complexTol(d)*max(1, math.Abs(want)) {
				t.Errorf("%s(%v)[%d] = %v, want %v", op.name, d, i, got[i], want)
			}
		}
	}
}

func runComplexBinary(t *testing.T, dev core.Device, d core.DType) {
	x := complexTensor(t, dev, d, complexValues, core.Shape{2, 4})
	rev := slices.Clone(complexValues)
	slices.Reverse(rev)
	y := complexTensor(t, dev, d, rev, core.Shape{2, 4})
	for _, op := range []struct {
		name string
		f    func(a, b complex128) complex128
	}{
		{"add", func(a, b complex128) complex128 { return a + b }},
		{"sub", func(a, b complex128) complex128 { return a - b }},
		{"mul", func(a, b complex128) complex128 { return a * b }},
		{"div", func(a, b complex128) complex128 { return a / b }},
		{"pow", cmplx.Pow},
	} {
		got := complexResult(t, op.name, core.Call1(op.name, nil, x, y))
		want := make([]complex128, len(complexValues))
		for i := range want {
			want[i] = op.f(complexValues[i], rev[i])
		}
		expectComplex(t, fmt.Sprintf("%s(%v)", op.name, d), got, want, complexTol(d))
	}
	// A real operand joins as a complex one with zero imaginary part, and
	// broadcasts: x * [2, -1, 0.5, 3].
	r := core.FromFloat64s(core.F32, core.Shape{4}, []float64{2, -1, 0.5, 3}, dev)
	got := complexResult(t, "mul by real", core.Call1("mul", nil, x, r))
	want := make([]complex128, len(complexValues))
	for i, z := range complexValues {
		want[i] = z * complex([]float64{2, -1, 0.5, 3}[i%4], 0)
	}
	expectComplex(t, "mul by a real f32 row", got, want, complexTol(d))
	eq := core.Call1("eq", nil, x, x.Conj())
	bs, err := eq.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	for i, z := range complexValues {
		if (bs[i] == 1) != (imag(z) == 0) {
			t.Errorf("eq(x, conj(x))[%d] = %v for %v", i, bs[i], z)
		}
	}
}

func runComplexStructure(t *testing.T, dev core.Device, d core.DType) {
	x := complexTensor(t, dev, d, complexValues, core.Shape{2, 4})
	tol := complexTol(d)
	sum := complexResult(t, "sum", core.Call1("sum", core.Attrs{"axes": []int{-1}}, x))
	want := []complex128{0, 0}
	for i, z := range complexValues {
		want[i/4] += z
	}
	expectComplex(t, "sum over the last axis", sum, want, tol)
	mean := complexResult(t, "mean", core.Call1("mean", nil, x))
	expectComplex(t, "mean", mean, []complex128{(want[0] + want[1]) / 8}, tol)
	// [2,4] @ [4,2] with the transpose's conjugate: the Gram matrix x x^H.
	xh := x.Transpose(core.Attrs{"dim0": 0, "dim1": 1}).Conj()
	gram := complexResult(t, "matmul", core.Call1("matmul", nil, x, xh))
	var g [4]complex128
	for i := range 2 {
		for j := range 2 {
			for k := range 4 {
				g[2*i+j] += complexValues[4*i+k] * cmplx.Conj(complexValues[4*j+k])
			}
		}
	}
	expectComplex(t, "x @ x^H", gram, g[:], tol)
	// Layout ops move whole complex elements, bit for bit.
	xv := complexResult(t, "x", x)
	tr := complexResult(t, "transpose+contiguous", xh.Conj().Contiguous())
	expectComplex(t, "transpose", tr, []complex128{xv[0], xv[4], xv[1], xv[5], xv[2], xv[6], xv[3], xv[7]}, 0)
	cat := complexResult(t, "concat", core.Concat([]*core.Tensor{x, x}, core.Attrs{"axis": -1}))
	if len(cat) != 16 || cat[4] != xv[0] || cat[8] != xv[4] {
		t.Errorf("concat along the last axis: %v", cat)
	}
	fl := complexResult(t, "flip", core.Call1("flip", core.Attrs{"axes": []int{-1}}, x))
	if fl[0] != xv[3] || fl[7] != xv[4] {
		t.Errorf("flip: %v", fl)
	}
	rl := complexResult(t, "roll", core.Call1("roll", core.Attrs{"shifts": []int{1}}, x))
	if rl[0] != xv[7] || rl[1] != xv[0] {
		t.Errorf("roll of the flattened tensor: %v", rl)
	}
	w := complexResult(t, "where", core.Call1("where", nil, core.FromSlice([]bool{true, false, false, true}, core.Shape{4}, dev), x, x.Conj()))
	if w[0] != xv[0] || w[1] != cmplx.Conj(xv[1]) || w[7] != xv[7] {
		t.Errorf("where: %v", w)
	}
	z := complexResult(t, "zeros", core.Call1("zeros", core.Attrs{"shape": []int{3}, "dtype": d, "device": dev.String()}))
	expectComplex(t, "zeros", z, []complex128{0, 0, 0}, 0)
	c := core.FromFloat64s(core.F32, core.Shape{2}, []float64{1.5, -2}, dev).Cast(d)
	expectComplex(t, "cast f32 to complex", complexResult(t, "cast", c), []complex128{1.5, -2}, 0)
	if err := x.Cast(core.F32).Err(); err == nil {
		t.Errorf("casting %v to f32 succeeded; it must refuse (the imaginary part would be lost)", d)
	}
	// The transforms take a complex tensor as itself: fft(z) is a DFT.
	ft := complexResult(t, "fft", core.Call1("fft", nil, x))
	var dft [8]complex128
	for r := range 2 {
		for k := range 4 {
			for j := range 4 {
				dft[4*r+k] += xv[4*r+j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/4))
			}
		}
	}
	expectComplex(t, "fft of a complex tensor", ft, dft[:], tol)
	back := complexResult(t, "ifft", core.Call1("ifft", nil, core.Call1("fft", nil, x)))
	expectComplex(t, "ifft(fft(x))", back, xv, tol)
	if err := core.Call1("relu", nil, x).Err(); err == nil {
		t.Errorf("relu of a complex tensor succeeded; it has no complex form")
	}
}

// runComplexGrad checks d/dz of the real loss sum(|f(z)|^2) against central
// differences on z's parts (PyTorch's convention: grad = dL/dre + i dL/dim).
func runComplexGrad(t *testing.T, dev core.Device) {
	fs := map[string]func(z *core.Tensor) *core.Tensor{
		"mul":  func(z *core.Tensor) *core.Tensor { return core.Call1("mul", nil, z, z.Conj().Exp()) },
		"div":  func(z *core.Tensor) *core.Tensor { return core.Call1("div", nil, z.Sin(), z.Add(z.Square())) },
		"sqrt": func(z *core.Tensor) *core.Tensor { return z.Sqrt().Log() },
	}
	vals := complexValues[:4]
	for name, f := range fs {
		loss := func(p []float64) float64 {
			z := core.FromFloat64s(core.F64, core.Shape{len(vals), 2}, p, core.CPU).ViewAsComplex()
			a := f(z).Abs()
			v, err := core.Call1("sum", nil, core.Call1("mul", nil, a, a)).Item()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return v
		}
		pairs := make([]float64, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, real(v), imag(v))
		}
		x := complexTensor(t, dev, core.C64, vals, core.Shape{len(vals)})
		x.SetRequiresGrad(true)
		a := f(x).Abs()
		l := core.Call1("sum", nil, core.Call1("mul", nil, a, a))
		if err := l.Backward(); err != nil {
			t.Fatalf("%s: backward: %v", name, err)
		}
		got := complexResult(t, name+" grad", x.Grad())
		for i := range vals {
			var num [2]float64
			for part := range 2 {
				const h = 1e-6
				p := slices.Clone(pairs)
				p[2*i+part] += h
				up := loss(p)
				p[2*i+part] -= 2 * h
				num[part] = (up - loss(p)) / (2 * h)
			}
			want := complex(num[0], num[1])
			if !closeComplex(got[i], want, 2e-3) {
				t.Errorf("grad of sum|%s(z)|^2 at %v = %v, finite differences %v", name, vals[i], got[i], want)
			}
		}
	}
}
