// The emulator's launcher (see emu_head.h): runs every block of a grid,
// each thread a fiber when the kernel synchronises (coop), else one
// thread after another.
namespace wt_emu {
static const void *kargs;
static char *stacks;
static int stack_threads;
static const size_t stack_size = 128 << 10;

// fiber_main runs one thread's kernel, then hands back to the scheduler
// for good (a finished fiber is never switched to).
static void fiber_main() {
  wt_kernel(*(const WtArgs *)kargs);
  me().done = 1;
  yield();
}
}  // namespace wt_emu

extern "C" int wt_emu_run(unsigned gx, unsigned gy, unsigned gz, unsigned bx, const void *args, int coop) {
  using namespace wt_emu;
  kargs = args;
  grid_dim = {gx, gy, gz};
  block_dim = {bx, 1, 1};
  static Fiber *fibers;
  static int nfib;
  if (nfib < (int)bx) {
    free(fibers);
    fibers = (Fiber *)calloc(bx, sizeof(Fiber));
    if (!fibers) return -1;
    nfib = (int)bx;
  }
  fib = fibers;
  nthr = (int)bx;
  if (coop && stack_threads < (int)bx) {
    free(stacks);
    stacks = (char *)malloc(stack_size * bx);
    if (!stacks) return -1;
    stack_threads = (int)bx;
  }
  for (unsigned z = 0; z < gz; z++)
    for (unsigned y = 0; y < gy; y++)
      for (unsigned x = 0; x < gx; x++) {
        block_idx = {x, y, z};
        for (int t = 0; t < nthr; t++) {
          fib[t].tid = (unsigned)t;
          fib[t].bar = fib[t].wbar = 0;
          fib[t].done = 0;
        }
        if (!coop) {
          for (cur = 0; cur < nthr; cur++) wt_kernel(*(const WtArgs *)args);
          continue;
        }
        for (int t = 0; t < nthr; t++)
          start_context(&fib[t].ctx, &sched, stacks + stack_size * t, stack_size, fiber_main);
        for (int live = nthr; live > 0;) {
          live = 0;
          for (cur = 0; cur < nthr; cur++) {
            if (fib[cur].done) continue;
            switch_context(&sched, &fib[cur].ctx);
            if (!fib[cur].done) live++;
          }
        }
      }
  return 0;
}
