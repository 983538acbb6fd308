/*
 * onnx_c_test.c — ONNX models through the C ABI: onnx/testdata/sdk_model.onnx
 * (y = relu(x @ W + b) * scale, top = argmax(y, 1); make_sdk_model.py) loaded
 * from its path and its bytes, its names listed, run with named inputs in
 * C memory, and bad calls refused; and onnx/testdata/sdk_values_model.onnx
 * (make_sdk_values_model.py: sequences and optionals each way) through
 * wt_onnx_run_values. Run from the repository root (run.sh does), where the
 * models' relative paths resolve.
 */
#define TEST_FILE "capi/test/onnx_c_test.c"
#include "harness.h"

#define SDK_MODEL "onnx/testdata/sdk_model.onnx"
#define SDK_VALUES_MODEL "onnx/testdata/sdk_values_model.onnx"

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

/* Sequences and optionals: the tensors flat, a JSON layout grouping them,
 * the outputs held behind a wt_onnx_values handle and read through the
 * buffer protocols (asking first, then reading: the model runs once). */
void test_onnx_values(void) {
  wt_onnx m = 0;
  OK(wt_onnx_load(SDK_VALUES_MODEL, NULL, &m));
  size_t needed = 0;
  char info[1024];
  OK(wt_onnx_info_json(m, info, sizeof info, &needed));
  CHECK(strstr(info, "\"name\":\"parts\",\"kind\":\"sequence\"") != NULL);
  CHECK(strstr(info, "\"name\":\"maybe\",\"kind\":\"optional_tensor\"") != NULL);

  const float xs[6] = {1, 2, 3, 4, 5, 6}, ps[6] = {7, 8, 9, 10, 11, 12};
  int64_t xshape[2] = {3, 2}, p0shape[2] = {1, 2}, p1shape[2] = {2, 2};
  wt_tensor ins[3] = {f32(L, xshape, 2, xs), f32(L, p0shape, 2, ps), f32(L, p1shape, 2, ps + 2)};
  wt_onnx_values v = 0;
  OK(wt_onnx_run_values(m, ins, 3, "{\"x\": 0, \"parts\": [1, 2], \"maybe\": null, \"maybe_parts\": []}", &v));

  ERR(wt_onnx_values_layout_json(v, NULL, 0, &needed), WT_ERR_BUFFER_TOO_SMALL, "too small");
  char layout[128];
  CHECK(needed <= sizeof layout);
  OK(wt_onnx_values_layout_json(v, layout, sizeof layout, &needed));
  CHECK(strcmp(layout, "{\"pieces\":[0,1,2],\"joined\":3,\"has\":4,\"maybe_out\":null,\"parts_out\":[]}") == 0);

  int32_t n = 0;
  wt_tensor outs[5] = {0};
  ERR(wt_onnx_values_tensors(v, outs, 2, &n), WT_ERR_BUFFER_TOO_SMALL, "out_cap is 2");
  CHECK(n == 5 && outs[0] == 0);
  OK(wt_onnx_values_tensors(v, outs, 5, &n));
  CHECK(n == 5);
  OK(wt_onnx_values_free(v));
  ERR(wt_onnx_values_free(v), WT_ERR_HANDLE, "already freed");
  float got[6];
  OK(wt_tensor_to_host(outs[2], got, 2 * sizeof(float)));
  CHECK(got[0] == 5 && got[1] == 6);
  OK(wt_tensor_to_host(outs[3], got, sizeof got));
  for (int i = 0; i < 6; i++) CHECK(got[i] == ps[i]);
  uint8_t has = 1;
  OK(wt_tensor_to_host(outs[4], &has, 1));
  CHECK(has == 0);

  ERR(wt_onnx_run_values(m, ins, 3, "{\"x\": 0, \"parts\": 1, \"maybe\": 2, \"maybe_parts\": null}", &v),
      WT_ERR_INVALID, "input \"parts\": the model declares a sequence of tensors");
  ERR(wt_onnx_run_values(m, ins, 3, "{\"x\": 0, \"parts\": [1, 7]}", &v), WT_ERR_INVALID, "tensor index 7");
  ERR(wt_onnx_run_values(m, ins, 3, "{\"x\": 0,", &v), WT_ERR_INVALID, "layout_json");
  ERR(wt_onnx_run_values(m, ins, 3, NULL, &v), WT_ERR_INVALID, "layout_json is NULL");
  ERR(wt_onnx_run_values(m, NULL, 3, "{}", &v), WT_ERR_INVALID, "tensors is NULL");
  ERR(wt_onnx_values_tensors(v, NULL, 1, &n), WT_ERR_INVALID, "outputs is NULL");
  OK(wt_onnx_free(m));
  for (int i = 0; i < 3; i++) OK(wt_tensor_free(ins[i]));
  for (int i = 0; i < 5; i++) OK(wt_tensor_free(outs[i]));
}
