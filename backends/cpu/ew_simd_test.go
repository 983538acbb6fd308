package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// The vector kernels against the Go loops they replace (exact for
// arithmetic, comparisons, selection and conversions) and against float64
// references (the transcendentals, in ulps), for every instruction set
// this CPU runs, on odd lengths, misaligned starts, broadcast operands and
// special values.

// ewSizes are the lengths tested: empty, shorter than a vector, around
// the vector widths and the unrolled block, and long.
var ewSizes = []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 1000, 1031}

// ewSpecials are values every kernel must get right.
var ewSpecials = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 2, 3, -3,
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	1e-40, -3e-39, 0x1p-126, 1e-20, -1e-20, 1e-7, 88.7, 88.8, -87.3, -103, -104, -110, 20, -20,
	0.625, -0.625, 0.49, 0.51, 3.9, -3.9, 10, -10, 1e4, -1e4, 65535, 70000, -1e6, 1e30, -1e30,
	2147483520, 2147483648, -2147483648, -2147483904, 1.5, 2.5, -2.5, 1e-3, -1e-3, 1e-30,
}

// ewValues is n values: specials first, then a mix of scales.
func ewValues(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch {
		case i < len(ewSpecials) && rng.IntN(2) == 0:
			v[i] = ewSpecials[rng.IntN(len(ewSpecials))]
		case i%3 == 0:
			v[i] = float32(rng.NormFloat64() * 10)
		case i%3 == 1:
			v[i] = float32(rng.NormFloat64())
		default:
			v[i] = float32(math.Ldexp(rng.Float64()-0.5, rng.IntN(60)-30))
		}
	}
	return v
}

// withLevels runs fn for each vector instruction set of this CPU.
func withLevels(t *testing.T, fn func(t *testing.T)) {
	if len(simdLevels) == 0 {
		t.Skip("no vector kernels on this CPU: the Go loops are all there is")
	}
	saved := simdLevel
	defer func() { simdLevel = saved }()
	for _, l := range simdLevels {
		simdLevel = l
		t.Run([]string{"none", "avx2", "avx512"}[l], fn)
	}
}

// withoutSIMD runs fn on the Go loops.
func withoutSIMD(fn func()) {
	saved := simdLevel
	simdLevel = simdNone
	defer func() { simdLevel = saved }()
	fn()
}

func sameF32(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// operandForms are the shapes of binary operands: both full, one a single
// value, both single values.
var operandForms = []struct {
	name       string
	aOne, bOne bool
}{{"full", false, false}, {"scalar-b", false, true}, {"scalar-a", true, false}, {"scalars", true, true}}

// misaligned returns v copied to start off elements into a larger slice.
func misaligned(v []float32, off int) []float32 {
	buf := make([]float32, len(v)+off)
	copy(buf[off:], v)
	return buf[off:]
}

func TestVectorBinaryMatchesGo(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range ewSizes {
			for _, form := range operandForms {
				for off := range 3 {
					a, b := misaligned(ewValues(rng, n), off), misaligned(ewValues(rng, n), (off+1)%4)
					if form.aOne && n > 0 {
						a = a[:1]
					}
					if form.bOne && n > 0 {
						b = b[:1]
					}
					for op := binAdd; op < binCount; op++ {
						got, want := make([]float32, n), make([]float32, n)
						binF32(op, got, a, b)
						binF32Go(op, want, a, b)
						for i := range want {
							if !sameF32(got[i], want[i]) && !closeGeluGrad(op, a[i*min(len(a)-1, 1)], got[i], want[i]) {
								t.Fatalf("op %d n=%d %s off %d: element %d: %v op %v = %v, Go %v", op, n, form.name, off, i,
									a[i*min(len(a)-1, 1)], b[i*min(len(b)-1, 1)], got[i], want[i])
							}
						}
					}
					for op := cmpEq; op <= cmpLe; op++ {
						got, want := make([]byte, n), make([]byte, n)
						cmpF32(op, got, a, b)
						withoutSIMD(func() { cmpF32(op, want, a, b) })
						require.Equal(t, want, got, "compare %d n=%d %s", op, n, form.name)
					}
					c := make([]byte, n)
					for i := range c {
						c[i] = byte(rng.IntN(3)) // 0 false, 1 and 2 true
					}
					got, want := make([]float32, n), make([]float32, n)
					whereF32(got, c, a, b)
					whereF32Go(want, c, a, b)
					for i := range want {
						require.True(t, sameF32(got[i], want[i]), "where n=%d %s element %d", n, form.name, i)
					}
				}
			}
		}
	})
}

