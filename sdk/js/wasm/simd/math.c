// The CPU backend's float32 transcendentals and row kernels (softmax,
// layer_norm) in WebAssembly SIMD, for the browser build: Go's wasm port
// runs them one element at a time, the transcendentals through float64
// (math.Exp, math.Erfc) at some 60 ns an element in V8, and a sentence
// encoder's GELU and attention softmax took most of a browser run there
// (all-MiniLM-L6-v2, batch 8 x 128, in headless Chromium: 1307 ms before
// these and the A packing of gemm.c, 820-840 after, against onnxruntime-web's
// wasm provider at 900-980). backends/cpu/ew_wasmsimd.go calls them on
// whole slices and rows.
//
// The algorithms are the x86 kernels' (backends/cpu/_asm/math.go: the same
// polynomials, clamps and special values), written with separate multiplies
// and adds because wasm has no fused multiply-add; results are a few ulp
// from the float64 reference, as the x86 kernels' are, not its bits.
// Special values follow Go's math package: NaN propagates, infinities and
// signed zeros come out as the reference's.
//
// The module's rules are gemm.c's: no stack, no static data (every
// constant is an immediate), only scalars and v128 values as locals.

#include <wasm_simd128.h>

typedef v128_t f4;

// The ops, as backends/cpu/ew_wasmsimd.go numbers them.
enum { OP_EXP = 1, OP_SIGMOID, OP_SILU, OP_GELU, OP_TANH, OP_GELU_TANH };

static inline f4 k(float c) { return wasm_f32x4_splat(c); }
static inline f4 add(f4 a, f4 b) { return wasm_f32x4_add(a, b); }
static inline f4 sub(f4 a, f4 b) { return wasm_f32x4_sub(a, b); }
static inline f4 mul(f4 a, f4 b) { return wasm_f32x4_mul(a, b); }
static inline f4 mad(f4 p, f4 x, float c) { return add(mul(p, x), k(c)); } // p*x + c, rounded twice

// lo and hi limit x to [lo, hi], NaN kept: pmax(a, b) is a < b ? b : a and
// pmin(a, b) is b < a ? b : a, so a NaN x is returned as it is.
static inline f4 clamp(f4 x, float lo, float hi) { return wasm_f32x4_pmin(wasm_f32x4_pmax(x, k(lo)), k(hi)); }

static inline f4 abs4(f4 x) { return wasm_v128_and(x, wasm_i32x4_splat(0x7fffffff)); }

// exp_in is e^t for t in [-252 ln2, 88.8] or NaN: t = n ln2 + r, |r| <=
// ln2/2, in two parts (Cody-Waite; n*C1 is exact), e^r by the x86
// kernels' degree-6 fit, and the scaling by 2^n in two halves so that a
// result in the subnormal range rounds once. NaN gives n = NaN, whose
// conversion is 0, and the polynomial keeps the NaN.
static inline f4 exp_in(f4 t) {
  const f4 n = wasm_f32x4_nearest(mul(t, k(1.44269504088896341f)));
  f4 r = sub(t, mul(n, k(0.693359375f)));
  r = sub(r, mul(n, k(-2.12194440e-4f)));
  f4 p = k(0.0013843653723597527f);
  p = mad(p, r, 0.00837415549904108f);
  p = mad(p, r, 0.04166800156235695f);
  p = mad(p, r, 0.16666431725025177f);
  p = mad(p, r, 0.4999999403953552f);
  p = mad(p, r, 1.0f);
  p = mad(p, r, 1.0f);
  const v128_t ni = wasm_i32x4_trunc_sat_f32x4(n);
  const v128_t n1 = wasm_i32x4_shr(ni, 1), n2 = wasm_i32x4_sub(ni, n1);
  const v128_t bias = wasm_i32x4_splat(127);
  p = mul(p, wasm_i32x4_shl(wasm_i32x4_add(n1, bias), 23));
  return mul(p, wasm_i32x4_shl(wasm_i32x4_add(n2, bias), 23));
}

// exp4 is e^x, x clamped to [-104, 88.8], beyond which it rounds to 0 or +Inf.
static inline f4 exp4(f4 x) { return exp_in(clamp(x, -104.0f, 88.8f)); }

// sigmoid4 is 1/(1 + e^-|x|) for x >= 0 and e^-|x|/(1 + e^-|x|) below, so
// the negative tail keeps its relative accuracy; NaN takes the second.
static inline f4 sigmoid4(f4 x) {
  const f4 e = exp4(wasm_v128_or(x, wasm_i32x4_splat((int)0x80000000)));
  const f4 s = wasm_f32x4_div(k(1.0f), add(e, k(1.0f)));
  return wasm_v128_bitselect(s, mul(e, s), wasm_f32x4_ge(x, k(0.0f)));
}

