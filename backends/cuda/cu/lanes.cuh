// Lane kernels (lanes.go): a lane is the line of a tensor along one axis for
// one index of its other dims (the kept dims, at most 6 after merging, whose
// sizes are A.shape[0..KR)). Operand k steps A.st[k][d] per kept dim d,
// A.st[k][7] along the axis and A.st[k][6] to the imaginary part of a
// complex pair.

#define WT_ALONG(k) (A.st[(k)][7])
#define WT_PAIR(k) (A.st[(k)][6])

// wt_lane is operand k's element offset of the start of lane `lane`.
template <int KR> __device__ __forceinline__ long long wt_lane(const WtArgs &A, int k, long long lane) {
  long long off = A.off[k];
#pragma unroll
  for (int d = KR - 1; d >= 0; d--) {
    const long long n = A.shape[d];
    off += (lane % n) * A.st[k][d];
    lane /= n;
  }
  return off;
}

// wt_lower_bound is the number of the n sorted values at p that are below
// v; wt_upper_bound of those at most v.
template <class T, class V> __device__ __forceinline__ long long wt_lower_bound(const T *p, long long n, V v) {
  long long lo = 0, hi = n;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if ((V)p[mid] < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}
template <class T, class V> __device__ __forceinline__ long long wt_upper_bound(const T *p, long long n, V v) {
  long long lo = 0, hi = n;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    if (!(v < (V)p[mid])) lo = mid + 1; else hi = mid;
  }
  return lo;
}
