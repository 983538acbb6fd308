// Accumulators of the reduction kernels (kernels_reduce.go). Each is a
// plain struct: init() the identity, push(v, r) one member (r its index in
// the group, in increasing order within a thread), merge(o) another
// accumulator over later members, so partial results can be combined in any
// tree. Sizes are multiples of 4 bytes: group reductions move them through
// warp shuffles word by word, and partials are stored in 32-byte slots.

template <class T> __device__ __forceinline__ bool nan_(T x) { return x != x; }

template <class T> struct SumAcc {
  T s;
  __device__ void init() { s = (T)0; }
  __device__ void push(T v, i64) { s += v; }
  __device__ void merge(const SumAcc &o) { s += o.s; }
};

template <class T> struct ProdAcc {
  T p;
  __device__ void init() { p = (T)1; }
  __device__ void push(T v, i64) { p = (T)(p * v); }
  __device__ void merge(const ProdAcc &o) { p = (T)(p * o.p); }
};

// MaxAcc and MinAcc: NaN, once met, is the result.
template <class T, bool MAX> struct ExtAcc {
  T m;
  u32 any, pad;
  __device__ void init() { any = 0; m = (T)0; }
  __device__ void push(T v, i64) {
    if (!any) { m = v; any = 1; return; }
    if (nan_(m)) return;
    if (nan_(v) || (MAX ? v > m : v < m)) m = v;
  }
  __device__ void merge(const ExtAcc &o) { if (o.any) push(o.m, 0); }
};

// ArgAcc: the first index of the best value; the first NaN wins.
template <class T, bool MAX> struct ArgAcc {
  T v;
  u32 any, pad;
  i64 at;
  __device__ void init() { any = 0; v = (T)0; at = 0; }
  __device__ void push(T x, i64 r) {
    if (!any) { v = x; at = r; any = 1; return; }
    if (nan_(v)) return;
    if (nan_(x) || (MAX ? x > v : x < v)) { v = x; at = r; }
  }
  __device__ void merge(const ArgAcc &o) {
    if (!o.any) return;
    if (!any) { *this = o; return; }
    bool take;
    if (nan_(v) && nan_(o.v)) take = o.at < at;
    else if (nan_(v)) take = false;
    else if (nan_(o.v)) take = true;
    else if (o.v == v) take = o.at < at;
    else take = MAX ? o.v > v : o.v < v;
    if (take) { v = o.v; at = o.at; }
  }
};

struct AnyAcc {
  u32 b;
  __device__ void init() { b = 0; }
  __device__ void push(bool v, i64) { b = b || v; }
  __device__ void merge(const AnyAcc &o) { b = b || o.b; }
};

struct AllAcc {
  u32 b;
  __device__ void init() { b = 1; }
  __device__ void push(bool v, i64) { b = b && v; }
  __device__ void merge(const AllAcc &o) { b = b && o.b; }
};

// Welford's running mean and sum of squared deviations, merged with Chan's
// formula: one pass, no cancellation.
struct VarAcc {
  f64 n, mean, m2;
  __device__ void init() { n = 0; mean = 0; m2 = 0; }
  __device__ void push(f64 x, i64) {
    n += 1;
    f64 d = x - mean;
    mean += d / n;
    m2 += d * (x - mean);
  }
  __device__ void merge(const VarAcc &o) {
    if (o.n == 0) return;
    if (n == 0) { *this = o; return; }
    f64 t = n + o.n, d = o.mean - mean;
    mean += d * (o.n / t);
    m2 += o.m2 + d * d * (n * o.n / t);
    n = t;
  }
};