// gauss_tail is Phi(-y) = erfc(y/sqrt2)/2 for y >= 0 or NaN, y clamped to
// 15 (past which it rounds to 0): t exp(-y^2/2 + P(t - c)), t = 1/(1 + ky),
// the x86 kernels' fit (1.4 ulps there; a few more here, with -y^2/2 + P
// rounded twice instead of once).
static inline f4 gauss_tail(f4 y) {
  const f4 yc = wasm_f32x4_pmin(y, k(15.0f));
  const f4 t = wasm_f32x4_div(k(1.0f), add(mul(k(0.4000000059604645f), yc), k(1.0f)));
  const f4 u = sub(t, k(0.5714285969734192f));
  f4 p = k(0.18988406658172607f);
  p = mad(p, u, -0.10434912145137787f);
  p = mad(p, u, -0.21179978549480438f);
  p = mad(p, u, 0.23001961410045624f);
  p = mad(p, u, 0.1325928419828415f);
  p = mad(p, u, -0.38029196858406067f);
  p = mad(p, u, -0.09083301573991776f);
  p = mad(p, u, 1.2204517126083374f);
  p = mad(p, u, -1.1760040521621704f);
  p = sub(p, mul(mul(k(0.5f), yc), yc));
  return mul(t, exp_in(p));
}

// gelu4 is x Phi(x): Phi(-|x|) from gauss_tail, 1 minus it for x >= 0
// (gelu(-inf) is -inf * 0 = NaN, as the reference's).
static inline f4 gelu4(f4 x) {
  const f4 e = gauss_tail(abs4(x));
  return mul(x, wasm_v128_bitselect(e, sub(k(1.0f), e), wasm_f32x4_lt(x, k(0.0f))));
}

// tanh4 is x P(x^2)/Q(x^2), the x86 kernels' rational fit, |x| clamped to
// 9 and the quotient to [-1, 1]; odd, so -0 stays -0.
static inline f4 tanh4(f4 x) {
  const f4 xc = clamp(x, -9.0f, 9.0f);
  const f4 z = mul(xc, xc);
  f4 p = k(-8.490217806144534e-14f);
  p = mad(p, z, 5.278589718105131e-11f);
  p = mad(p, z, -2.0226659458444374e-08f);
  p = mad(p, z, 1.1154682397318538e-05f);
  p = mad(p, z, 0.003103993134573102f);
  p = mad(p, z, 0.13084043562412262f);
  p = mad(p, z, 1.0f);
  f4 q = k(0.0002546198375057429f);
  q = mad(q, z, 0.024495325982570648f);
  q = mad(q, z, 0.46417370438575745f);
  q = mad(q, z, 1.0f);
  return clamp(wasm_f32x4_div(mul(xc, p), q), -1.0f, 1.0f);
}

// gelu_tanh4 is x sigmoid(2u), u = sqrt(2/pi)(x + 0.044715 x^3).
static inline f4 gelu_tanh4(f4 x) {
  const float c = 2 * 0.7978845608028654f;
  const f4 u = mul(x, add(k(c), mul(k(c * 0.044715f), mul(x, x))));
  return mul(x, sigmoid4(u));
}

static inline f4 apply(int op, f4 x) {
  switch (op) {
  case OP_EXP:
    return exp4(x);
  case OP_SIGMOID:
    return sigmoid4(x);
  case OP_SILU:
    return mul(x, sigmoid4(x));
  case OP_GELU:
    return gelu4(x);
  case OP_TANH:
    return tanh4(x);
  default:
    return gelu_tanh4(x);
  }
}

// load_part and store_part move the last n < 4 elements; the unused lanes
// hold fill.
static inline f4 load_part(const float *p, int n, float fill) {
  return wasm_f32x4_make(p[0], n > 1 ? p[1] : fill, n > 2 ? p[2] : fill, fill);
}

static inline void store_part(float *p, f4 v, int n) {
  p[0] = wasm_f32x4_extract_lane(v, 0);
  if (n > 1) p[1] = wasm_f32x4_extract_lane(v, 1);
  if (n > 2) p[2] = wasm_f32x4_extract_lane(v, 2);
}

// unary_f32 sets dst[i] = op(src[i]) for i < n; dst may be src.
__attribute__((export_name("unary_f32"))) void unary_f32(int op, float *dst, const float *src, int n) {
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    wasm_v128_store(dst + i, apply(op, wasm_v128_load(src + i)));
  }
  if (i < n) {
    store_part(dst + i, apply(op, load_part(src + i, n - i, 0.0f)), n - i);
  }
}

// sum2 adds v's four lanes to the two float64 pairs s.
static inline v128_t sum2(v128_t s, f4 v) {
  s = wasm_f64x2_add(s, wasm_f64x2_promote_low_f32x4(v));
  return wasm_f64x2_add(s, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1)));
}