// closeGeluGrad accepts a gelu gradient within 1e-5 relative of the Go
// loop's (float64) result, or 1e-6 of the incoming gradient g where the
// slope crosses zero (near x = -0.75) and has no relative accuracy: ten
// times the registry's float32 tolerance.
func closeGeluGrad(op ewBin, g, got, want float32) bool {
	if op != binGeluGrad && op != binGeluTanhGrad {
		return false
	}
	if math.IsInf(float64(g), 0) {
		// inf times a slope that underflows in float32 but not in
		// float64 (x < -14): NaN against ±inf, both meaningless.
		return true
	}
	if math.IsInf(float64(want), 0) || want != want {
		return sameF32(got, want)
	}
	// (1e-37: products in the subnormal range round in float32, not once
	// from float64.)
	return math.Abs(float64(got-want)) <= 1e-6*math.Abs(float64(g))+1e-5*math.Abs(float64(want))+1e-37
}

func TestVectorIntegersMatchGo(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range ewSizes {
			for _, form := range operandForms {
				a32, b32 := make([]int32, n), make([]int32, n)
				a64, b64 := make([]int64, n), make([]int64, n)
				for i := range n {
					a32[i], b32[i] = int32(rng.Uint32()), int32(rng.Uint32()>>rng.IntN(32))
					a64[i], b64[i] = int64(rng.Uint64()), int64(rng.Uint64()>>rng.IntN(64))
				}
				if form.aOne && n > 0 {
					a32, a64 = a32[:1], a64[:1]
				}
				if form.bOne && n > 0 {
					b32, b64 = b32[:1], b64[:1]
				}
				for _, op := range []ewBin{binAdd, binSub, binMul, binMax, binMin} {
					got32, want32 := make([]int32, n), make([]int32, n)
					binInt(op, got32, a32, b32)
					binIntGo(op, want32, a32, b32)
					require.Equal(t, want32, got32, "i32 op %d n=%d %s", op, n, form.name)
					got64, want64 := make([]int64, n), make([]int64, n)
					binInt(op, got64, a64, b64)
					binIntGo(op, want64, a64, b64)
					require.Equal(t, want64, got64, "i64 op %d n=%d %s", op, n, form.name)
				}
			}
		}
	})
}

// TestVectorConversionsMatchCore checks the conversions against core's
// scalar rules, exactly, over specials, random bit patterns (every NaN,
// subnormal and rounding case gets hit) and odd lengths.
func TestVectorConversionsMatchCore(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, n := range append(ewSizes, 1<<16) {
			src := ewValues(rng, n)
			for i := range src {
				if i%2 == 1 {
					src[i] = math.Float32frombits(rng.Uint32())
				}
			}
			src = misaligned(src, n%3)
			h, bf := make([]uint16, n), make([]uint16, n)
			f32ToF16(h, src)
			f32ToBF16(bf, src)
			i32 := make([]int32, n)
			f32ToI32(i32, src)
			for i, x := range src {
				want := numerics.F16Bits(x)
				if x != x {
					require.True(t, numerics.F16Float(h[i]) != numerics.F16Float(h[i]), "f16 of NaN %08x", math.Float32bits(x))
				} else {
					require.Equal(t, want, h[i], "f16 of %v (%08x)", x, math.Float32bits(x))
				}
				require.Equal(t, numerics.BF16Bits(x), bf[i], "bf16 of %v (%08x)", x, math.Float32bits(x))
				require.Equal(t, int32(numerics.FloatToInt(core.I32, float64(x))), i32[i], "i32 of %v", x)
			}
			back, want := make([]float32, n), make([]float32, n)
			bits := make([]uint16, n)
			for i := range bits {
				bits[i] = uint16(rng.Uint32())
			}
			f16ToF32(back, bits)
			for i, b := range bits {
				require.True(t, sameF32(numerics.F16Float(b), back[i]), "f16 %04x", b)
			}
			bf16ToF32(back, bits)
			for i, b := range bits {
				require.True(t, sameF32(numerics.BF16Float(b), back[i]), "bf16 %04x", b)
			}
			ints := make([]int32, n)
			for i := range ints {
				ints[i] = int32(rng.Uint32())
			}
			i32ToF32(back, ints)
			withoutSIMD(func() { i32ToF32(want, ints) })
			require.Equal(t, want, back)
		}
	})
}

