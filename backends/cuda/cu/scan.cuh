// Block-wide prefix sum of the stream compactions (kernels_index_mask.go).

// wt_block_scan returns the exclusive prefix sum of v over the block's
// WT_SCAN_BLOCK threads (in thread order) and sets total to the block's
// sum; every thread of the block must call it. sh holds one value per
// warp. Warp-level steps read a lower lane through __shfl_sync, which the
// emulator provides as well.
#define WT_SCAN_BLOCK 256
__device__ __forceinline__ u64 wt_block_scan(u64 v, u64 *sh, u64 &total) {
  constexpr int NW = WT_SCAN_BLOCK / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  u64 x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const u64 y = __shfl_sync(0xffffffffu, x, lane >= o ? lane - o : lane);
    if (lane >= o) x += y;
  }
  if (lane == 31) sh[warp] = x;
  __syncthreads();
  if (warp == 0) {
    u64 s = lane < NW ? sh[lane] : 0;
#pragma unroll
    for (int o = 1; o < NW; o <<= 1) {
      const u64 y = __shfl_sync(0xffffffffu, s, lane >= o ? lane - o : lane);
      if (lane >= o) s += y;
    }
    if (lane < NW) sh[lane] = s;
  }
  __syncthreads();
  const u64 before = warp > 0 ? sh[warp - 1] : 0;
  total = sh[NW - 1];
  __syncthreads();  // sh is reused by the next call
  return before + x - v;
}
