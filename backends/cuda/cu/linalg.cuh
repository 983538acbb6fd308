// Matrix factorisations (backends/cuda/kernels_linalg_decomp.go): one block
// of WT_LA threads per matrix, the grid striding over the batch. Each runs
// the CPU backend's algorithm (backends/cpu/kernels_linalg_*.go) in the
// order wgsl/linalg_factor.wgsl and wgsl/linalg_jacobi.wgsl use: scalar
// decisions (a pivot, a rotation) are worked out by every thread from the
// same values, vector steps are split over the threads, and __syncthreads
// separates the steps. T is the compute type: f32 for f32 tensors, f64 for
// f64. Operands are dense row-major at A.off; A.s holds the sizes.

#define WT_LA 64

template <class T> __device__ __forceinline__ T wt_la_eps() {
  return sizeof(T) == 8 ? (T)2.220446049250313e-16 : (T)1.1920928955078125e-07;
}

template <class T> __device__ __forceinline__ T *wt_la_buf(const WtArgs &A, int k) { return (T *)A.buf[k] + A.off[k]; }

// LU with partial pivoting (the first largest pivot; a zero column is
// skipped, as getf2 does). s: 0 batch, 1 n, 2 right-hand sides k.
// solve: buffers a, b, x, w (scratch); det: a, sign, logabsdet, w.
template <class T> __device__ void wt_lu(const WtArgs &A, bool solve) {
  const long long batch = A.s[0], n = A.s[1], k = solve ? A.s[2] : 0;
  const int t = threadIdx.x;
  for (long long m = blockIdx.x; m < batch; m += gridDim.x) {
    const T *a = wt_la_buf<T>(A, 0) + m * n * n;
    T *w = wt_la_buf<T>(A, 3) + m * n * n;
    T *x = solve ? wt_la_buf<T>(A, 2) + m * n * k : 0;
    for (long long e = t; e < n * n; e += WT_LA) w[e] = a[e];
    if (solve) {
      const T *b = wt_la_buf<T>(A, 1) + m * n * k;
      for (long long e = t; e < n * k; e += WT_LA) x[e] = b[e];
    }
    __syncthreads();
    int swaps = 0;
    for (long long c = 0; c < n; c++) {
      long long p = c;
      T best = w_abs(w[c * n + c]);
      for (long long i = c + 1; i < n; i++) {
        const T v = w_abs(w[i * n + c]);
        if (v > best) { p = i; best = v; }
      }
      __syncthreads();
      if (p != c) {
        swaps++;
        for (long long j = t; j < n; j += WT_LA) { const T u = w[c * n + j]; w[c * n + j] = w[p * n + j]; w[p * n + j] = u; }
        for (long long j = t; j < k; j += WT_LA) { const T u = x[c * k + j]; x[c * k + j] = x[p * k + j]; x[p * k + j] = u; }
      }
      __syncthreads();
      const T piv = w[c * n + c];
      if (piv != 0) {
        for (long long i = c + 1 + t; i < n; i += WT_LA) {
          const T l = w[i * n + c] / piv;
          w[i * n + c] = l;
          for (long long j = c + 1; j < n; j++) w[i * n + j] -= l * w[c * n + j];
          for (long long j = 0; j < k; j++) x[i * k + j] -= l * x[c * k + j];
        }
      }
      __syncthreads();
    }
    if (solve) {
      for (long long j = t; j < k; j += WT_LA) {
        for (long long c = n - 1; c >= 0; c--) {
          const T v = x[c * k + j] / w[c * n + c];
          x[c * k + j] = v;
          for (long long i = 0; i < c; i++) x[i * k + j] -= w[i * n + c] * v;
        }
      }
    } else if (t == 0) {
      T sg = (swaps & 1) ? (T)-1 : (T)1, lg = 0;
      bool zero = false;
      for (long long c = 0; c < n; c++) {
        const T u = w[c * n + c];
        zero = zero || u == 0;
        if (u < 0) sg = -sg;
        lg += w_log(w_abs(u));
      }
      wt_la_buf<T>(A, 1)[m] = zero ? (T)0 : sg;
      wt_la_buf<T>(A, 2)[m] = zero ? (T)__longlong_as_double((long long)0xfff0000000000000ULL) : lg;
    }
    __syncthreads();
  }
}

