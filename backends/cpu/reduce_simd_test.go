package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reduction and row kernels against their Go loops and float64
// references, for every instruction set of this CPU, on odd lengths,
// misaligned starts and special values: exact where the arithmetic is the
// same (extremes, searches, integer sums, the float32 elementwise steps),
// within a few float64 roundings of the exact sum elsewhere.

var rdSizes = append(append([]int{}, ewSizes...), 2048, 4099)

// exactSum is the sum of form f of x by Neumaier's compensated loop, a
// reference a rounding or two from exact; mag is the sum of magnitudes,
// the scale of any order's rounding error.
func exactSum[T floatElem](f sumForm, x []T) (sum, mag float64) {
	var s, c float64
	for _, v := range x {
		y := formValue(f, float64(v))
		t := s + y
		if math.Abs(s) >= math.Abs(y) {
			c += (s - t) + y
		} else {
			c += (y - t) + s
		}
		s = t
		mag += math.Abs(y)
	}
	return s + c, mag
}

// closeSum reports whether got is within a few roundings of want, both
// NaN, or the same infinity.
func closeSum(got, want, mag float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) || math.IsInf(mag, 0) || math.IsNaN(mag) {
		return got == want || (got != got && want != want) || math.IsInf(mag, 0) && (math.IsInf(got, 0) || got != got)
	}
	return math.Abs(got-want) <= 1e-13*mag
}

func rdValues64(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i, x := range ewValues(rng, n) {
		v[i] = float64(x) * (1 + rng.Float64()*1e-9)
	}
	return v
}

func TestVectorSumsMatchGoAndFloat64(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range rdSizes {
			for off := range 3 {
				x := misaligned(ewValues(rng, n), off)
				d := rdValues64(rng, n+off)[off:]
				for f := formSum; f <= formNz; f++ {
					want, mag := exactSum(f, x)
					var golden float64
					withoutSIMD(func() { golden = sumF32(f, x) })
					require.True(t, closeSum(sumF32(f, x), want, mag), "f32 form %d n=%d off %d: %v, want %v", f, n, off, sumF32(f, x), want)
					require.True(t, closeSum(golden, want, mag), "Go f32 form %d n=%d: %v, want %v", f, n, golden, want)
					want, mag = exactSum(f, d)
					require.True(t, closeSum(sumF64(f, d), want, mag), "f64 form %d n=%d off %d: %v, want %v", f, n, off, sumF64(f, d), want)
				}
				k := 0.0
				if n > 0 {
					k = float64(x[0])
				}
				s1, s2 := shiftSumsF32(x, k)
				var g1, g2 float64
				withoutSIMD(func() { g1, g2 = shiftSumsF32(x, k) })
				require.True(t, closeSum(s1, g1, shiftMag(x, k, false)) && closeSum(s2, g2, shiftMag(x, k, true)),
					"shift sums n=%d: %v %v, Go %v %v", n, s1, s2, g1, g2)
				p := make([]float32, n)
				for i := range p {
					p[i] = float32(0.5 + rng.Float64()*1.5)
				}
				if n > 3 {
					p[rng.IntN(n)] = ewSpecials[rng.IntN(12)]
				}
				var gp float64
				withoutSIMD(func() { gp = prodF32(p) })
				got := prodF32(p)
				require.True(t, got == gp || math.Abs(got-gp) <= 1e-13*math.Abs(gp) || (got != got && gp != gp), "prod n=%d: %v, Go %v", n, got, gp)
			}
		}
	})
}

// f32SumTol is the error the plain float32 sum may make, as a fraction of
// the sum of magnitudes: the kernels add four elements per lane in
// float32, (x0 + x1) + (x2 + x3), two roundings of at most 2^-24 each,
// before the float64 accumulation (a little margin for its roundings).
const f32SumTol = 2.5 * 0x1p-24

// finiteValues is ewValues without NaN and Inf: the values a sum's vector
// kernel keeps (a non-finite result goes through the Go loop), so the
// kernel's own accuracy is what is checked. Magnitudes span 2^-30..2^30.
func finiteValues(rng *rand.Rand, n int) []float32 {
	v := ewValues(rng, n)
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || math.Abs(float64(x)) > 1e30 {
			v[i] = float32(rng.NormFloat64())
		}
	}
	return v
}

func TestVectorSumF32WithinTwoFloat32Roundings(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, n := range append(append([]int{}, rdSizes...), 1<<16+48) {
			for off := range 3 {
				x := misaligned(finiteValues(rng, n), off)
				want, mag := exactSum(formSum, x)
				got := sumF32(formSum, x)
				require.InDelta(t, want, got, f32SumTol*mag, "n=%d off %d", n, off)
				var golden float64
				withoutSIMD(func() { golden = sumF32(formSum, x) })
				require.True(t, closeSum(golden, want, mag), "Go n=%d: %v, want %v", n, golden, want)
			}
		}
	})
}

