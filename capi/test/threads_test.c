/*
 * threads_test.c — the C ABI under concurrent use.
 *
 * Eight threads run for about three seconds each. Workers create tensors
 * (from_data, zeros, add, matmul, sum), read them back, share one tensor
 * between all threads (retain/free from every thread) and free everything;
 * the "noisy" ones also fail on purpose with a message naming their thread.
 * The per-thread error contract is checked both ways: a quiet thread's
 * wt_last_error() stays "" however many errors other threads raise, and a
 * noisy thread always sees its own last message, never another thread's.
 * At the end wt_live_tensors is back to its start. Prints one line
 * "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "webtensor.h"

#define THREADS 8
#define QUIET 4 /* threads 0..QUIET-1 never fail on purpose */
#define SECONDS 3.0

static atomic_long passed, failed;
static wt_tensor shared; /* a [4 4] identity read by every thread */

static void fail_(int id, int line, const char *what) {
  atomic_fetch_add(&failed, 1);
  /* Only the first few failures are printed: one bug can repeat a million times. */
  if (atomic_load(&failed) <= 20) {
    printf("%s:%d: FAIL (thread %d): %s\n    wt_last_error: \"%s\"\n", __FILE__, line, id, what,
           wt_last_error());
  }
}

/* Checks are counted per thread and added up at the end. */
#define CHECK(id, c) ((c) ? (void)(*npass += 1) : fail_(id, __LINE__, #c))
#define OK(id, call) CHECK(id, (call) == WT_OK)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One round of ordinary work; r varies the values. */
static void work(int id, int r, long *npass) {
  float a[16], b[16], back[16];
  for (int i = 0; i < 16; i++) {
    a[i] = (float)(id * 100 + r % 50 + i);
    b[i] = (float)i;
  }
  int64_t shape[2] = {4, 4};
  wt_tensor ta = 0, tb = 0, z = 0, sum = 0, mm = 0, total = 0, out = 0;
  int32_t n = 0;
  OK(id, wt_tensor_from_data(a, sizeof a, WT_F32, shape, 2, NULL, &ta));
  OK(id, wt_tensor_from_data(b, sizeof b, WT_F32, shape, 2, NULL, &tb));
  OK(id, wt_tensor_zeros(WT_F32, shape, 2, NULL, &z));
  OK(id, wt_op("add", (wt_tensor[]){ta, tb}, 2, NULL, 0, &sum, 1, &n));
  OK(id, wt_tensor_to_host(sum, back, sizeof back));
  int same = 1;
  for (int i = 0; i < 16; i++) same &= back[i] == a[i] + b[i];
  CHECK(id, same);

  /* matmul with the shared identity gives ta back. */
  OK(id, wt_tensor_retain(shared));
  OK(id, wt_op("matmul", (wt_tensor[]){ta, shared}, 2, NULL, 0, &mm, 1, &n));
  OK(id, wt_tensor_free(shared));
  OK(id, wt_tensor_to_host(mm, back, sizeof back));
  CHECK(id, memcmp(back, a, sizeof a) == 0);

  OK(id, wt_op("sum", (wt_tensor[]){z}, 1, NULL, 0, &total, 1, &n));
  float s = -1;
  OK(id, wt_tensor_to_host(total, &s, sizeof s));
  CHECK(id, s == 0);
  OK(id, wt_op("add", (wt_tensor[]){z, shared}, 2, NULL, 0, &out, 1, &n));
  wt_tensor all[] = {ta, tb, z, sum, mm, total, out};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) OK(id, wt_tensor_free(all[i]));
}

/* A deliberate failure whose message names this thread, then a successful
 * call: the message must still be this thread's own. */
static void make_noise(int id, int r, long *npass) {
  char name[64], mine[64];
  snprintf(name, sizeof name, "no_such_op_thread_%d_round_%d", id, r);
  snprintf(mine, sizeof mine, "no_such_op_thread_%d_", id);
  wt_tensor out = 0;
  int32_t n = 0;
  CHECK(id, wt_op(name, &shared, 1, NULL, 0, &out, 1, &n) == WT_ERR_INVALID);
  CHECK(id, strstr(wt_last_error(), name) != NULL);
  int64_t live = 0;
  OK(id, wt_live_tensors(&live));
  sched_yield();
  CHECK(id, strstr(wt_last_error(), mine) != NULL); /* our own, still */
  int64_t shape[1] = {-(int64_t)id - 1000};
  CHECK(id, wt_tensor_zeros(WT_F32, shape, 1, NULL, &out) == WT_ERR_INVALID);
  char dim[32];
  snprintf(dim, sizeof dim, "%" PRId64, shape[0]);
  CHECK(id, strstr(wt_last_error(), dim) != NULL);
}

static void *run(void *arg) {
  int id = (int)(intptr_t)arg;
  long count = 0, *npass = &count;
  double end = now() + SECONDS;
  for (int r = 0; now() < end; r++) {
    work(id, r, npass);
    if (id >= QUIET) {
      make_noise(id, r, npass);
    } else {
      CHECK(id, wt_last_error()[0] == 0); /* other threads' errors never show up here */
    }
  }
  atomic_fetch_add(&passed, count);
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  long first = 0;
  long *npass = &first;
  int64_t start = -1, end = -1;
  OK(-1, wt_live_tensors(&start));
  float eye[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  OK(-1, wt_tensor_from_data(eye, sizeof eye, WT_F32, (int64_t[]){4, 4}, 2, NULL, &shared));
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) {
    CHECK(-1, pthread_create(&th[i], NULL, run, (void *)(intptr_t)i) == 0);
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  OK(-1, wt_tensor_free(shared));
  OK(-1, wt_live_tensors(&end));
  CHECK(-1, end == start);
  if (end != start) printf("    %" PRId64 " tensors leaked\n", end - start);
  long p = atomic_load(&passed) + first, f = atomic_load(&failed);
  printf("%ld passed, %ld failed\n", p, f);
  return f == 0 ? 0 : 1;
}