// Right-looking Cholesky in the output (buffers a, l): L starts as a's
// lower triangle. s: 0 batch, 1 n, 2 upper (write U = Lᵀ).
template <class T> __device__ void wt_cholesky(const WtArgs &A) {
  const long long batch = A.s[0], n = A.s[1];
  const bool upper = A.s[2] != 0;
  const int t = threadIdx.x;
  for (long long m = blockIdx.x; m < batch; m += gridDim.x) {
    const T *a = wt_la_buf<T>(A, 0) + m * n * n;
    T *l = wt_la_buf<T>(A, 1) + m * n * n;
#define WT_AT(i, j) (upper ? (j) * n + (i) : (i) * n + (j))
    for (long long e = t; e < n * n; e += WT_LA) {
      const long long i = e / n, j = e % n;
      l[WT_AT(i, j)] = j <= i ? a[e] : (T)0;
    }
    __syncthreads();
    for (long long j = 0; j < n; j++) {
      const T d = w_sqrt(l[WT_AT(j, j)]);
      __syncthreads();
      if (t == 0) l[WT_AT(j, j)] = d;
      for (long long i = j + 1 + t; i < n; i += WT_LA) l[WT_AT(i, j)] /= d;
      __syncthreads();
      for (long long i = j + 1 + t; i < n; i += WT_LA) {
        const T lij = l[WT_AT(i, j)];
        for (long long c = j + 1; c <= i; c++) l[WT_AT(i, c)] -= lij * l[WT_AT(c, j)];
      }
      __syncthreads();
    }
#undef WT_AT
  }
}

// Householder QR with LAPACK's reflectors (buffers a, q, r, w, tau).
// s: 0 batch, 1 m, 2 n, 3 Q's columns, 4 R's rows.
template <class T> __device__ void wt_qr(const WtArgs &A) {
  const long long batch = A.s[0], M = A.s[1], N = A.s[2], qc = A.s[3], rr = A.s[4];
  const long long kk = M < N ? M : N;
  const int t = threadIdx.x;
  for (long long m = blockIdx.x; m < batch; m += gridDim.x) {
    const T *a = wt_la_buf<T>(A, 0) + m * M * N;
    T *q = wt_la_buf<T>(A, 1) + m * M * qc;
    T *r = wt_la_buf<T>(A, 2) + m * rr * N;
    T *w = wt_la_buf<T>(A, 3) + m * M * N;
    T *tau = wt_la_buf<T>(A, 4) + m * kk;
    for (long long e = t; e < M * N; e += WT_LA) w[e] = a[e];
    __syncthreads();
    for (long long j = 0; j < kk; j++) {
      const T alpha = w[j * N + j];
      T ss = 0;
      for (long long i = j + 1; i < M; i++) ss += w[i * N + j] * w[i * N + j];
      const bool some = ss != 0;
      const T nrm = w_sqrt(alpha * alpha + ss);
      const T beta = alpha >= 0 ? -nrm : nrm;
      const T tj = some ? (beta - alpha) / beta : (T)0;
      const T scale = some ? (T)1 / (alpha - beta) : (T)1;
      __syncthreads();
      for (long long i = j + 1 + t; i < M; i += WT_LA) w[i * N + j] *= scale;
      if (t == 0) {
        if (some) w[j * N + j] = beta;
        tau[j] = tj;
      }
      __syncthreads();
      for (long long c = j + 1 + t; c < N; c += WT_LA) {
        T s = w[j * N + c];
        for (long long i = j + 1; i < M; i++) s += w[i * N + j] * w[i * N + c];
        s *= tj;
        w[j * N + c] -= s;
        for (long long i = j + 1; i < M; i++) w[i * N + c] -= s * w[i * N + j];
      }
      __syncthreads();
    }
    for (long long e = t; e < rr * N; e += WT_LA) r[e] = e % N >= e / N ? w[e] : (T)0;
    for (long long e = t; e < M * qc; e += WT_LA) q[e] = e / qc == e % qc ? (T)1 : (T)0;
    __syncthreads();
    for (long long j = kk - 1; j >= 0; j--) {
      const T tj = tau[j];
      for (long long c = j + t; c < qc; c += WT_LA) {
        T s = q[j * qc + c];
        for (long long i = j + 1; i < M; i++) s += w[i * N + j] * q[i * qc + c];
        s *= tj;
        q[j * qc + c] -= s;
        for (long long i = j + 1; i < M; i++) q[i * qc + c] -= s * w[i * N + j];
      }
      __syncthreads();
    }
  }
}

// wt_la_rotation is t = s/c of the Jacobi rotation zeroing x in
// [[a, x], [x, d]] (the smaller root).
template <class T> __device__ __forceinline__ T wt_la_rotation(T a, T d, T x) {
  const T theta = (d - a) / (2 * x);
  const T r = 1 / (w_abs(theta) + w_sqrt(theta * theta + 1));
  return theta < 0 ? -r : r;
}

