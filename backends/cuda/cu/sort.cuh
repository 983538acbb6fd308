// Row sorting (sorter.go). Elements are (key, index) pairs compared key
// first, index second: every pair is distinct, so any sorting network gives
// the one order a stable sort gives. Keys are unsigned integers whose order
// is the values' order (wt_sort_key); padding is the all-ones pair, above
// every element.

#define WT_SORT_TILE 2048

template <class K> struct SortItem {
  K key;
  u32 ix;
};

template <class K> __device__ __forceinline__ bool wt_sort_less(K ak, u32 ai, K bk, u32 bi) {
  return ak < bk || (ak == bk && ai < bi);
}
template <class K> __device__ __forceinline__ bool operator<(const SortItem<K> &a, const SortItem<K> &b) {
  return wt_sort_less(a.key, a.ix, b.key, b.ix);
}

// wt_sort_key maps a value (in its compute type) to an unsigned key in the
// CPU's order: floats as float64 with -0 equal to +0 and every NaN above
// +inf (all NaNs one key, so their index order decides), integers as
// int64.
__device__ __forceinline__ u32 wt_sort_key(f32 v) {
  if (v != v) return 0xffffffffu;
  const u32 u = v == 0.0f ? 0u : __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ u64 wt_sort_key(f64 v) {
  if (v != v) return 0xffffffffffffffffull;
  const u64 u = v == 0.0 ? 0ull : (u64)__double_as_longlong(v);
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
__device__ __forceinline__ u64 wt_sort_key(i64 v) { return (u64)v ^ 0x8000000000000000ull; }
__device__ __forceinline__ u32 wt_sort_key(i32 v) { return (u32)v ^ 0x80000000u; }
__device__ __forceinline__ u32 wt_sort_key(u32 v) { return v; }

// wt_key_is_nan says whether a float key stands for NaN.
__device__ __forceinline__ bool wt_key_is_nan(u32 k) { return k == 0xffffffffu; }
__device__ __forceinline__ bool wt_key_is_nan(u64 k) { return k == 0xffffffffffffffffull; }

// wt_bitonic sorts the segments of seg (a power of two) elements of the
// first act (a multiple of seg) pairs in shared memory, ascending. Every
// thread of the block calls it.
template <class K> __device__ void wt_bitonic(K *sk, u32 *si, int act, int seg) {
  for (int k = 2; k <= seg; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int q = threadIdx.x; q < act / 2; q += blockDim.x) {
        const int i = 2 * q - (q & (j - 1)), p = i + j;
        const bool up = k == seg || (i & k) == 0;
        const K ak = sk[i], bk = sk[p];
        const u32 ai = si[i], bi = si[p];
        if (wt_sort_less(bk, bi, ak, ai) == up) {
          sk[i] = bk;
          sk[p] = ak;
          si[i] = bi;
          si[p] = ai;
        }
      }
      __syncthreads();
    }
  }
}

// wt_merge_rank is the position in the merge of runs a and b (a before b
// in the pair) of element it, which is at position q of its own run; the
// other run o has L elements. Elements of a count the other run's smaller
// ones, elements of b those at most equal, so equal padding pairs still
// land on distinct positions.
template <class K>
__device__ __forceinline__ long long wt_merge_rank(const SortItem<K> *o, long long L, SortItem<K> it, long long q, bool inB) {
  long long lo = 0, hi = L;
  while (lo < hi) {
    const long long mid = (lo + hi) >> 1;
    const bool before = inB ? !(it < o[mid]) : (o[mid] < it);
    if (before) lo = mid + 1; else hi = mid;
  }
  return q + lo;
}
