// One-sided Jacobi SVD, one block per matrix (after cu/linalg.cuh, in the
// order of wgsl/linalg_jacobi.wgsl's svd): W is the matrix or, for a wide
// one, its transpose (rows >= cols); threads own rows of W and V, so only
// the dot products of a pair cross threads. Buffers: a, u, s, vh, scratch
// (per matrix W rows x cols, V and R cols x cols, L rows x lc, then cols
// norms, lc "have" flags and rows residuals). s: 0 batch, 1 m, 2 n, 3 lc
// (the left factor's columns), 4 U's columns, 5 Vh's rows, 6 the most sweeps.
template <class T> __device__ void wt_svd(const WtArgs &A) {
  const long long batch = A.s[0], M = A.s[1], N = A.s[2], lc = A.s[3], uc = A.s[4], vr = A.s[5], sweeps = A.s[6];
  const bool tall = M >= N;
  const long long rows = tall ? M : N, cols = tall ? N : M;
  const int t = threadIdx.x;
  __shared__ T red[3 * WT_LA];
  __shared__ int flag;
  for (long long mi = blockIdx.x; mi < batch; mi += gridDim.x) {
    const T *a = wt_la_buf<T>(A, 0) + mi * M * N;
    T *u = wt_la_buf<T>(A, 1) + mi * M * uc;
    T *sv = wt_la_buf<T>(A, 2) + mi * cols;
    T *vh = wt_la_buf<T>(A, 3) + mi * vr * N;
    T *w = wt_la_buf<T>(A, 4) + mi * (rows * cols + 2 * cols * cols + rows * lc + cols + lc + rows);
    T *v = w + rows * cols, *rt = v + cols * cols, *l = rt + cols * cols;
    T *sig = l + rows * lc, *have = sig + cols, *res = have + lc;
    for (long long e = t; e < rows * cols; e += WT_LA) {
      const long long i = e / cols, j = e % cols;
      w[e] = tall ? a[i * N + j] : a[j * N + i];
    }
    for (long long e = t; e < cols * cols; e += WT_LA) v[e] = e / cols == e % cols ? (T)1 : (T)0;
    for (long long e = t; e < rows * lc; e += WT_LA) l[e] = 0;
    for (long long e = t; e < lc; e += WT_LA) have[e] = 0;
    __syncthreads();
    for (long long sweep = 0; sweep < sweeps; sweep++) {
      if (t == 0) flag = 0;
      __syncthreads();
      for (long long p = 0; p + 1 < cols; p++) {
        for (long long q = p + 1; q < cols; q++) {
          T alpha = 0, beta = 0, gamma = 0;
          for (long long i = t; i < rows; i += WT_LA) {
            const T wp = w[i * cols + p], wq = w[i * cols + q];
            alpha += wp * wp;
            beta += wq * wq;
            gamma += wp * wq;
          }
          wt_la_sum3(red, alpha, beta, gamma);
          if (!wt_la_negligible(gamma, alpha, beta)) {
            const T tt = wt_la_rotation(alpha, beta, gamma);
            const T c = 1 / w_sqrt(tt * tt + 1), s = tt * c;
            for (long long i = t; i < rows; i += WT_LA) {
              const T wp = w[i * cols + p], wq = w[i * cols + q];
              w[i * cols + p] = c * wp - s * wq;
              w[i * cols + q] = s * wp + c * wq;
            }
            for (long long i = t; i < cols; i += WT_LA) {
              const T vp = v[i * cols + p], vq = v[i * cols + q];
              v[i * cols + p] = c * vp - s * vq;
              v[i * cols + q] = s * vp + c * vq;
            }
            if (t == 0 && tt != 0) flag = 1;
          }
        }
      }
      __syncthreads();
      const int again = flag;
      __syncthreads();
      if (!again) break;
    }
    for (long long j = t; j < cols; j += WT_LA) {
      T ss = 0;
      for (long long i = 0; i < rows; i++) ss += w[i * cols + j] * w[i * cols + j];
      sig[j] = w_sqrt(ss);
    }
    __syncthreads();
    // Column j to its rank (descending, NaN last, ties by index).
    for (long long j = t; j < cols; j += WT_LA) {
      const T sj = sig[j];
      long long r = 0;
      for (long long i = 0; i < cols; i++)
        if (wt_la_before(sig[i], sj, true) || (!wt_la_before(sj, sig[i], true) && i < j)) r++;
      sv[r] = sj;
      for (long long i = 0; i < cols; i++) rt[i * cols + r] = v[i * cols + j];
      if (sj != 0) {
        for (long long i = 0; i < rows; i++) l[i * lc + r] = w[i * cols + j] / sj;
        have[r] = 1;
      }
    }
    __syncthreads();
    // Missing columns of L: pivoted Gram-Schmidt on the unit vectors.
    for (long long i = t; i < rows; i += WT_LA) {
      T r = 1;
      for (long long j = 0; j < lc; j++)
        if (have[j] != 0) r -= l[i * lc + j] * l[i * lc + j];
      res[i] = r;
    }
    __syncthreads();
    for (long long c = 0; c < lc; c++) {
      const bool need = have[c] == 0;
      __syncthreads();
      if (!need) continue;
      long long p = 0;
      T best = -1;
      for (long long i = 0; i < rows; i++)
        if (res[i] > best) { p = i; best = res[i]; }
      T part = 0, unused1 = 0, unused2 = 0;
      for (long long i = t; i < rows; i += WT_LA) {
        T x = i == p ? (T)1 : (T)0;
        for (long long j = 0; j < lc; j++)
          if (have[j] != 0) x -= l[p * lc + j] * l[i * lc + j];
        l[i * lc + c] = x;
        part += x * x;
      }
      wt_la_sum3(red, part, unused1, unused2);
      const T nrm = w_sqrt(part);
      for (long long i = t; i < rows; i += WT_LA) {
        const T x = l[i * lc + c] / nrm;
        l[i * lc + c] = x;
        res[i] -= x * x;
      }
      __syncthreads();
      if (t == 0) have[c] = 1;
      __syncthreads();
    }
    // U's columns are L's (tall) or R's (wide), each of the first cols
    // flipped with its partner so that U's largest element is positive.
    for (long long r = t; r < lc; r += WT_LA) {
      T sg = 1;
      if (r < cols) {
        T best = -1;
        const long long len = tall ? rows : cols;
        for (long long i = 0; i < len; i++) {
          const T x = tall ? l[i * lc + r] : rt[i * cols + r];
          if (w_abs(x) > best) { best = w_abs(x); sg = x < 0 ? (T)-1 : (T)1; }
        }
      }
      if (tall) {
        for (long long i = 0; i < M; i++) u[i * uc + r] = sg * l[i * lc + r];
        if (r < cols)
          for (long long j = 0; j < N; j++) vh[r * N + j] = sg * rt[j * cols + r];
      } else {
        if (r < cols)
          for (long long i = 0; i < M; i++) u[i * uc + r] = sg * rt[i * cols + r];
        for (long long j = 0; j < N; j++) vh[r * N + j] = sg * l[j * lc + r];
      }
    }
    __syncthreads();
  }
}
