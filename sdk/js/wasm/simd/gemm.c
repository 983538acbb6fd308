// The CPU backend's GEMM macro-kernel in WebAssembly SIMD (wasm128), for the
// browser build: Go's wasm port emits no SIMD, and the micro-kernel is where
// a matrix product spends its time (backends/cpu/gemm.go). This module
// imports the Go instance's memory and works in place on the packed A block,
// the packed B panel and C, all Go slices; backends/cpu/gemm_wasmsimd.go
// calls it once per macro-kernel (an A block times a run of B slivers), so
// one call does mc x nc x kc multiply-adds.
//
// Built with -nostdlib and no static data; it must not use a shadow stack
// either (which would sit at the bottom of Go's memory, over Go's own data):
// every local is a scalar or a v128 value, the edge tiles go through a
// buffer Go passes in, and the build (sdk/js/js.mk) fails if the output
// refers to __stack_pointer or has a data section.
//
// Results are the Go kernel's bits: every element is the same sequence of
// f32 multiplies and adds in the same order (no fused multiply-add: wasm has
// none and -ffp-contract=off keeps clang from making one), and the epilogue
// is Go's 0 + alpha*v or c + alpha*v.

#include <wasm_simd128.h>

#define MR 4 // rows of a packed A sliver (gemmMR)
#define NR 8 // columns of a packed B sliver (gemmNR in the browser build)
#define KU 8 // packed slivers are zero-padded to a multiple of KU k steps (gemmKU)

static inline v128_t madd(v128_t acc, v128_t a, v128_t b) { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }

// Epilogue of one row of 4 lanes: store 0 + alpha*v, or add alpha*v to C.
static inline void put4(float *c, v128_t v, v128_t alpha, int store) {
  v128_t prod = wasm_f32x4_mul(alpha, v);
  if (store) {
    wasm_v128_store(c, wasm_f32x4_add(wasm_f32x4_splat(0.0f), prod));
  } else {
    wasm_v128_store(c, wasm_f32x4_add(wasm_v128_load(c), prod));
  }
}

// sgemm_macro is gemmMacroKernel (backends/cpu/gemm.go) with NR = 8: for B
// slivers s0..s1 of the packed panel bp (each kp*NR floats, k-major) and
// every A sliver of the packed block ap (each kp*MR floats), C[i][j] gets
// 0 + alpha*product (store) or += alpha*product. tile is 32 floats of
// scratch for the partial tiles at the edges. Offsets are in floats.
__attribute__((export_name("sgemm_macro"))) void sgemm_macro(int store, int mc, int nc, int kc, float alpha,
                                                             const float *ap, const float *bp, int s0, int s1,
                                                             float *c, int ldc, float *tile) {
  const int kp = (kc + KU - 1) / KU * KU;
  const v128_t va = wasm_f32x4_splat(alpha);
  for (int s = s0; s < s1; s++) {
    const int j0 = s * NR;
    const int nr = nc - j0 < NR ? nc - j0 : NR;
    const float *bs = bp + s * kp * NR;
    for (int i0 = 0; i0 < mc; i0 += MR) {
      const int mr = mc - i0 < MR ? mc - i0 : MR;
      const float *as = ap + (i0 / MR) * kp * MR;
      v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00;
      v128_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;
      const float *a = as, *b = bs;
      for (int p = 0; p < kp; p++, a += MR, b += NR) {
        const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
        const v128_t a0 = wasm_v128_load32_splat(a), a1 = wasm_v128_load32_splat(a + 1);
        const v128_t a2 = wasm_v128_load32_splat(a + 2), a3 = wasm_v128_load32_splat(a + 3);
        c00 = madd(c00, a0, b0), c01 = madd(c01, a0, b1);
        c10 = madd(c10, a1, b0), c11 = madd(c11, a1, b1);
        c20 = madd(c20, a2, b0), c21 = madd(c21, a2, b1);
        c30 = madd(c30, a3, b0), c31 = madd(c31, a3, b1);
      }
      float *cr = c + i0 * ldc + j0;
      if (mr == MR && nr == NR) {
        put4(cr, c00, va, store), put4(cr + 4, c01, va, store), cr += ldc;
        put4(cr, c10, va, store), put4(cr + 4, c11, va, store), cr += ldc;
        put4(cr, c20, va, store), put4(cr + 4, c21, va, store), cr += ldc;
        put4(cr, c30, va, store), put4(cr + 4, c31, va, store);
        continue;
      }
      wasm_v128_store(tile, c00), wasm_v128_store(tile + 4, c01);
      wasm_v128_store(tile + 8, c10), wasm_v128_store(tile + 12, c11);
      wasm_v128_store(tile + 16, c20), wasm_v128_store(tile + 20, c21);
      wasm_v128_store(tile + 24, c30), wasm_v128_store(tile + 28, c31);
      for (int i = 0; i < mr; i++) {
        float *row = c + (i0 + i) * ldc + j0;
        for (int j = 0; j < nr; j++) {
          const float v = alpha * tile[i * NR + j];
          row[j] = store ? 0.0f + v : row[j] + v;
        }
      }
    }
  }
}

// pack_a4_f32 is gemmPackA (backends/cpu/gemm.go) for rows/4 full slivers
// of four rows of a row-major A (rows lda apart): sliver i holds, k step
// by k step, the four rows' values (element (p, r) at p*4 + r), kp*4
// floats long, zero past kc. Four k steps at a time through a 4 x 4
// transpose in registers; Go's loop moved one float at a time.
__attribute__((export_name("pack_a4_f32"))) void pack_a4_f32(float *dst, const float *a, int lda, int rows, int kc, int kp) {
  for (int i0 = 0; i0 + 4 <= rows; i0 += 4) {
    const float *r0 = a + i0 * lda, *r1 = r0 + lda, *r2 = r1 + lda, *r3 = r2 + lda;
    float *s = dst + (i0 / 4) * kp * 4;
    int p = 0;
    for (; p + 4 <= kc; p += 4) {
      const v128_t x0 = wasm_v128_load(r0 + p), x1 = wasm_v128_load(r1 + p);
      const v128_t x2 = wasm_v128_load(r2 + p), x3 = wasm_v128_load(r3 + p);
      const v128_t t0 = wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7);
      const v128_t t2 = wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7);
      wasm_v128_store(s + p * 4, wasm_i32x4_shuffle(t0, t2, 0, 1, 4, 5));
      wasm_v128_store(s + p * 4 + 4, wasm_i32x4_shuffle(t0, t2, 2, 3, 6, 7));
      wasm_v128_store(s + p * 4 + 8, wasm_i32x4_shuffle(t1, t3, 0, 1, 4, 5));
      wasm_v128_store(s + p * 4 + 12, wasm_i32x4_shuffle(t1, t3, 2, 3, 6, 7));
    }
    for (; p < kc; p++) wasm_v128_store(s + p * 4, wasm_f32x4_make(r0[p], r1[p], r2[p], r3[p]));
    for (; p < kp; p++) wasm_v128_store(s + p * 4, wasm_f32x4_splat(0.0f));
  }
}
