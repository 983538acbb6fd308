// Shared prelude of every CUDA kernel, compiled by NVRTC without any header:
// the argument block, the storage types, and the functions the expression
// dialect of backends/lower names (the same names as wgsl/common.wgsl, with
// CUDA's IEEE-accurate math where WGSL needed work-arounds).

typedef float f32;
typedef double f64;
typedef int i32;
typedef long long i64;
typedef unsigned int u32;
typedef unsigned long long u64;

#define WT_MAX_OPS 12
#define WT_MAX_RANK 8

// WtArgs is every kernel's one parameter; backends/cuda/args.go mirrors it
// field for field (a test compiles static_asserts of the offsets).
struct WtArgs {
  u64 buf[WT_MAX_OPS];               // device pointers of the operands
  i64 n;                             // element (or thread) count
  i64 shape[WT_MAX_RANK];            // iteration shape
  i64 off[WT_MAX_OPS];               // element offset of each operand
  i64 st[WT_MAX_OPS][WT_MAX_RANK];   // element strides, 0 where broadcast
  f64 f[8];                          // scalar slots: pf(k)
  i64 i[8];                          //               pi(k)
  u32 u[8];                          //               pu(k)
  i64 s[32];                         // kernel-specific integers
  u64 err;                           // device error word (see wt_fail)
  u32 launch;                        // launch number, reported with an error
  u32 pad;
};

#define pf(k) (A.f[(k)])
#define pi(k) (A.i[(k)])
#define pu(k) (A.u[(k)])

// ---- storage types ---------------------------------------------------------
// f16, bf16 and bool have their own types so that loads and stores pick the
// right conversion by overload.
struct wt_half { unsigned short b; };
struct wt_bf16 { unsigned short b; };
struct wt_bool { unsigned char b; };