// The float32 pre-sums can overflow where float64 does not: the block then
// goes through the float64 loop, and a real Inf or NaN in the input stays.
func TestVectorSumF32Overflow(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		for _, n := range []int{16, 128, 130, 2048} {
			x := make([]float32, n)
			for i := range x {
				x[i] = math.MaxFloat32 * float32(1-2*((i>>1)&1)) // M, M, -M, -M, ...
			}
			want, _ := exactSum(formSum, x)
			require.Equal(t, want, sumF32(formSum, x), "n=%d", n)
			x[n/2] = float32(math.Inf(-1))
			require.True(t, math.IsInf(sumF32(formSum, x), -1), "n=%d with -Inf", n)
			x[n-1] = float32(math.NaN())
			require.True(t, math.IsNaN(sumF32(formSum, x)), "n=%d with NaN", n)
		}
	})
}

func shiftMag(x []float32, k float64, sq bool) float64 {
	var m float64
	for _, v := range x {
		d := math.Abs(float64(v) - k)
		if sq {
			d *= d
		}
		m += d
	}
	return m
}

func TestVectorExtremesMatchGo(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, n := range rdSizes {
			for off := range 3 {
				x := misaligned(ewValues(rng, n), off)
				if n > 0 && rng.IntN(2) == 0 { // no NaN, so the searches compare values
					for i, v := range x {
						if v != v {
							x[i] = 1
						}
					}
				}
				d := make([]float64, n)
				for i, v := range x {
					d[i] = float64(v)
				}
				for _, mx := range []bool{true, false} {
					for _, abs := range []bool{false, true} {
						got, nan := extremeF32(mx, abs, x)
						want, wnan := extremeGo(mx, abs, x)
						require.Equal(t, wnan, nan, "nan flag n=%d", n)
						require.True(t, got == want, "extreme max=%v abs=%v n=%d: %v, Go %v", mx, abs, n, got, want)
						got64, nan64 := extremeF64(mx, abs, d)
						require.Equal(t, wnan, nan64)
						require.True(t, got64 == float64(want), "f64 extreme n=%d: %v, want %v", n, got64, want)
					}
					if n == 0 {
						continue
					}
					require.Equal(t, argExtremeGo(mx, x), argExtremeF32(mx, x), "arg max=%v n=%d", mx, n)
					ties := make([]float32, n) // few distinct values: many ties
					for i := range ties {
						ties[i] = float32(rng.IntN(4))
					}
					require.Equal(t, argExtremeGo(mx, ties), argExtremeF32(mx, ties), "ties n=%d", n)
				}
			}
		}
	})
}

func TestVectorIntSumsExact(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range rdSizes {
			a, b := make([]int32, n), make([]int64, n)
			var wa, wb int64
			for i := range a {
				a[i], b[i] = int32(rng.Uint32()), int64(rng.Uint64())
				wa += int64(a[i])
				wb += b[i]
			}
			require.Equal(t, wa, sumInt32(a), "i32 n=%d", n)
			require.Equal(t, wb, sumInt64(b), "i64 n=%d (wrapping)", n)
		}
	})
}

func TestVectorColumnsMatchGo(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range rdSizes {
			x := misaligned(ewValues(rng, n), 1)
			d := rdValues64(rng, n)
			for f := formSum; f <= formNz; f++ {
				acc, want := make([]float64, n), make([]float64, n)
				for i := range acc {
					acc[i] = float64(i)
					want[i] = float64(i)
				}
				colSumF32(f, acc, x)
				colSumGo(f, want, x)
				requireSameF64s(t, want, acc, "col form %d n=%d", f, n) // one addition each: exact
				acc64, want64 := make([]float64, n), make([]float64, n)
				colSumF64(f, acc64, d)
				colSumGo(f, want64, d)
				requireSameF64s(t, want64, acc64, "col f64 form %d n=%d", f, n)
			}
			k, s1, s2 := make([]float64, n), make([]float64, n), make([]float64, n)
			w1, w2 := make([]float64, n), make([]float64, n)
			for i := range k {
				k[i] = float64(rng.NormFloat64())
			}
			colShiftF32(s1, s2, k, x)
			colShiftGo(w1, w2, k, x)
			for i := range s1 {
				require.True(t, sameF64(s1[i], w1[i]) && (sameF64(s2[i], w2[i]) || math.Abs(s2[i]-w2[i]) <= 1e-15*w2[i]), "col shift n=%d i=%d", n, i)
			}
			for _, mx := range []bool{true, false} {
				best, idx := append([]float32{}, x...), make([]int32, n)
				wbest, widx := append([]float32{}, x...), make([]int32, n)
				for j := 1; j < 4; j++ {
					row := misaligned(ewValues(rng, n), j)
					colArgF32(mx, best, idx, row, j)
					colArgGo(mx, wbest, widx, row, j)
				}
				require.Equal(t, widx, idx, "col arg n=%d", n)
			}
		}
	})
}

