// Per-thread grad mode of the C ABI: wt_no_grad_enter/exit count scopes of
// the calling thread, as PyTorch's no_grad is per thread, so a thread in an
// optimiser step does not stop another thread's forward pass from being
// recorded. A thread-local int needs no cleanup when the thread exits; Go
// (package abi) counts it through the pointer.
#include <stdint.h>

static _Thread_local int32_t wt_no_grad_depth;

__attribute__((visibility("hidden"))) int32_t *wt_thread_no_grad_depth(void) { return &wt_no_grad_depth; }
