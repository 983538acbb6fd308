// Helpers of the shape and index kernels (indexed.go): raw element bits,
// atomic read-modify-write of elements of every width and NaN-propagating
// extrema. (The block-wide prefix sum of stream compaction is in
// scan.cuh: the emulator runs any kernel whose source synchronises as
// fibers, which only those kernels need.)

// wt_bits<N>::t is the unsigned integer of N bytes: the raw bits of an
// element (fill values arrive in A.s as these bits).
template <int N> struct wt_bits;
template <> struct wt_bits<1> { typedef unsigned char t; };
template <> struct wt_bits<2> { typedef unsigned short t; };
template <> struct wt_bits<4> { typedef u32 t; };
template <> struct wt_bits<8> { typedef u64 t; };

// wt_from_bits is the element of type T whose bits are the low bytes of b.
template <class T> __device__ __forceinline__ T wt_from_bits(i64 b) {
  return bitcast<T>((typename wt_bits<sizeof(T)>::t)(u64)b);
}

// wt_atomic_update replaces *p by f(*p) atomically. GPUs compare-and-swap
// 32- and 64-bit words only, so an element narrower than 4 bytes is
// updated inside the aligned word that holds it, leaving its neighbours'
// bytes as they are. Such a word never reaches past the allocation: the
// kernels update only their own outputs and temporaries, whose blocks are
// multiples of 4 bytes (alloc.go). f returns the new value in T.
template <class T, class F> __device__ void wt_atomic_update(T *p, F f) {
  if constexpr (sizeof(T) == 8 || sizeof(T) == 4) {
    typedef typename wt_bits<sizeof(T)>::t W;  // u32 or u64, what atomicCAS takes
    W *w = (W *)p;
    W old = *(volatile W *)w;
    for (;;) {
      const W nb = bitcast<W>(f(bitcast<T>(old)));
      if (nb == old) return;
      const W seen = atomicCAS(w, old, nb);
      if (seen == old) return;
      old = seen;
    }
  } else {
    typedef typename wt_bits<sizeof(T)>::t W;
    const u64 a = (u64)p;
    u32 *w = (u32 *)(a & ~(u64)3);
    const u32 sh = (u32)(a & 3) * 8u, mask = (sizeof(T) == 2 ? 0xffffu : 0xffu) << sh;
    u32 old = *(volatile u32 *)w;
    for (;;) {
      const T cur = bitcast<T>((W)((old & mask) >> sh));
      const u32 nw = (old & ~mask) | (((u32)bitcast<W>(f(cur)) << sh) & mask);
      if (nw == old) return;
      const u32 seen = atomicCAS(w, old, nw);
      if (seen == old) return;
      old = seen;
    }
  }
}

// wt_atomic_add adds v (the accumulation type's value) to *p. Floats and
// 32/64-bit integers use the hardware's atomicAdd; integers wrap at their
// width, as the CPU's int64 sum stored into the dtype does.
__device__ __forceinline__ void wt_atomic_add(f32 *p, f32 v) { atomicAdd(p, v); }
__device__ __forceinline__ void wt_atomic_add(f64 *p, f64 v) { atomicAdd(p, v); }
__device__ __forceinline__ void wt_atomic_add(i32 *p, i64 v) { atomicAdd((u32 *)p, (u32)v); }
__device__ __forceinline__ void wt_atomic_add(u32 *p, i64 v) { atomicAdd(p, (u32)v); }
__device__ __forceinline__ void wt_atomic_add(i64 *p, i64 v) { atomicAdd((u64 *)p, (u64)v); }
__device__ __forceinline__ void wt_atomic_add(short *p, i64 v) {
  wt_atomic_update(p, [=](short o) { return (short)(u32)((u32)o + (u32)v); });
}
__device__ __forceinline__ void wt_atomic_add(signed char *p, i64 v) {
  wt_atomic_update(p, [=](signed char o) { return (signed char)(u32)((u32)o + (u32)v); });
}
__device__ __forceinline__ void wt_atomic_add(unsigned char *p, i64 v) {
  wt_atomic_update(p, [=](unsigned char o) { return (unsigned char)((u32)o + (u32)v); });
}
__device__ __forceinline__ void wt_atomic_add(unsigned short *p, i64 v) {
  wt_atomic_update(p, [=](unsigned short o) { return (unsigned short)((u32)o + (u32)v); });
}
__device__ __forceinline__ void wt_atomic_add(wt_half *p, f32 v) {
  wt_atomic_update(p, [=](wt_half o) { wt_half r; r.b = f2h(h2f(o.b) + v); return r; });
}
__device__ __forceinline__ void wt_atomic_add(wt_bf16 *p, f32 v) {
  wt_atomic_update(p, [=](wt_bf16 o) { wt_bf16 r; r.b = f2bf(bf2f(o.b) + v); return r; });
}

// wt_ext is max (MAX) or min of two values with the CPU's rules: NaN wins
// (torch's scatter amax/amin), and of two zeros max takes +0, min -0.
template <bool MAX, class T> __device__ __forceinline__ T wt_ext(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) {
    if (a == (T)0) return (MAX ? signbit((f64)a) : !signbit((f64)a)) ? b : a;
    return a;
  }
  return (MAX ? a < b : b < a) ? b : a;
}

// wt_atomic_ext folds v into *p with wt_ext. The hardware's atomicMax and
// atomicMin serve 32/64-bit integers; everything else loops on CAS.
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(i32 *p, i64 v) {
  if (MAX) atomicMax(p, (i32)v); else atomicMin(p, (i32)v);
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(u32 *p, i64 v) {
  if (MAX) atomicMax(p, (u32)v); else atomicMin(p, (u32)v);
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(i64 *p, i64 v) {
  if (MAX) atomicMax((long long *)p, (long long)v); else atomicMin((long long *)p, (long long)v);
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(f32 *p, f32 v) {
  wt_atomic_update(p, [=](f32 o) { return wt_ext<MAX>(o, v); });
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(f64 *p, f64 v) {
  wt_atomic_update(p, [=](f64 o) { return wt_ext<MAX>(o, v); });
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(wt_half *p, f32 v) {
  wt_atomic_update(p, [=](wt_half o) { wt_half r; r.b = f2h(wt_ext<MAX>(h2f(o.b), v)); return r; });
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(wt_bf16 *p, f32 v) {
  wt_atomic_update(p, [=](wt_bf16 o) { wt_bf16 r; r.b = f2bf(wt_ext<MAX>(bf2f(o.b), v)); return r; });
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(short *p, i64 v) {
  wt_atomic_update(p, [=](short o) { return (short)wt_ext<MAX>((i64)o, v); });
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(signed char *p, i64 v) {
  wt_atomic_update(p, [=](signed char o) { return (signed char)wt_ext<MAX>((i64)o, v); });
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(unsigned char *p, i64 v) {
  wt_atomic_update(p, [=](unsigned char o) { return (unsigned char)wt_ext<MAX>((i64)o, v); });
}
template <bool MAX> __device__ __forceinline__ void wt_atomic_ext(unsigned short *p, i64 v) {
  wt_atomic_update(p, [=](unsigned short o) { return (unsigned short)wt_ext<MAX>((i64)o, v); });
}