// ewRefs are the float64 functions each vector unary op approximates, and
// how far (in float32 ulps of the reference) it may be: the measured worst
// case rounded up. gelu's negative tail is e^{-x²/2 + P(t)} through one
// float32 exp, whose argument's rounding costs up to about 3x²/4 ulps
// (1e-6 relative at x = -4, where gelu is 5e-4); gelu_tanh's is the
// sigmoid of a cubic, whose rounding grows as |x|³. The registry's tolerance is 1e-4 relative, about
// 800 ulps.
var ewRefs = []struct {
	op   ewUn
	name string
	f    func(float64) float64
	ulps float64
	tail func(x, want float64) float64 // ulps more where the argument's rounding shows
}{
	{unExp, "exp", math.Exp, 2, nil},
	{unLog, "log", math.Log, 2, nil},
	{unTanh, "tanh", math.Tanh, 5, nil}, // a rational fit (_asm/fits.py: 4.71)
	{unSigmoid, "sigmoid", ewSigmoid, 3, nil},
	{unSilu, "silu", func(x float64) float64 { return x / (1 + math.Exp(-x)) }, 4, nil},
	{unGelu, "gelu", geluExact, 8, func(x, _ float64) float64 { return 0.75 * x * x }},
	{unGeluTanh, "gelu_tanh", geluTanh, 6, func(x, _ float64) float64 { return 0.5 * math.Abs(x*x*x) }},
	{unErf, "erf", math.Erf, 4, nil},
	{unSqrt, "sqrt", math.Sqrt, 0.5, nil},
	{unNeg, "neg", func(x float64) float64 { return -x }, 0, nil},
	{unAbs, "abs", math.Abs, 0, nil},
	{unSquare, "square", func(x float64) float64 { return x * x }, 0.5, nil},
	{unRelu, "relu", ewRelu, 0, nil},
	{unSin, "sin", math.Sin, 2, trigTail},
	{unCos, "cos", math.Cos, 2, trigTail},
}

// trigTail allows sin and cos the error of reducing x by π/4 held in
// three float32 parts (Cephes'), about 3e-15|x| absolute, which near a
// zero of the result is many ulps of it.
func trigTail(x, want float64) float64 {
	exp := math.Max(float64(math.Ilogb(math.Abs(want))), -126)
	return 3e-15 * math.Abs(x) / math.Ldexp(1, int(exp)-23)
}

// ulpErr is |got - want| in ulps of want rounded to float32 (subnormal
// results count in ulps of the smallest normal, so that gradual underflow
// is not scored as a relative error).
func ulpErr(got float32, want float64) float64 {
	w := float32(want)
	switch {
	case w != w || got != got:
		if w != w && got != got {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(float64(w), 0) || math.IsInf(float64(got), 0):
		if float64(got) == float64(w) {
			return 0
		}
		return math.Inf(1)
	}
	exp := math.Max(float64(math.Ilogb(math.Abs(want))), -126)
	return math.Abs(float64(got)-want) / math.Ldexp(1, int(exp)-23)
}

// checkUnary runs op on src with the vector kernel and compares each
// result with the float64 reference.
func checkUnary(t *testing.T, op ewUn, name string, ref func(float64) float64, bound float64, tail func(x, want float64) float64, src []float32) float64 {
	t.Helper()
	got := make([]float32, len(src))
	require.True(t, unF32(op, got, src))
	worst := 0.0
	for i, x := range src {
		want := ref(float64(x))
		e := ulpErr(got[i], want)
		if math.Abs(want) < 1e-30 && !math.IsInf(e, 0) {
			// Far in a tail, where the subnormal intermediates of a
			// product or quotient lose bits: only absolute accuracy.
			if math.Abs(float64(got[i])-want) > 1e-35 {
				t.Fatalf("%s(%v) = %v, float64 reference %v", name, x, got[i], want)
			}
			e = 0
		}
		allowed := bound
		if tail != nil && !math.IsInf(float64(x), 0) && x == x {
			allowed += tail(float64(x), want)
		}
		if e > allowed {
			t.Fatalf("%s(%v) = %v, float64 reference %v: %.1f ulp", name, x, got[i], want, e)
		}
		if x == 0 && math.Signbit(float64(x)) {
			if w0 := ref(math.Copysign(0, -1)); w0 == 0 && math.Signbit(w0) != math.Signbit(float64(got[i])) {
				t.Fatalf("%s(-0) = %v, want %v", name, got[i], w0)
			}
		}
		worst = math.Max(worst, e-(allowed-bound)) // beyond the tail allowance
	}
	return worst
}

func TestVectorUnaryMatchesReference(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		// A dense sweep of every scale, plus random values and the specials.
		var sweep []float32
		for e := -40; e <= 40; e++ {
			for k := range 400 {
				x := float32(math.Ldexp(1+float64(k)/400, e))
				sweep = append(sweep, x, -x)
			}
		}
		for range 20000 {
			sweep = append(sweep, float32(rng.NormFloat64()*4))
		}
		sweep = append(sweep, ewSpecials...)
		for _, r := range ewRefs {
			worst := checkUnary(t, r.op, r.name, r.f, r.ulps, r.tail, sweep)
			for _, n := range ewSizes {
				checkUnary(t, r.op, r.name, r.f, r.ulps, r.tail, misaligned(ewValues(rng, n), n%4))
			}
			t.Logf("%s: worst %.2f ulp", r.name, worst)
		}
	})
}