func requireSameF64s(t *testing.T, want, got []float64, msg string, args ...any) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.True(t, sameF64(got[i], want[i]), append([]any{"element %d: %v, want %v: " + msg, i, got[i], want[i]}, args...)...)
	}
}

func sameF64(a, b float64) bool { return a == b || (a != a && b != b) }

func TestVectorRowKernelsMatchGo(t *testing.T) {
	withLevels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, n := range rdSizes {
			x, g, w, b := ewValues(rng, n), ewValues(rng, n), ewValues(rng, n), ewValues(rng, n)
			x = misaligned(x, 1)
			shift := float32(rng.NormFloat64() * 3)
			got, want := make([]float32, n), make([]float32, n)
			s := expSumF32(got, x, shift)
			ws := expSumGo(want, x, shift)
			require.True(t, closeExp(s, ws), "exp sum n=%d: %v, Go %v", n, s, ws)
			for i := range got {
				require.True(t, closeExp(float64(got[i]), float64(want[i])), "exp n=%d i=%d: exp(%v-%v) = %v, Go %v", n, i, x[i], shift, got[i], want[i])
			}
			require.True(t, closeExp(expSumF32(nil, x, shift), ws), "exp sum alone n=%d", n)
			check := func(name string, run func(dst []float32)) {
				run(got)
				withoutSIMD(func() { run(want) })
				for i := range got {
					require.True(t, sameF32(got[i], want[i]), "%s n=%d element %d: %v, Go %v", name, n, i, got[i], want[i])
				}
			}
			check("sub2", func(d []float32) { sub2F32(d, x, 0.75, -1.5) })
			check("axpb", func(d []float32) { axpbF32(d, x, 0.75, -1.5) })
			for _, wb := range [][2][]float32{{nil, nil}, {w, nil}, {nil, b}, {w, b}} {
				check("norm", func(d []float32) { normF32(d, x, wb[0], wb[1], 0.25, 1.5) })
			}
			for _, wv := range [][]float32{nil, w} {
				check("norm grad", func(d []float32) { normGradF32(d, x, g, wv, 0.25, 1.5, -0.5, 0.125) })
				sd, sdx := normDotsF32(x, g, wv, 0.25)
				var gd, gdx float64
				withoutSIMD(func() { gd, gdx = normDotsF32(x, g, wv, 0.25) })
				require.True(t, closeSum(sd, gd, dotMag(g, wv, nil)) && closeSum(sdx, gdx, dotMag(g, wv, x)), "norm dots n=%d", n)
			}
			dw, db, gw, gb := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
			normColsF32(dw, db, x, g, 0.25, 1.5)
			withoutSIMD(func() { normColsF32(gw, gb, x, g, 0.25, 1.5) })
			for i := range dw {
				require.True(t, sameF64(db[i], gb[i]) && (sameF64(dw[i], gw[i]) || math.Abs(dw[i]-gw[i]) <= 1e-15*math.Abs(gw[i])), "norm cols n=%d i=%d", n, i)
			}
			check("softmax grad", func(d []float32) { softmaxGradF32(false, d, x, g, 0.3) })
			y := make([]float32, n) // log-probabilities: exp(y) in [0, 1]
			for i := range y {
				y[i] = float32(-rng.ExpFloat64() * 4)
			}
			softmaxGradF32(true, got, y, g, 0.3)
			withoutSIMD(func() { softmaxGradF32(true, want, y, g, 0.3) })
			for i := range got {
				require.True(t, sameF32(got[i], want[i]) || math.Abs(float64(got[i]-want[i])) <= 1e-6*(math.Abs(float64(g[i]))+0.3), "log softmax grad n=%d i=%d: %v, Go %v", n, i, got[i], want[i])
			}
		}
	})
}

// closeExp accepts the vector exp's few ulps.
func closeExp(got, want float64) bool {
	return sameF64(got, want) || math.Abs(got-want) <= 1e-6*math.Abs(want)
}

func dotMag(g, w, x []float32) float64 {
	var m float64
	for i, v := range g {
		d := math.Abs(float64(v))
		if w != nil {
			d *= math.Abs(float64(w[i]))
		}
		if x != nil {
			d *= math.Abs(float64(x[i]) - 0.25)
		}
		m += d
	}
	return m
}