template <class T> __device__ __forceinline__ bool wt_la_negligible(T x, T a, T d) {
  return x == 0 || w_abs(x) <= wt_la_eps<T>() * w_sqrt(w_abs(a)) * w_sqrt(w_abs(d));
}

// wt_la_before says whether o sorts before x: smaller (larger when desc),
// or a number before NaN, so that ranks are a permutation whatever the values.
template <class T> __device__ __forceinline__ bool wt_la_before(T o, T x, bool desc) {
  return (desc ? o > x : o < x) || (o == o && x != x);
}

// wt_la_sum3 sums three values over the block (every thread gets them).
template <class T> __device__ void wt_la_sum3(T *red, T &x, T &y, T &z) {
  const int t = threadIdx.x;
  red[t] = x;
  red[WT_LA + t] = y;
  red[2 * WT_LA + t] = z;
  __syncthreads();
  for (int s = WT_LA / 2; s > 0; s >>= 1) {
    if (t < s) {
      red[t] += red[t + s];
      red[WT_LA + t] += red[WT_LA + t + s];
      red[2 * WT_LA + t] += red[2 * WT_LA + t + s];
    }
    __syncthreads();
  }
  x = red[0];
  y = red[WT_LA];
  z = red[2 * WT_LA];
  __syncthreads();
}

// Cyclic two-sided Jacobi on the lower triangle mirrored (buffers a,
// values, vectors, scratch W and V). s: 0 batch, 1 n, 2 the most sweeps.
template <class T> __device__ void wt_eigh(const WtArgs &A) {
  const long long batch = A.s[0], n = A.s[1], sweeps = A.s[2];
  const int t = threadIdx.x;
  __shared__ int rotated;
  for (long long m = blockIdx.x; m < batch; m += gridDim.x) {
    const T *a = wt_la_buf<T>(A, 0) + m * n * n;
    T *w = wt_la_buf<T>(A, 3) + m * 2 * n * n;
    T *v = w + n * n;
    for (long long e = t; e < n * n; e += WT_LA) {
      const long long i = e / n, j = e % n;
      w[e] = a[(i > j ? i : j) * n + (i < j ? i : j)];
      v[e] = i == j ? (T)1 : (T)0;
    }
    __syncthreads();
    for (long long sweep = 0; sweep < sweeps; sweep++) {
      if (t == 0) rotated = 0;
      __syncthreads();
      for (long long p = 0; p + 1 < n; p++) {
        for (long long q = p + 1; q < n; q++) {
          const T app = w[p * n + p], aqq = w[q * n + q], apq = w[p * n + q];
          const bool skip = wt_la_negligible(apq, app, aqq);
          const T tt = skip ? (T)0 : wt_la_rotation(app, aqq, apq);
          const T c = 1 / w_sqrt(tt * tt + 1), s = tt * c;
          __syncthreads();
          if (!skip) {
            for (long long k = t; k < n; k += WT_LA) {
              if (k != p && k != q) {
                const T akp = w[k * n + p], akq = w[k * n + q];
                const T np = c * akp - s * akq, nq = s * akp + c * akq;
                w[k * n + p] = np;
                w[k * n + q] = nq;
                w[p * n + k] = np;
                w[q * n + k] = nq;
              }
              const T vkp = v[k * n + p], vkq = v[k * n + q];
              v[k * n + p] = c * vkp - s * vkq;
              v[k * n + q] = s * vkp + c * vkq;
            }
            if (t == 0) {
              w[p * n + p] = app - tt * apq;
              w[q * n + q] = aqq + tt * apq;
              w[p * n + q] = 0;
              w[q * n + p] = 0;
              rotated = 1;
            }
          }
          __syncthreads();
        }
      }
      const int again = rotated;
      __syncthreads();
      if (!again) break;
    }
    T *vals = wt_la_buf<T>(A, 1) + m * n;
    T *vecs = wt_la_buf<T>(A, 2) + m * n * n;
    for (long long i = t; i < n; i += WT_LA) {
      const T lam = w[i * n + i];
      long long r = 0;
      T best = -1, sg = 1;
      for (long long j = 0; j < n; j++) {
        const T o = w[j * n + j];
        if (wt_la_before(o, lam, false) || (!wt_la_before(lam, o, false) && j < i)) r++;
        const T x = v[j * n + i];
        if (w_abs(x) > best) { best = w_abs(x); sg = x < 0 ? (T)-1 : (T)1; }
      }
      vals[r] = lam;
      for (long long j = 0; j < n; j++) vecs[j * n + r] = sg * v[j * n + i];
    }
    __syncthreads();
  }
}
