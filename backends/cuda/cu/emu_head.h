// The CUDA emulator's header (device_emu.go): what a kernel source needs
// of CUDA, defined for the host, so that the very sources NVRTC compiles
// for a GPU compile with a C++ compiler and run on the CPU. Each CUDA
// thread of a block is a fiber (below); blocks run one after another,
// so __shared__ memory is a static. __syncthreads and the warp shuffles
// switch fibers until every thread of the block (or warp) has arrived.
// It exists for tests: a kernel's logic is checked against the reference
// vectors on machines without a GPU.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#define WT_EMU 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static

namespace wt_emu {
struct dim3_ { unsigned x, y, z; };

// A fiber's saved context. On x86-64 it is the stack pointer alone, the
// callee-saved registers pushed below it by switch_stack: glibc's
// swapcontext also saves the signal mask, a system call per switch, and
// those calls were four fifths of the emulator's time in the gradient
// checks (a reduction's 256 fibers switch at every barrier). Elsewhere
// it is a ucontext.
#if defined(__x86_64__)
struct Context { void *sp; };

// switch_stack saves the callee-saved registers on the current stack and
// the stack pointer in *from, then loads to's and returns into it.
__attribute__((naked, noinline)) static void switch_stack(void **from, void *to) {
  asm volatile(
      "pushq %rbp\n pushq %rbx\n pushq %r12\n pushq %r13\n pushq %r14\n pushq %r15\n"
      "movq %rsp, (%rdi)\n movq %rsi, %rsp\n"
      "popq %r15\n popq %r14\n popq %r13\n popq %r12\n popq %rbx\n popq %rbp\n ret\n");
}
static inline void switch_context(Context *from, Context *to) { switch_stack(&from->sp, to->sp); }

// start_context makes c start entry on the stack [base, base+size) at its
// first switch: a stack as switch_stack leaves it, returning into entry
// with the alignment of a call (entry never returns).
static inline void start_context(Context *c, Context *, char *base, size_t size, void (*entry)()) {
  void **sp = (void **)(((uintptr_t)(base + size)) & ~(uintptr_t)15);
  *--sp = 0;
  *--sp = (void *)entry;
  for (int r = 0; r < 6; r++) *--sp = 0;
  c->sp = sp;
}
#else
struct Context { ucontext_t uc; };
static inline void switch_context(Context *from, Context *to) { swapcontext(&from->uc, &to->uc); }
static inline void start_context(Context *c, Context *back, char *base, size_t size, void (*entry)()) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = base;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = &back->uc;
  makecontext(&c->uc, entry, 0);
}
#endif

struct Fiber {
  Context ctx;
  unsigned tid;
  long long bar, wbar;
  int done;
};
static Fiber *fib;
static int nthr, cur;
static Context sched;
static dim3_ block_idx, grid_dim, block_dim;
static unsigned long long xbuf[1024];

static inline Fiber &me() { return fib[cur]; }
static inline void yield() { switch_context(&fib[cur].ctx, &sched); }

// barrier waits until every live fiber of [lo, hi) has arrived at least
// as far (field bar or wbar) as this one.
static inline void wait_for(int lo, int hi, bool warp) {
  Fiber &f = me();
  long long mine = warp ? ++f.wbar : ++f.bar;
  for (;;) {
    bool waiting = false;
    for (int i = lo; i < hi && !waiting; i++)
      if (!fib[i].done && (warp ? fib[i].wbar : fib[i].bar) < mine) waiting = true;
    if (!waiting) return;
    yield();
  }
}
static inline void block_barrier() { wait_for(0, nthr, false); }
static inline void warp_barrier() {
  int lo = (int)(me().tid / 32) * 32;
  wait_for(lo, lo + 32 < nthr ? lo + 32 : nthr, true);
}
template <class T> static inline T exchange(T v, int src) {
  unsigned long long b = 0, r;
  memcpy(&b, &v, sizeof(T));
  xbuf[me().tid] = b;
  warp_barrier();
  r = xbuf[src];
  warp_barrier();
  T out;
  memcpy(&out, &r, sizeof(T));
  return out;
}
}  // namespace wt_emu

#define threadIdx (wt_emu::dim3_{wt_emu::me().tid, 0, 0})
#define blockIdx (wt_emu::block_idx)
#define blockDim (wt_emu::block_dim)
#define gridDim (wt_emu::grid_dim)

static inline void __syncthreads() { wt_emu::block_barrier(); }
template <class T> static inline T __shfl_down_sync(unsigned, T v, int d) {
  int t = (int)wt_emu::me().tid, lane = t % 32;
  int src = (lane + d < 32 && t + d < wt_emu::nthr) ? t + d : t;
  return wt_emu::exchange(v, src);
}
template <class T> static inline T __shfl_xor_sync(unsigned, T v, int m) {
  int t = (int)wt_emu::me().tid, src = t ^ m;
  return wt_emu::exchange(v, src < wt_emu::nthr ? src : t);
}
template <class T> static inline T __shfl_sync(unsigned, T v, int lane) {
  int src = (int)(wt_emu::me().tid / 32) * 32 + lane;
  return wt_emu::exchange(v, src < wt_emu::nthr ? src : (int)wt_emu::me().tid);
}

static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
template <class T> static inline T atomicCAS(T *p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
template <class T> static inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
template <class T> static inline T atomicMax(T *p, T v) { T old = *p; if (v > old) *p = v; return old; }
template <class T> static inline T atomicMin(T *p, T v) { T old = *p; if (v < old) *p = v; return old; }
template <class T> static inline T atomicExch(T *p, T v) { T old = *p; *p = v; return old; }
template <class T> static inline T min(T a, T b) { return b < a ? b : a; }
template <class T> static inline T max(T a, T b) { return a < b ? b : a; }
static inline void __threadfence() {}