#ifndef WT_EMU
__device__ __forceinline__ float h2f(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short f2h(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
#else
// The host compiler's _Float16 converts as the GPU's cvt does (IEEE,
// round to nearest even).
static inline float h2f(unsigned short h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
static inline unsigned short f2h(float f) { _Float16 x = (_Float16)f; unsigned short h; memcpy(&h, &x, 2); return h; }
#endif
__device__ __forceinline__ float bf2f(unsigned short b) { return __uint_as_float(((u32)b) << 16); }
__device__ __forceinline__ unsigned short f2bf(float f) {
  u32 u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                                   // round to nearest even
  return (unsigned short)(u >> 16);
}

__device__ __forceinline__ f32 ld(f32 v) { return v; }
__device__ __forceinline__ f32 ld(wt_half v) { return h2f(v.b); }
__device__ __forceinline__ f32 ld(wt_bf16 v) { return bf2f(v.b); }
__device__ __forceinline__ f64 ld(f64 v) { return v; }
__device__ __forceinline__ i64 ld(i64 v) { return v; }
__device__ __forceinline__ i32 ld(i32 v) { return v; }
__device__ __forceinline__ u32 ld(u32 v) { return v; }
__device__ __forceinline__ i32 ld(short v) { return v; }
__device__ __forceinline__ i32 ld(signed char v) { return v; }
__device__ __forceinline__ u32 ld(unsigned char v) { return v; }
__device__ __forceinline__ u32 ld(unsigned short v) { return v; }
__device__ __forceinline__ u32 ld(wt_bool v) { return v.b; }

// put stores a computed value into a storage type: floats round, narrow
// integers wrap (two's complement), bools store 0 or 1.
template <class V> __device__ __forceinline__ void put(f32 *p, V v) { *p = (f32)v; }
template <class V> __device__ __forceinline__ void put(wt_half *p, V v) { p->b = f2h((f32)v); }
template <class V> __device__ __forceinline__ void put(wt_bf16 *p, V v) { p->b = f2bf((f32)v); }
template <class V> __device__ __forceinline__ void put(f64 *p, V v) { *p = (f64)v; }
template <class V> __device__ __forceinline__ void put(i64 *p, V v) { *p = (i64)v; }
template <class V> __device__ __forceinline__ void put(i32 *p, V v) { *p = (i32)v; }
template <class V> __device__ __forceinline__ void put(u32 *p, V v) { *p = (u32)v; }
template <class V> __device__ __forceinline__ void put(short *p, V v) { *p = (short)(i32)v; }
template <class V> __device__ __forceinline__ void put(signed char *p, V v) { *p = (signed char)(i32)v; }
template <class V> __device__ __forceinline__ void put(unsigned char *p, V v) { *p = (unsigned char)(u32)v; }
template <class V> __device__ __forceinline__ void put(unsigned short *p, V v) { *p = (unsigned short)(u32)v; }
template <class V> __device__ __forceinline__ void put(wt_bool *p, V v) { p->b = v != 0 ? 1 : 0; }

// ---- the dialect's builtins ------------------------------------------------
// The result is the operands' common type as a value: decltype of the
// parameters themselves would be a reference to a dead local.
template <class F, class T>
__device__ __forceinline__ auto select(F f, T t, bool c) -> decltype(true ? F() : T()) {
  return c ? t : f;
}

template <class T, class U>
__device__ __forceinline__ T bitcast(U u) {
  static_assert(sizeof(T) == sizeof(U), "bitcast between types of different sizes");
  union { U u; T t; } x;
  x.u = u;
  return x.t;
}

__device__ __forceinline__ bool is_nan(f32 x) { return x != x; }
__device__ __forceinline__ bool is_nan(f64 x) { return x != x; }
__device__ __forceinline__ bool is_inf(f32 x) { return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u; }
__device__ __forceinline__ bool is_inf(f64 x) { return (__double_as_longlong(x) & 0x7fffffffffffffffLL) == 0x7ff0000000000000LL; }
__device__ __forceinline__ f32 f_nan() { return __uint_as_float(0x7fc00000u); }
__device__ __forceinline__ f64 wt_inf64() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ f32 f_inf() { return __uint_as_float(0x7f800000u); }

// WGSL builtins under w_ names, so they cannot clash with CUDA's overloads.
__device__ __forceinline__ f32 w_abs(f32 x) { return fabsf(x); }
__device__ __forceinline__ f64 w_abs(f64 x) { return fabs(x); }
__device__ __forceinline__ i32 w_abs(i32 x) { return x < 0 ? (i32)(0u - (u32)x) : x; }
__device__ __forceinline__ i64 w_abs(i64 x) { return x < 0 ? (i64)(0ull - (u64)x) : x; }
__device__ __forceinline__ u32 w_abs(u32 x) { return x; }
template <class T> __device__ __forceinline__ T w_min(T a, T b) { return b < a ? b : a; }
template <class T> __device__ __forceinline__ T w_max(T a, T b) { return a < b ? b : a; }
__device__ __forceinline__ f32 w_min(f32 a, f32 b) { return fminf(a, b); }
__device__ __forceinline__ f32 w_max(f32 a, f32 b) { return fmaxf(a, b); }
__device__ __forceinline__ f32 w_floor(f32 x) { return floorf(x); }
__device__ __forceinline__ f64 w_floor(f64 x) { return floor(x); }
__device__ __forceinline__ f32 w_ceil(f32 x) { return ceilf(x); }
__device__ __forceinline__ f64 w_ceil(f64 x) { return ceil(x); }
// WGSL's round is half to even.
__device__ __forceinline__ f32 w_round(f32 x) { return rintf(x); }
__device__ __forceinline__ f64 w_round(f64 x) { return rint(x); }
__device__ __forceinline__ f32 w_trunc(f32 x) { return truncf(x); }
__device__ __forceinline__ f64 w_trunc(f64 x) { return trunc(x); }
template <class T> __device__ __forceinline__ T w_sign(T x) { return (T)((x > (T)0) - (x < (T)0)); }
__device__ __forceinline__ f32 w_sqrt(f32 x) { return sqrtf(x); }
__device__ __forceinline__ f64 w_sqrt(f64 x) { return sqrt(x); }
__device__ __forceinline__ f32 w_exp(f32 x) { return expf(x); }
__device__ __forceinline__ f64 w_exp(f64 x) { return exp(x); }
__device__ __forceinline__ f32 w_log(f32 x) { return logf(x); }
__device__ __forceinline__ f64 w_log(f64 x) { return log(x); }
__device__ __forceinline__ f32 w_sin(f32 x) { return sinf(x); }
__device__ __forceinline__ f32 w_cos(f32 x) { return cosf(x); }
__device__ __forceinline__ f32 w_fmod(f32 a, f32 b) { return fmodf(a, b); }
__device__ __forceinline__ f64 w_fmod(f64 a, f64 b) { return fmod(a, b); }
template <class T> __device__ __forceinline__ T w_clamp(T x, T lo, T hi) { return w_min(w_max(x, lo), hi); }

// ---- the m_ and f_ helpers of common.wgsl ------------------------------------
__device__ __forceinline__ f32 m_exp(f32 x) { return expf(x); }
__device__ __forceinline__ f64 m_exp(f64 x) { return exp(x); }
__device__ __forceinline__ f32 m_expm1(f32 x) { return expm1f(x); }
__device__ __forceinline__ f64 m_expm1(f64 x) { return expm1(x); }
__device__ __forceinline__ f32 m_log(f32 x) { return logf(x); }
__device__ __forceinline__ f64 m_log(f64 x) { return log(x); }
__device__ __forceinline__ f32 m_log1p(f32 x) { return log1pf(x); }
__device__ __forceinline__ f64 m_log1p(f64 x) { return log1p(x); }
__device__ __forceinline__ f32 m_sqrt(f32 x) { return sqrtf(x); }
__device__ __forceinline__ f64 m_sqrt(f64 x) { return sqrt(x); }
__device__ __forceinline__ f32 m_tanh(f32 x) { return tanhf(x); }
__device__ __forceinline__ f64 m_tanh(f64 x) { return tanh(x); }
__device__ __forceinline__ f32 m_sigmoid(f32 x) {
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
  f32 e = expf(x);
  return e / (1.0f + e);
}
__device__ __forceinline__ f64 m_sigmoid(f64 x) {
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  f64 e = exp(x);
  return e / (1.0 + e);
}
__device__ __forceinline__ bool m_trig_arg(f32 x) { return is_nan(x) || is_inf(x); }
__device__ __forceinline__ bool m_trig_arg(f64 x) { return is_nan(x) || is_inf(x); }
__device__ __forceinline__ f32 m_sin(f32 x) { return sinf(x); }
__device__ __forceinline__ f64 m_sin(f64 x) { return sin(x); }
__device__ __forceinline__ f32 m_cos(f32 x) { return cosf(x); }
__device__ __forceinline__ f64 m_cos(f64 x) { return cos(x); }
__device__ __forceinline__ f32 m_tan(f32 x) { return tanf(x); }
__device__ __forceinline__ f64 m_tan(f64 x) { return tan(x); }
__device__ __forceinline__ f32 m_erf(f32 x) { return erff(x); }
__device__ __forceinline__ f64 m_erf(f64 x) { return erf(x); }
__device__ __forceinline__ f32 m_erfc(f32 x) { return erfcf(x); }
__device__ __forceinline__ f64 m_erfc(f64 x) { return erfc(x); }
__device__ __forceinline__ f32 m_atan2(f32 a, f32 b) { return atan2f(a, b); }
__device__ __forceinline__ f64 m_atan2(f64 a, f64 b) { return atan2(a, b); }
template <class T> __device__ __forceinline__ T m_sgn(T x) { return is_nan(x) ? x : w_sign(x); }
template <class T> __device__ __forceinline__ bool m_is_top(T x, T n) { return w_abs(x) == n || (is_nan(x) && is_nan(n)); }
__device__ __forceinline__ f32 m_gelu_tanh_grad(f32 x) {
  f32 s = m_sigmoid(1.5957691216f * (x + 0.044715f * x * x * x));
  return s + 2.0f * x * s * (1.0f - s) * 0.7978845608f * (1.0f + 0.134145f * x * x);
}
__device__ __forceinline__ f64 m_gelu_tanh_grad(f64 x) {
  f64 s = m_sigmoid(1.5957691216 * (x + 0.044715 * x * x * x));
  return s + 2.0 * x * s * (1.0 - s) * 0.7978845608 * (1.0 + 0.134145 * x * x);
}

// Python-style integer floor division and remainder. The divisor is never
// zero here: kernels that divide check it first (wt_fail).
template <class T> __device__ __forceinline__ T i_floordiv(T a, T b) {
  if (b == 0) return 0;
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) return q - 1;
  return q;
}
template <class T> __device__ __forceinline__ T i_rem(T a, T b) {
  if (b == 0) return 0;
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) return r + b;
  return r;
}
template <class T> __device__ __forceinline__ T f_rem(T a, T b) {
  if (b == (T)0 || is_inf(a) || is_nan(a) || is_nan(b)) return (T)f_nan();
  if (a == (T)0) return b < (T)0 ? -(T)0 : (T)0;  // a zero result has b's sign (Python's %)
  if (is_inf(b)) {
    if ((a < (T)0) == (b < (T)0)) return a;
    return b;
  }
  T m = w_fmod(a, b);
  if (m == (T)0) return b < (T)0 ? -(T)0 : (T)0;
  if ((b < (T)0) != (m < (T)0)) m += b;
  return m;
}
template <class T> __device__ __forceinline__ T f_floordiv(T a, T b) {
  if (b == (T)0 || is_inf(b) || is_nan(a) || is_nan(b) || is_inf(a)) return w_floor(a / b);
  T m = f_rem(a, b);
  return w_round((a - m) / b);
}
template <class T> __device__ __forceinline__ T i_pow(T a, T b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2 == 0) ? 1 : -1;
    return 0;
  }
  T r = 1;
  for (; b > 0; b >>= 1) {
    if (b & 1) r = (T)((u64)r * (u64)a);
    a = (T)((u64)a * (u64)a);
  }
  return r;
}
__device__ __forceinline__ f32 f_pow(f32 a, f32 b) { return powf(a, b); }
__device__ __forceinline__ f64 f_pow(f64 a, f64 b) { return pow(a, b); }

