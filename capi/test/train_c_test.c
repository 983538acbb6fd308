/*
 * train_c_test.c — training and checkpoints through the C ABI: an Adam
 * optimiser updates its parameters behind their handles, its state comes
 * out as a state dict, a schedule and gradient clipping give torch's
 * numbers, and a state dict saved to a file (and to bytes) loads back and
 * into a module's tensors; bad calls are errors.
 */
#define _POSIX_C_SOURCE 200809L
#define TEST_FILE "capi/test/train_c_test.c"
#include <unistd.h>

#include "harness.h"

void test_train(void) {
  const float ws[2] = {1, -2}, gs[2] = {0.5f, 0.25f};
  wt_tensor w = vec(L, 2, ws), g = vec(L, 2, gs);
  OK(wt_tensor_set_requires_grad(w, 1));
  OK(wt_backward(w, g));

  /* Adam's first step moves each element by lr against its gradient's sign. */
  wt_attr set[2] = {a_float("lr", 0.1), a_bool("amsgrad", 1)};
  wt_optimizer opt = 0;
  ERR(wt_optimizer_new("lion", &w, 1, NULL, 0, &opt), WT_ERR_INVALID, "unknown optimizer");
  ERR(wt_optimizer_new("adam", &w, 1, (wt_attr[]){a_float("lr", -1)}, 1, &opt), WT_ERR_INVALID,
      "Adam: invalid learning rate: -1");
  OK(wt_optimizer_new("adam", &w, 1, set, 2, &opt));
  wt_tensor before = w;
  OK(wt_optimizer_step(opt));
  CHECK(w == before); /* the same handle, a new value */
  const float want[2] = {0.9f, -2.1f};
  f32_is(L, w, want, 2, 1e-6f);
  int32_t on = 0;
  OK(wt_tensor_requires_grad(w, &on));
  CHECK(on == 1);

  wt_state st = 0;
  OK(wt_optimizer_state(opt, &st));
  int32_t n = 0;
  OK(wt_state_count(st, &n));
  CHECK(n == 4); /* 0.step, 0.exp_avg, 0.exp_avg_sq, 0.max_exp_avg_sq */
  char name[64];
  size_t needed = 0;
  OK(wt_state_name(st, 0, name, sizeof name, &needed));
  CHECK(strcmp(name, "0.step") == 0);
  OK(wt_optimizer_load_state(opt, st));
  OK(wt_state_free(st));
  OK(wt_optimizer_set(opt, (wt_attr[]){a_float("lr", 0.01)}, 1));
  ERR(wt_optimizer_set(opt, (wt_attr[]){a_float("momentum", 0.9)}, 1), WT_ERR_INVALID, "unknown setting");
  OK(wt_optimizer_zero_grad(opt));
  wt_tensor grad = -1;
  OK(wt_tensor_grad(w, &grad));
  CHECK(grad == 0);
  OK(wt_optimizer_free(opt));
  ERR(wt_optimizer_step(opt), WT_ERR_HANDLE, "optimizer handle");

  /* StepLR(step_size=2, gamma=0.5) at step 5 from 0.1. */
  double lr = 0;
  OK(wt_lr_schedule("step", (wt_attr[]){a_int("step_size", 2), a_float("gamma", 0.5)}, 2, 0.1, 5, &lr));
  CHECK(fabs(lr - 0.025) < 1e-15);
  ERR(wt_lr_schedule("step", NULL, 0, 0.1, 0, &lr), WT_ERR_INVALID, "step size");

  /* clip_grad_norm_ to 1 of a gradient (3, -4): total 5, then (0.6, -0.8). */
  const float gs2[2] = {3, -4};
  wt_tensor g2 = vec(L, 2, gs2), total = 0;
  OK(wt_backward(w, g2));
  OK(wt_clip_grad_norm(&w, 1, 1.0, 2.0, &total));
  f32_is(L, total, (const float[]){5}, 1, 1e-6f);
  OK(wt_tensor_grad(w, &grad));
  f32_is(L, grad, (const float[]){0.6f, -0.8f}, 2, 1e-6f);
  OK(wt_clip_grad_value(&w, 1, 0.7));

  /* A state dict through a file and through bytes. */
  char path[] = "/tmp/wt_train_c_testXXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  wt_state sd = 0, back = 0, raw = 0;
  OK(wt_state_new(&sd));
  OK(wt_state_put(sd, "w", w));
  ERR(wt_state_put(sd, "w", w), WT_ERR_INVALID, "given twice");
  OK(wt_state_set_metadata(sd, "format", "pt"));
  OK(wt_state_save(sd, path));
  ERR(wt_state_save(sd, "/nonexistent/dir/m.safetensors"), WT_ERR_IO, "no such file");
  OK(wt_state_load(path, NULL, 0, &back));
  OK(wt_state_count(back, &n));
  CHECK(n == 1);
  OK(wt_state_metadata_count(back, &n));
  CHECK(n == 1);
  OK(wt_state_metadata_value(back, 0, name, sizeof name, &needed));
  CHECK(strcmp(name, "pt") == 0);
  ERR(wt_state_to_bytes(sd, NULL, 0, &needed), WT_ERR_BUFFER_TOO_SMALL, "too small");
  unsigned char *bytes = malloc(needed);
  OK(wt_state_to_bytes(sd, bytes, needed, &needed));
  OK(wt_state_from_bytes(bytes, needed, NULL, "mem", &raw));
  ERR(wt_state_from_bytes(bytes, 12, NULL, "mem", &st), WT_ERR_INVALID, "mem: safetensors:");
  free(bytes);

  /* Loading into the module's tensors: a mismatch is refused and lists it. */
  const float zs[3] = {0, 0, 0};
  wt_tensor z = vec(L, 3, zs);
  wt_state wrong = 0;
  OK(wt_state_new(&wrong));
  OK(wt_state_put(wrong, "w", z));
  ERR(wt_state_assign(sd, wrong, 1, "Net"), WT_ERR_INVALID, "w: shape [3] in state dict, [2] in module");
  OK(wt_state_assign(sd, raw, 1, "Net"));
  wt_tensor got = 0;
  OK(wt_state_get(back, 0, &got));
  f32_is(L, got, want, 2, 1e-6f);
  unlink(path);

  for (wt_state *s = (wt_state[]){sd, back, raw, wrong, 0}; *s; s++) OK(wt_state_free(*s));
  for (wt_tensor *t = (wt_tensor[]){w, g, g2, total, grad, z, got, 0}; *t; t++) OK(wt_tensor_free(*t));
}