// FuzzVectorMatchesGo feeds arbitrary bit patterns through every kernel
// and its Go loop or float64 reference.
func FuzzVectorMatchesGo(f *testing.F) {
	seed := make([]byte, 0, 4*len(ewSpecials))
	for _, x := range ewSpecials {
		u := math.Float32bits(x)
		seed = append(seed, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	f.Add(seed, uint8(0))
	f.Add([]byte{0, 0, 0x80, 0x7f, 1, 0, 0, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, shift uint8) {
		if len(simdLevels) == 0 {
			t.Skip("no vector kernels on this CPU")
		}
		n := len(data) / 4
		a := make([]float32, n)
		for i := range a {
			a[i] = math.Float32frombits(uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24)
		}
		b := make([]float32, n)
		for i := range b {
			b[i] = a[(i+int(shift))%n]
		}
		saved := simdLevel
		defer func() { simdLevel = saved }()
		for _, l := range simdLevels {
			simdLevel = l
			for op := binAdd; op < binCount; op++ {
				got, want := make([]float32, n), make([]float32, n)
				binF32(op, got, a, b)
				binF32Go(op, want, a, b)
				for i := range want {
					if !sameF32(got[i], want[i]) && !closeGeluGrad(op, a[i], got[i], want[i]) {
						t.Fatalf("level %d op %d: %v, %v: %v, Go %v", l, op, a[i], b[i], got[i], want[i])
					}
				}
				if op <= binDiv {
					// The streaming stores, dst starting shift elements in.
					streamed := make([]float32, n+int(shift)%16)[int(shift)%16:]
					binF32Stream(op, streamed, a, b)
					for i := range want {
						if !sameF32(streamed[i], want[i]) {
							t.Fatalf("level %d op %d streamed: %v, %v: %v, Go %v", l, op, a[i], b[i], streamed[i], want[i])
						}
					}
				}
			}
			for op := cmpEq; op <= cmpLe; op++ {
				got, want := make([]byte, n), make([]byte, n)
				cmpF32(op, got, a, b)
				withoutSIMD(func() { cmpF32(op, want, a, b) })
				require.Equal(t, want, got)
			}
			for _, r := range ewRefs {
				checkUnary(t, r.op, fmt.Sprintf("level %d %s", l, r.name), r.f, r.ulps, r.tail, a)
			}
			for op := unSqrt; op <= unRelu; op++ {
				want := make([]float32, n)
				unF32(op, want, a)
				streamed := make([]float32, n+int(shift)%16)[int(shift)%16:]
				unF32Stream(op, streamed, a)
				for i := range want {
					if !sameF32(streamed[i], want[i]) {
						t.Fatalf("level %d unary %d streamed: %v: %v, not streamed %v", l, op, a[i], streamed[i], want[i])
					}
				}
			}
			h := make([]uint16, n)
			f32ToF16(h, a)
			for i, x := range a {
				if x == x {
					require.Equal(t, numerics.F16Bits(x), h[i])
				}
			}
		}
	})
}
