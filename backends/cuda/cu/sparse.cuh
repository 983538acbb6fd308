// Helpers of the segment and CSR kernels (kernels_sparse.go). Index
// vectors are read through a stride; every position computed from an
// index value is clamped or skipped when invalid, so a bad input is
// reported (wt_fail) but never read or written out of bounds.

// wt_ix reads element i of an index vector as i64.
template <class I> __device__ __forceinline__ i64 wt_ix(const I *p, long long st, long long i) {
  return (i64)ld(p[i * st]);
}

// wt_count_below is the number of the n values of a non-decreasing index
// vector that are below v (binary search; any order gives some count in
// [0, n]).
template <class I> __device__ __forceinline__ long long wt_count_below(const I *p, long long st, long long n, i64 v) {
  long long lo = 0, hi = n;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if (wt_ix(p, st, mid) < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// wt_csr_check checks item t of a CSR structure of R rows and E entries
// over cols columns: indptr[t] (t <= R) and indices[t] (t < E). Codes:
// 1 indptr[0] is not 0, 2 indptr[R] is not E, 3 indptr decreases at t,
// 4 an index outside [0, cols).
template <class P, class I>
__device__ __forceinline__ void wt_csr_check(const WtArgs &A, const P *ptr, long long pst, const I *ind, long long ist,
                                             long long R, long long E, long long cols, long long t) {
  if (t <= R) {
    const i64 v = wt_ix(ptr, pst, t);
    if (t == 0 && v != 0) wt_fail(A, 1, v, 0);
    if (t == R && v != E) wt_fail(A, 2, v, 0);
    if (t > 0 && v < wt_ix(ptr, pst, t - 1)) wt_fail(A, 3, t, v);
  }
  if (t < E) {
    const i64 c = wt_ix(ind, ist, t);
    if (c < 0 || c >= cols) wt_fail(A, 4, t, c);
  }
}

// wt_csr_row_range is row r's entries [lo, hi), clamped to [0, E).
template <class P>
__device__ __forceinline__ void wt_csr_row_range(const P *ptr, long long pst, long long r, long long E, long long &lo, long long &hi) {
  i64 a = wt_ix(ptr, pst, r), b = wt_ix(ptr, pst, r + 1);
  a = a < 0 ? 0 : (a > E ? E : a);
  b = b < a ? a : (b > E ? E : b);
  lo = a;
  hi = b;
}

// wt_csr_row_of is the row of entry e: the last row whose start is at most
// e, within [0, R).
template <class P> __device__ __forceinline__ long long wt_csr_row_of(const P *ptr, long long pst, long long R, long long e) {
  long long lo = 0, hi = R + 1;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if (wt_ix(ptr, pst, mid) <= e) lo = mid + 1; else hi = mid;
  }
  const long long r = lo - 1;
  return r < 0 ? 0 : (r >= R ? R - 1 : r);
}