// exp_sum_f32 is the softmax's exponentials: dst[i] = e^(x[i] - shift)
// (dst may be x, or NULL for the sum alone) and their sum in float64.
__attribute__((export_name("exp_sum_f32"))) double exp_sum_f32(float *dst, const float *x, int n, float shift) {
  const f4 sh = k(shift);
  v128_t s = wasm_f64x2_splat(0.0);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const f4 e = exp4(sub(wasm_v128_load(x + i), sh));
    if (dst) wasm_v128_store(dst + i, e);
    s = sum2(s, e);
  }
  if (i < n) {
    // The unused lanes are -inf - shift: e^-inf adds 0.
    const f4 e = exp4(sub(load_part(x + i, n - i, -__builtin_inff()), sh));
    if (dst) store_part(dst + i, e, n - i);
    s = sum2(s, e);
  }
  return wasm_f64x2_extract_lane(s, 0) + wasm_f64x2_extract_lane(s, 1);
}

// softmax_row_f32 is one softmax row: y[i] = e^(x[i] - max x), divided by
// their sum when normalise (as Go's y*(1/sum) + 0), and returns the sum in
// float64 (y may be x). NaN anywhere makes the row NaN. A row whose max is
// -inf (every element masked) is NaN like PyTorch's, or with safe all
// zeros and a sum of 1 (the attention kernels' rule).
__attribute__((export_name("softmax_row_f32"))) double softmax_row_f32(float *y, const float *x, int n, int normalise,
                                                                       int safe) {
  f4 m4 = k(-__builtin_inff());
  int i = 0;
  for (; i + 4 <= n; i += 4) m4 = wasm_f32x4_max(m4, wasm_v128_load(x + i));
  if (i < n) m4 = wasm_f32x4_max(m4, load_part(x + i, n - i, -__builtin_inff()));
  m4 = wasm_f32x4_max(m4, wasm_i32x4_shuffle(m4, m4, 2, 3, 0, 1));
  m4 = wasm_f32x4_max(m4, wasm_i32x4_shuffle(m4, m4, 1, 0, 3, 2));
  const float m = wasm_f32x4_extract_lane(m4, 0);
  if (safe && m == -__builtin_inff()) {
    for (i = 0; i < n; i++) y[i] = 0.0f;
    return 1.0;
  }
  const double s = exp_sum_f32(y, x, n, m);
  if (normalise) {
    const f4 inv = k((float)(1.0 / s));
    for (i = 0; i + 4 <= n; i += 4) wasm_v128_store(y + i, add(mul(wasm_v128_load(y + i), inv), k(0.0f)));
    for (; i < n; i++) y[i] = y[i] * (float)(1.0 / s) + 0.0f;
  }
  return s;
}

// layer_norm_row_f32 is one layer_norm row as layerNormKernel's f32 path
// computes it (backends/cpu/kernels_norm.go): the sums of x - x[0] and of
// its square in float64 (two lanes each, so in another order than Go's
// one), mean and 1/sqrt(variance + eps) from them, then y = (x - mean) *
// rstd, times w[i] and plus b[i] where given (w and b may be NULL), in
// float32 as Go's normGo. n > 0.
__attribute__((export_name("layer_norm_row_f32"))) void layer_norm_row_f32(float *y, const float *x, const float *w,
                                                                           const float *b, int n, double eps) {
  const double k0 = x[0];
  const v128_t kk = wasm_f64x2_splat(k0);
  v128_t s1 = wasm_f64x2_splat(0.0), s2 = s1;
  int i = 0;
  for (; i + 2 <= n; i += 2) {
    const v128_t d = wasm_f64x2_sub(wasm_f64x2_make(x[i], x[i + 1]), kk);
    s1 = wasm_f64x2_add(s1, d);
    s2 = wasm_f64x2_add(s2, wasm_f64x2_mul(d, d));
  }
  double t1 = wasm_f64x2_extract_lane(s1, 0) + wasm_f64x2_extract_lane(s1, 1);
  double t2 = wasm_f64x2_extract_lane(s2, 0) + wasm_f64x2_extract_lane(s2, 1);
  if (i < n) {
    const double d = (double)x[i] - k0;
    t1 += d;
    t2 += d * d;
  }
  const double nn = n, v = t2 - t1 * t1 / nn;
  const float m = (float)(k0 + t1 / nn);
  const float s = (float)(1.0 / __builtin_sqrt((v < 0 ? 0 : v) / nn + eps)); // NaN stays NaN, as math.Max
  const f4 m4 = k(m), s4 = k(s);
  for (i = 0; i + 4 <= n; i += 4) {
    f4 r = mul(sub(wasm_v128_load(x + i), m4), s4);
    if (w) r = mul(r, wasm_v128_load(w + i));
    if (b) r = add(r, wasm_v128_load(b + i));
    wasm_v128_store(y + i, r);
  }
  for (; i < n; i++) {
    float r = (x[i] - m) * s;
    if (w) r *= w[i];
    if (b) r += b[i];
    y[i] = r;
  }
}