// ---- Philox4x32-10 (core/numerics/philox.go) --------------------------------
// philox_bits is element i's 32 bits of a stream under the seed and offset
// in A.i[0] and A.i[1]: lane i%4 of block offset + i/4.
__device__ __forceinline__ u32 philox_bits(const WtArgs &A, i64 i, u32 stream) {
  const u64 seed = (u64)A.i[0], block = (u64)A.i[1] + (u64)i / 4;
  u32 k0 = (u32)seed, k1 = (u32)(seed >> 32);
  u32 c0 = (u32)block, c1 = (u32)(block >> 32), c2 = stream, c3 = 0;
#pragma unroll
  for (int r = 0; r < 10; r++) {
    const u64 p0 = (u64)0xD2511F53u * c0, p1 = (u64)0xCD9E8D57u * c2;
    const u32 n0 = (u32)(p1 >> 32) ^ c1 ^ k0, n2 = (u32)(p0 >> 32) ^ c3 ^ k1;
    c1 = (u32)p1;
    c3 = (u32)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  switch (i % 4) {
    case 0: return c0;
    case 1: return c1;
    case 2: return c2;
  }
  return c3;
}

// philox_normal is numerics.PhiloxNormal: Box-Muller over streams 0 and 1.
__device__ __forceinline__ f64 philox_normal(const WtArgs &A, i64 i) {
  const f64 a = (f64)(philox_bits(A, i, 0u) >> 8) * (1.0 / 16777216.0);
  const f64 b = (f64)(philox_bits(A, i, 1u) >> 8) * (1.0 / 16777216.0);
  return sqrt(-2.0 * log(1.0 - a)) * cos(2.0 * 3.141592653589793 * b);
}

// ---- indexing and errors ---------------------------------------------------

// wt_fail records the first failed check of the launch: code (which check,
// see checks.go), the launch number and two values for the message. The
// host reads the word at its next synchronisation and raises the error
// there, naming the op; the kernel carries on without the bad access.
__device__ __noinline__ void wt_fail(const WtArgs &A, u32 code, i64 a, i64 b) {
  u64 *e = (u64 *)A.err;
  if (atomicCAS(e, 0ull, (u64)code | ((u64)A.launch << 32)) == 0ull) {
    e[1] = (u64)a;
    e[2] = (u64)b;
  }
}

// Block-wide reductions over 32-lane warps.
template <class T> __device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
