// Fourier transforms (kernels_fft.go): radix-2 stages over complex values
// of type T (f32 or f64). The forward transform is decimation in
// frequency (natural order in, bit-reversed out); Bluestein's convolution
// multiplies two spectra in that bit-reversed order and comes back through
// decimation in time (bit-reversed in, natural out), so no permutation
// pass is needed. Twiddles and chirps are computed in f64.

template <class T> struct Cpx {
  T re, im;
};
template <class T> __device__ __forceinline__ Cpx<T> cpx(T re, T im) {
  Cpx<T> c;
  c.re = re;
  c.im = im;
  return c;
}
template <class T> __device__ __forceinline__ Cpx<T> cadd(Cpx<T> a, Cpx<T> b) { return cpx(a.re + b.re, a.im + b.im); }
template <class T> __device__ __forceinline__ Cpx<T> csub(Cpx<T> a, Cpx<T> b) { return cpx(a.re - b.re, a.im - b.im); }
template <class T> __device__ __forceinline__ Cpx<T> cmul(Cpx<T> a, Cpx<T> b) {
  return cpx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <class T> __device__ __forceinline__ Cpx<T> cconj(Cpx<T> a) { return cpx(a.re, -a.im); }
template <class T> __device__ __forceinline__ Cpx<T> cscale(Cpx<T> a, T s) { return cpx(a.re * s, a.im * s); }

#ifdef WT_EMU
static inline void wt_sincospi(double x, double *s, double *c) {
  const double a = 3.14159265358979323846 * x;
  *s = sin(a);
  *c = cos(a);
}
#else
__device__ __forceinline__ void wt_sincospi(double x, double *s, double *c) { sincospi(x, s, c); }
#endif

// wt_expi_pi is e^{i pi x}.
template <class T> __device__ __forceinline__ Cpx<T> wt_expi_pi(double x) {
  double s, c;
  wt_sincospi(x, &s, &c);
  return cpx((T)c, (T)s);
}

// wt_chirp is Bluestein's e^{-i pi k^2 / n}, the angle reduced exactly (k^2
// mod 2n) as the CPU does.
template <class T> __device__ __forceinline__ Cpx<T> wt_chirp(long long k, long long n) {
  const long long q = (k * k) % (2 * n);
  return wt_expi_pi<T>(-(double)q / (double)n);
}

// wt_twiddle is e^{-2 pi i k / s}.
template <class T> __device__ __forceinline__ Cpx<T> wt_twiddle(long long k, long long s) {
  return wt_expi_pi<T>(-2.0 * (double)k / (double)s);
}

__device__ __forceinline__ int wt_log2(long long m) {
  int l = 0;
  while ((1ll << l) < m) l++;
  return l;
}

// wt_bitrev reverses the low bits bits of x.
__device__ __forceinline__ u32 wt_bitrev(u32 x, int bits) {
  if (bits == 0) return 0;
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  x = (x >> 16) | (x << 16);
  return x >> (32 - bits);
}

// wt_twiddles fills tw[k] = e^{-2 pi i k / m} for k < m/2. The block
// synchronises after it.
template <class T> __device__ void wt_twiddles(Cpx<T> *tw, int m) {
  for (int k = threadIdx.x; k < m / 2; k += blockDim.x) tw[k] = wt_twiddle<T>(k, m);
  __syncthreads();
}

// wt_dif runs the decimation-in-frequency stages of spans m down to 2 on
// the segments of m values in d[0, total); tw holds the twiddles of twm
// (a multiple of m).
template <class T> __device__ void wt_dif(Cpx<T> *d, const Cpx<T> *tw, int m, int total, int twm) {
  for (int s = m; s >= 2; s >>= 1) {
    const int h = s >> 1, step = twm / s;
    for (int b = threadIdx.x; b < total / 2; b += blockDim.x) {
      const int g = b / h, k = b - g * h, i = g * s + k, j = i + h;
      const Cpx<T> a = d[i], c = d[j];
      d[i] = cadd(a, c);
      d[j] = cmul(csub(a, c), tw[k * step]);
    }
    __syncthreads();
  }
}

// wt_dit_inv runs the decimation-in-time stages of spans 2 up to m with
// conjugate twiddles: the unnormalised inverse transform of bit-reversed
// segments, in natural order.
template <class T> __device__ void wt_dit_inv(Cpx<T> *d, const Cpx<T> *tw, int m, int total, int twm) {
  for (int s = 2; s <= m; s <<= 1) {
    const int h = s >> 1, step = twm / s;
    for (int b = threadIdx.x; b < total / 2; b += blockDim.x) {
      const int g = b / h, k = b - g * h, i = g * s + k, j = i + h;
      const Cpx<T> a = d[i], t = cmul(d[j], cconj(tw[k * step]));
      d[i] = cadd(a, t);
      d[j] = csub(a, t);
    }
    __syncthreads();
  }
}

// wt_filter_at is Bluestein's convolution filter before its transform:
// the conjugate chirp at t and at m - t, zero between.
template <class T> __device__ __forceinline__ Cpx<T> wt_filter_at(long long t, long long n, long long m) {
  if (t < n) return cconj(wt_chirp<T>(t, n));
  if (t > m - n) return cconj(wt_chirp<T>(m - t, n));
  return cpx((T)0, (T)0);
}
