/*
 * onnx_c_test.c — ONNX models through the C ABI: onnx/testdata/sdk_model.onnx
 * (y = relu(x @ W + b) * scale, top = argmax(y, 1); make_sdk_model.py) loaded
 * from its path and its bytes, its names listed, run with named inputs in
 * C memory, and bad calls refused. Run from the repository root (run.sh
 * does), where the model's relative path resolves.
 */
#define TEST_FILE "capi/test/onnx_c_test.c"
#include "harness.h"

#define SDK_MODEL "onnx/testdata/sdk_model.onnx"

/* check_outputs compares a run's y and top with the reference evaluator's. */
static void check_outputs(wt_tensor y, wt_tensor top) {
  const float want_y[6] = {2.2f, 3.6f, 6.6f, 1.4f, 0.8f, 1.8f};
  float got_y[6];
  int64_t got_top[2];
  OK(wt_tensor_to_host(y, got_y, sizeof got_y));
  for (int i = 0; i < 6; i++) CHECK(fabsf(got_y[i] - want_y[i]) < 1e-5f);
  OK(wt_tensor_to_host(top, got_top, sizeof got_top));
  CHECK(got_top[0] == 2 && got_top[1] == 2);
}

void test_onnx(void) {
  wt_onnx m = 0;
  OK(wt_onnx_load(SDK_MODEL, NULL, &m));
  int32_t n = 0;
  OK(wt_onnx_input_count(m, &n));
  CHECK(n == 2);
  OK(wt_onnx_output_count(m, &n));
  CHECK(n == 2);
  char name[16];
  size_t needed = 0;
  OK(wt_onnx_input_name(m, 1, name, sizeof name, &needed));
  CHECK(strcmp(name, "scale") == 0 && needed == 6);
  ERR(wt_onnx_output_name(m, 0, name, 1, &needed), WT_ERR_BUFFER_TOO_SMALL, "too small");
  ERR(wt_onnx_output_name(m, 2, name, sizeof name, &needed), WT_ERR_INVALID, "out of range");
  char info[512];
  OK(wt_onnx_info_json(m, info, sizeof info, &needed));
  CHECK(strstr(info, "\"shape\":[\"batch\",4]") != NULL);

  const float xs[8] = {1, 2, 3, 4, -1, 0, 1, 0}, two = 2;
  int64_t xshape[2] = {2, 4}, one = 1;
  wt_tensor x = f32(L, xshape, 2, xs), scale = f32(L, &one, 1, &two);
  const char *names[2] = {"scale", "x"};
  wt_tensor ins[2] = {scale, x}, outs[2] = {0, 0};
  OK(wt_onnx_run(m, names, ins, 2, outs, 2, &n));
  CHECK(n == 2);
  check_outputs(outs[0], outs[1]);

  wt_tensor spare[2] = {0, 0};
  ERR(wt_onnx_run(m, names, ins, 2, spare, 1, &n), WT_ERR_BUFFER_TOO_SMALL, "out_cap is 1");
  CHECK(n == 2 && spare[0] == 0);
  ERR(wt_onnx_run(m, names, ins, 1, spare, 2, &n), WT_ERR_INVALID, "\"x\" is missing");
  ERR(wt_onnx_run(m, NULL, ins, 2, spare, 2, &n), WT_ERR_INVALID, "names is NULL");
  const char *bad[2] = {"x", "zz"};
  ERR(wt_onnx_run(m, bad, (wt_tensor[]){x, scale}, 2, spare, 2, &n), WT_ERR_INVALID, "zz");

  /* The same model from its bytes; the outputs outlive the model. */
  FILE *f = fopen(SDK_MODEL, "rb");
  CHECK(f != NULL);
  unsigned char buf[4096];
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  wt_onnx m2 = 0;
  OK(wt_onnx_load_bytes(buf, len, "cpu", &m2));
  wt_tensor outs2[2] = {0, 0};
  OK(wt_onnx_run(m2, (const char *[]){"x", "scale"}, (wt_tensor[]){x, scale}, 2, outs2, 2, &n));
  OK(wt_onnx_free(m2));
  check_outputs(outs2[0], outs2[1]);
  ERR(wt_onnx_free(m2), WT_ERR_HANDLE, "already freed");

  ERR(wt_onnx_load("onnx/testdata/absent.onnx", NULL, &m2), WT_ERR_IO, "absent.onnx");
  ERR(wt_onnx_load_bytes(buf, 3, NULL, &m2), WT_ERR_INVALID, "onnx");
  ERR(wt_onnx_load(SDK_MODEL, NULL, NULL), WT_ERR_INVALID, "out is NULL");
  OK(wt_onnx_free(m));
  for (wt_tensor *t = (wt_tensor[]){x, scale, outs[0], outs[1], outs2[0], outs2[1], 0}; *t; t++) OK(wt_tensor_free(*t));
}
