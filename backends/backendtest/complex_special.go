package backendtest

import (
	"math"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// The complex elementary functions' special values (C99 Annex G, as glibc
// and so NumPy return them, which the array API standard's special cases
// follow) and arguments where a naive formula overflows or cancels: the
// real part of cosh(90) overflows float32, tanh(0 + inf i) is 0 + NaN i,
// acos(9i) loses digits in log form. Go's math/cmplx is not the reference
// here (it returns NaN for several of these). Each row holds the input,
// the complex128 result and the complex64 result (of the input rounded to
// complex64), from NumPy, with mpmath's real part for log1p (NumPy's
// log(hypot(1 + a, b)) loses digits near 0).

var (
	inf  = math.Inf(1)
	nan  = math.NaN()
	negz = math.Copysign(0, -1)
)

func c(re, im float64) complex128 { return complex(re, im) }

var complexSpecials = []struct {
	op            string
	in, c128, c64 complex128
}{
	{"exp", c(inf, 0.0), c(inf, 0.0), c(inf, 0.0)},
	{"exp", c(-inf, inf), c(0.0, 0.0), c(0.0, 0.0)},
	{"exp", c(inf, inf), c(inf, nan), c(inf, nan)},
	{"exp", c(inf, nan), c(inf, nan), c(inf, nan)},
	{"exp", c(nan, 0.0), c(nan, 0.0), c(nan, 0.0)},
	{"exp", c(1.0, inf), c(nan, nan), c(nan, nan)},
	{"exp", c(800.0, 0.0), c(inf, 0.0), c(inf, 0.0)},
	{"exp", c(710.0, 1e-300), c(inf, 223399476.61617112), c(inf, 0.0)},
	{"exp", c(-inf, 1.0), c(0.0, 0.0), c(0.0, 0.0)},
	{"expm1", c(90.0, 0.0), c(1.2204032943178408e+39, 0.0), c(inf, 0.0)},
	{"expm1", c(-inf, 1.0), c(-1.0, 0.0), c(-1.0, 0.0)},
	{"expm1", c(1e-10, 1e-10), c(1e-10, 1.0000000001000001e-10), c(1.000000013351432e-10, 1.000000013351432e-10)},
	// The standard's, not NumPy's (NaN + NaN i, from NaN·sin 0): a zero
	// imaginary part stays, at NaN and at +inf alike.
	{"expm1", c(nan, 0.0), c(nan, 0.0), c(nan, 0.0)},
	{"expm1", c(inf, 0.0), c(inf, 0.0), c(inf, 0.0)},
	{"log", c(0.0, 0.0), c(-inf, 0.0), c(-inf, 0.0)},
	{"log", c(negz, 0.0), c(-inf, 3.141592653589793), c(-inf, 3.1415927410125732)},
	{"log", c(-inf, 1.0), c(inf, 3.141592653589793), c(inf, 3.1415927410125732)},
	{"log", c(inf, nan), c(inf, nan), c(inf, nan)},
	{"log", c(nan, inf), c(inf, nan), c(inf, nan)},
	{"log", c(1.0, 1e-10), c(5.0000000000000005e-21, 1e-10), c(5.000000245224396e-21, 1.000000013351432e-10)},
	{"log", c(3e+38, 3e+38), c(88.94341941272182, 0.7853981633974483), c(88.94342041015625, 0.7853981852531433)},
	{"log", c(5e-324, 5e-324), c(-744.0934983311014, 0.7853981633974483), c(-inf, 0.0)},
	{"log", c(-1e+308, -1e-300), c(709.196208642166, -3.141592653589793), c(inf, -3.1415927410125732)},
	{"log1p", c(0.0, 1.3e+154), c(354.8604685855505, 1.5707963267948966), c(inf, 1.5707963705062866)},
	{"log1p", c(-1.0, 0.0), c(-inf, 0.0), c(-inf, 0.0)},
	{"log1p", c(inf, nan), c(inf, nan), c(inf, nan)},
	{"log1p", c(1e-30, 1e-30), c(1e-30, 1e-30), c(1.0000000031710769e-30, 1.0000000031710769e-30)},
	{"log1p", c(1e+300, 1e+300), c(691.1221014884936, 0.7853981633974483), c(inf, 0.7853981852531433)},
	{"sqrt", c(-inf, nan), c(nan, inf), c(nan, inf)},
	{"sqrt", c(inf, nan), c(inf, nan), c(inf, nan)},
	{"sqrt", c(nan, inf), c(inf, inf), c(inf, inf)},
	{"sqrt", c(-inf, 1.0), c(0.0, inf), c(0.0, inf)},
	{"sqrt", c(inf, -1.0), c(inf, negz), c(inf, negz)},
	{"sqrt", c(-4.0, negz), c(0.0, -2.0), c(0.0, -2.0)},
	{"sqrt", c(5e-324, 5e-324), c(2.4421097261308304e-162, 1.0115549693666347e-162), c(0.0, 0.0)},
	{"sqrt", c(1e+308, 1e+308), c(1.09868411346781e+154, 4.5508986056222734e+153), c(inf, inf)},
	{"sqrt", c(-1e+308, 1e-308), c(0.0, 1e+154), c(0.0, inf)},
	{"sin", c(0.0, inf), c(0.0, inf), c(0.0, inf)},
	{"sin", c(inf, inf), c(nan, inf), c(nan, inf)},
	{"sin", c(nan, -inf), c(nan, inf), c(nan, inf)},
	{"sin", c(1.0, 800.0), c(inf, inf), c(inf, inf)},
	{"sin", c(0.0, 90.0), c(0.0, 6.102016471589204e+38), c(0.0, inf)},
	{"cos", c(0.0, inf), c(inf, negz), c(inf, negz)},
	{"cos", c(inf, nan), c(nan, nan), c(nan, nan)},
	{"cos", c(1.0, 800.0), c(inf, -inf), c(inf, -inf)},
	{"cos", c(0.0, -90.0), c(6.102016471589204e+38, 0.0), c(inf, 0.0)},
	{"tan", c(inf, 1.0), c(nan, nan), c(nan, nan)},
	{"tan", c(1.0, inf), c(0.0, 1.0), c(0.0, 1.0)},
	{"tan", c(0.0, 800.0), c(0.0, 1.0), c(0.0, 1.0)},
	{"tan", c(inf, inf), c(0.0, 1.0), c(0.0, 1.0)},
	{"sinh", c(0.0, inf), c(0.0, nan), c(0.0, nan)},
	{"sinh", c(-inf, inf), c(inf, nan), c(inf, nan)},
	{"sinh", c(inf, 1.0), c(inf, inf), c(inf, inf)},
	{"sinh", c(nan, 0.0), c(nan, 0.0), c(nan, 0.0)},
	{"sinh", c(90.0, 1.0), c(3.2969335700450173e+38, 5.134669809662173e+38), c(3.296933670798832e+38, inf)},
	{"sinh", c(800.0, 1.0), c(inf, inf), c(inf, inf)},
	{"cosh", c(90.0, 0.0), c(6.102016471589204e+38, 0.0), c(inf, 0.0)},
	{"cosh", c(0.0, inf), c(nan, 0.0), c(nan, 0.0)},
	{"cosh", c(inf, nan), c(inf, nan), c(inf, nan)},
	{"cosh", c(nan, 0.0), c(nan, 0.0), c(nan, 0.0)},
	{"cosh", c(-800.0, 2.0), c(-inf, -inf), c(-inf, -inf)},
	{"cosh", c(1419.0, 5e-324), c(inf, 4.535492800918096e+292), c(inf, 0.0)},
	{"tanh", c(0.0, inf), c(0.0, nan), c(0.0, nan)},
	{"tanh", c(inf, inf), c(1.0, 0.0), c(1.0, 0.0)},
	{"tanh", c(inf, nan), c(1.0, 0.0), c(1.0, 0.0)},
	{"tanh", c(nan, 0.0), c(nan, 0.0), c(nan, 0.0)},
	{"tanh", c(25.0, inf), c(nan, nan), c(nan, nan)},
	{"tanh", c(0.0, 1e+308), c(0.0, -0.5086861259107567), c(0.0, nan)},
	{"tanh", c(400.0, 1.0), c(1.0, 0.0), c(1.0, 0.0)},
	{"asin", c(0.0, nan), c(0.0, nan), c(0.0, nan)},
	{"asin", c(inf, inf), c(0.7853981633974483, inf), c(0.7853981852531433, inf)},
	{"asin", c(nan, inf), c(nan, inf), c(nan, inf)},
	{"asin", c(0.0, 9.0), c(0.0, 2.8934439858858716), c(0.0, 2.893444061279297)},
	{"asin", c(0.0, 25.0), c(0.0, 3.9124227656412556), c(0.0, 3.9124226570129395)},
	{"asin", c(10000000000.0, 1e-10), c(1.5707963267948966, 23.7189981105004), c(1.5707963705062866, 23.718997955322266)},
	{"acos", c(0.0, 9.0), c(1.5707963267948966, -2.8934439858858716), c(1.5707963705062866, -2.893444061279297)},
	{"acos", c(0.0, nan), c(1.5707963267948966, nan), c(1.5707963705062866, nan)},
	{"acos", c(-inf, 1.0), c(3.141592653589793, -inf), c(3.1415927410125732, -inf)},
	{"acos", c(inf, inf), c(0.7853981633974483, -inf), c(0.7853981852531433, -inf)},
	{"acos", c(nan, inf), c(nan, -inf), c(nan, -inf)},
	{"acos", c(1.0, 1e-20), c(1e-10, -1e-10), c(1.000000013351432e-10, -1.000000013351432e-10)},
	{"acos", c(-1e+300, 1.0), c(3.141592653589793, -691.4686750787736), c(3.1415927410125732, -inf)},
	{"atan", c(0.0, inf), c(1.5707963267948966, 0.0), c(1.5707963705062866, 0.0)},
	{"atan", c(inf, nan), c(1.5707963267948966, 0.0), c(1.5707963705062866, 0.0)},
	{"atan", c(0.0, 1.1), c(1.5707963267948966, 1.522261218861711), c(1.5707963705062866, 1.522261142730713)},
	{"atan", c(0.0, 0.9999), c(0.0, 4.951718775643099), c(0.0, 4.951635837554932)},
	{"atan", c(1e+300, 1e+300), c(1.5707963267948966, 4.999999999999999e-301), c(1.5707963705062866, 0.0)},
	{"asinh", c(nan, 0.0), c(nan, 0.0), c(nan, 0.0)},
	{"asinh", c(inf, nan), c(inf, nan), c(inf, nan)},
	{"asinh", c(1.0, inf), c(inf, 1.5707963267948966), c(inf, 1.5707963705062866)},
	{"asinh", c(1.3e+154, 1.0), c(355.55361576611045, 7.692307692307693e-155), c(inf, 0.0)},
	{"asinh", c(1e-20, 1e-300), c(1e-20, 1e-300), c(9.999999682655225e-21, 0.0)},
	{"acosh", c(0.0, nan), c(nan, 1.5707963267948966), c(nan, 1.5707963705062866)},
	{"acosh", c(-inf, 1.0), c(inf, 3.141592653589793), c(inf, 3.1415927410125732)},
	{"acosh", c(inf, inf), c(inf, 0.7853981633974483), c(inf, 0.7853981852531433)},
	{"acosh", c(-1e+308, -1e-300), c(709.8893558227259, -3.141592653589793), c(inf, -3.1415927410125732)},
	{"acosh", c(1.0, 1e-20), c(1e-10, 1e-10), c(1.000000013351432e-10, 1.000000013351432e-10)},
	{"atanh", c(1.0, 0.0), c(inf, 0.0), c(inf, 0.0)},
	{"atanh", c(0.0, nan), c(0.0, nan), c(0.0, nan)},
	{"atanh", c(inf, nan), c(0.0, nan), c(0.0, nan)},
	{"atanh", c(-1.0, 1e-10), c(-11.8594990552502, 0.7853981634224483), c(-11.859498977661133, 0.7853981852531433)},
	{"atanh", c(1e+300, 1.0), c(1e-300, 1.5707963267948966), c(0.0, 1.5707963705062866)},
	{"atanh", c(0.5, 1e-300), c(0.5493061443340549, 1.3333333333333334e-300), c(0.5493061542510986, 0.0)},
}

// runComplexSpecial checks complexSpecials on dev: NaN and infinite parts
// exactly (an infinity's sign too), finite results normwise within 16 ulps
// of d, the signs of zeros not (C99 leaves many of them unspecified).
func runComplexSpecial(t *testing.T, dev core.Device, d core.DType) {
	eps, tiny := 0x1p-52, 0x1p-1022
	if d == core.C64 {
		eps, tiny = 0x1p-23, 0x1p-126
	}
	for _, s := range complexSpecials {
		want := s.c128
		if d == core.C64 {
			want = s.c64
		}
		x := complexTensor(t, dev, d, []complex128{s.in}, core.Shape{1})
		got := complexResult(t, s.op, core.Call1(s.op, nil, x))[0]
		ok := true
		for _, p := range [][2]float64{{real(got), real(want)}, {imag(got), imag(want)}} {
			if math.IsNaN(p[0]) != math.IsNaN(p[1]) || (math.IsInf(p[1], 0) && p[0] != p[1]) {
				ok = false
			}
		}
		finite := !math.IsNaN(real(want)) && !math.IsNaN(imag(want)) && !math.IsInf(real(want), 0) && !math.IsInf(imag(want), 0)
		if ok && finite {
			diff := complex(real(got)-real(want), imag(got)-imag(want))
			ok = math.Hypot(real(diff), imag(diff)) <= 16*eps*math.Hypot(real(want), imag(want))+tiny
		}
		if !ok {
			t.Errorf("%s(%v) on %v %v = %v, want %v", s.op, s.in, dev, d, got, want)
		}
	}
}