// LseAcc: log(sum(exp(x))) online. As PyTorch does, an infinite maximum is
// not subtracted: any NaN gives NaN, any +inf gives +inf, all -inf gives
// -inf.
struct LseAcc {
  f64 m, s;
  u32 nan, posinf;
  __device__ void init() { m = -__longlong_as_double(0x7ff0000000000000LL); s = 0; nan = 0; posinf = 0; }
  __device__ void push(f64 x, i64) {
    if (x != x) { nan = 1; return; }
    if (is_inf(x)) { if (x > 0) posinf = 1; return; }
    if (x > m) { s = s * exp(m - x) + 1.0; m = x; }
    else s += exp(x - m);
  }
  __device__ void merge(const LseAcc &o) {
    nan |= o.nan;
    posinf |= o.posinf;
    if (o.s == 0) return;
    if (s == 0) { m = o.m; s = o.s; return; }
    if (o.m > m) { s = s * exp(m - o.m) + o.s; m = o.m; }
    else s += o.s * exp(o.m - m);
  }
  __device__ f64 result() const {
    if (nan) return __longlong_as_double(0x7ff8000000000000LL);
    if (posinf) return __longlong_as_double(0x7ff0000000000000LL);
    if (s == 0) return -__longlong_as_double(0x7ff0000000000000LL);
    return log(s) + m;
  }
};

template <class T> __device__ __forceinline__ T shfl_down_acc(const T &v, int d) {
  static_assert(sizeof(T) % 4 == 0, "accumulators are whole 32-bit words");
  T r;
  const u32 *s = (const u32 *)&v;
  u32 *t = (u32 *)&r;
#pragma unroll
  for (int i = 0; i < (int)(sizeof(T) / 4); i++) t[i] = __shfl_down_sync(0xffffffffu, s[i], d);
  return r;
}

// group_reduce merges the accumulators of a group of G threads (G is 1 or
// a multiple of 32 up to 256) into the group's first thread. Every thread
// of the block calls it (it synchronises the block when G > 32).
template <int G, class ACC> __device__ __forceinline__ void group_reduce(ACC &acc, ACC *sh) {
  if (G == 1) return;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    ACC o = shfl_down_acc(acc, d);
    acc.merge(o);
  }
  if (G > 32) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % G;
    if (threadIdx.x % 32 == 0) sh[warp] = acc;
    __syncthreads();
    if (lane == 0)
      for (int w = 1; w < G / 32; w++) acc.merge(sh[warp + w]);
    __syncthreads();
  }
}

// SoftAcc: the running maximum m and sum s of exp(x - m) of online
// softmax, equal to the two-pass form's: NaN, once met, is both; -inf
// members add nothing (a row of them keeps m = -inf and s = 0, and every
// use of such a row then gives NaN, as exp(-inf - -inf) does); exp(x - x)
// rather than 1 makes a +inf maximum give NaN as the two-pass form does.
template <class T> struct SoftAcc {
  T m, s;
  u32 n, pad;
  __device__ static T term(T x, T m) { return (x < m && is_inf(x)) ? (T)0 : w_exp(x - m); }
  __device__ void init() { m = (T)0; s = (T)0; n = 0; }
  __device__ void push(T x, i64) {
    if (n > 0 && nan_(m)) return;
    if (nan_(x)) { m = x; s = x; n++; return; }
    if (n == 0 || x > m) {
      const T neg_inf = -(T)wt_inf64();
      s = (n == 0 ? (T)0 : s * w_exp(m - x)) + (x == neg_inf ? (T)0 : w_exp(x - x));
      m = x;
    } else if (x != -(T)wt_inf64()) {
      s += w_exp(x - m);
    }
    n++;
  }
  __device__ void merge(const SoftAcc &o) {
    if (o.n == 0) return;
    if (n == 0 || nan_(o.m)) { if (!(n > 0 && nan_(m))) *this = o; return; }
    if (nan_(m)) return;
    if (o.m > m) { s = s * w_exp(m - o.m) + o.s; m = o.m; }
    else if (o.m != -(T)wt_inf64()) s += o.s * w_exp(o.m - m);
    n += o.n;
  }
};

// P2 and Sum2Acc sum two values at once (a loss and its divisor).
struct P2 { f64 a, b; };
__device__ __forceinline__ P2 p2(f64 a, f64 b) { P2 p; p.a = a; p.b = b; return p; }
struct Sum2Acc {
  f64 a, b;
  __device__ void init() { a = 0; b = 0; }
  __device__ void push(P2 v, i64) { a += v.a; b += v.b; }
  __device__ void merge(const Sum2Acc &o) { a += o.a; b += o.b; }
};
