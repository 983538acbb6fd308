/*
 * onnx_c_test.c — ONNX models through wt_call: onnx/testdata/sdk_model.onnx
 * (y = relu(x @ W + b) * scale, top = argmax(y, 1); make_sdk_model.py) loaded
 * from its path and its bytes, its inputs and outputs listed, run with named
 * inputs, and bad calls refused; and onnx/testdata/sdk_values_model.onnx
 * (make_sdk_values_model.py: sequences and optionals each way) through
 * onnx.run_values. Run from the repository root (run.sh does), where the
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
  int64_t m = field(CALL("onnx.load", 0, "{\"path\": \"" SDK_MODEL "\"}"), NULL);
  if (!CHECK(m > 0)) return;
  const char *info = CALL("onnx.info", m, NULL);
  CHECK(info && strstr(info, "\"shape\":[\"batch\",4]") != NULL);
  CHECK(info && strstr(info, "\"name\":\"scale\"") != NULL);

  const float xs[8] = {1, 2, 3, 4, -1, 0, 1, 0}, two = 2;
  int64_t xshape[2] = {2, 4}, one = 1;
  wt_tensor x = f32(L, xshape, 2, xs), scale = f32(L, &one, 1, &two);
  const char *outs = CALL("onnx.run", m, fmt("{\"inputs\": {\"scale\": %lld, \"x\": %lld}}", (long long)scale, (long long)x));
  wt_tensor y = nth(outs, 0), top = nth(outs, 1);
  check_outputs(y, top);
  CALL_ERR("onnx.run", m, fmt("{\"inputs\": {\"scale\": %lld}}", (long long)scale), WT_ERR_INVALID, "\"x\" is missing");
  CALL_ERR("onnx.run", m, "{}", WT_ERR_INVALID, "onnx.run: inputs is required");
  CALL_ERR("onnx.run", m, fmt("{\"inputs\": {\"x\": %lld, \"zz\": %lld}}", (long long)x, (long long)scale), WT_ERR_INVALID, "zz");

  /* The same model from its bytes; the outputs outlive the model. */
  FILE *f = fopen(SDK_MODEL, "rb");
  CHECK(f != NULL);
  unsigned char buf[4096];
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  int64_t m2 = field(call_("onnx.load", 0, "{\"device\": \"cpu\"}", buf, len, __LINE__), NULL);
  outs = CALL("onnx.run", m2, fmt("{\"inputs\": {\"x\": %lld, \"scale\": %lld}}", (long long)x, (long long)scale));
  wt_tensor y2 = nth(outs, 0), top2 = nth(outs, 1);
  CALL("onnx.free", m2, NULL);
  check_outputs(y2, top2);
  CALL_ERR("onnx.free", m2, NULL, WT_ERR_HANDLE, "already freed");

  CALL_ERR("onnx.load", 0, "{\"path\": \"onnx/testdata/absent.onnx\"}", WT_ERR_IO, "absent.onnx");
  wt_call_result r = 0;
  ERR(wt_call("onnx.load", 0, NULL, buf, 3, &r), WT_ERR_INVALID, "onnx");
  CALL("onnx.free", m, NULL);
  for (wt_tensor *t = (wt_tensor[]){x, scale, y, top, y2, top2, 0}; *t; t++) OK(wt_tensor_free(*t));
}

/* Sequences and optionals: the tensors flat, a layout grouping them, the
 * outputs' layout and tensors in one result. */
void test_onnx_values(void) {
  int64_t m = field(CALL("onnx.load", 0, "{\"path\": \"" SDK_VALUES_MODEL "\"}"), NULL);
  if (!CHECK(m > 0)) return;
  const char *info = CALL("onnx.info", m, NULL);
  CHECK(info && strstr(info, "\"name\":\"parts\",\"kind\":\"sequence\"") != NULL);
  CHECK(info && strstr(info, "\"name\":\"maybe\",\"kind\":\"optional_tensor\"") != NULL);

  const float xs[6] = {1, 2, 3, 4, 5, 6}, ps[6] = {7, 8, 9, 10, 11, 12};
  int64_t xshape[2] = {3, 2}, p0shape[2] = {1, 2}, p1shape[2] = {2, 2};
  wt_tensor ins[3] = {f32(L, xshape, 2, xs), f32(L, p0shape, 2, ps), f32(L, p1shape, 2, ps + 2)};
  const char *tensors = fmt("[%lld, %lld, %lld]", (long long)ins[0], (long long)ins[1], (long long)ins[2]);
  const char *res = CALL("onnx.run_values", m, fmt("{\"tensors\": %s, \"layout\": {\"x\": 0, \"parts\": [1, 2], "
                                                   "\"maybe\": null, \"maybe_parts\": []}}", tensors));
  CHECK(res && strstr(res, "\"layout\":{\"pieces\":[0,1,2],\"joined\":3,\"has\":4,\"maybe_out\":null,\"parts_out\":[]}"));
  wt_tensor outs[5] = {0};
  const char *list = res ? strstr(res, "\"tensors\":") : NULL;
  for (int i = 0; i < 5; i++) outs[i] = nth(list, i);
  float got[6];
  OK(wt_tensor_to_host(outs[2], got, 2 * sizeof(float)));
  CHECK(got[0] == 5 && got[1] == 6);
  OK(wt_tensor_to_host(outs[3], got, sizeof got));
  for (int i = 0; i < 6; i++) CHECK(got[i] == ps[i]);
  uint8_t has = 1;
  OK(wt_tensor_to_host(outs[4], &has, 1));
  CHECK(has == 0);

  CALL_ERR("onnx.run_values", m, fmt("{\"tensors\": %s, \"layout\": {\"x\": 0, \"parts\": 1, \"maybe\": 2, "
                                     "\"maybe_parts\": null}}", tensors),
           WT_ERR_INVALID, "input \"parts\": the model declares a sequence of tensors");
  CALL_ERR("onnx.run_values", m, fmt("{\"tensors\": %s, \"layout\": {\"x\": 0, \"parts\": [1, 7]}}", tensors),
           WT_ERR_INVALID, "tensor index 7");
  CALL_ERR("onnx.run_values", m, fmt("{\"tensors\": %s, \"layout\": \"x\"}", tensors), WT_ERR_INVALID, "layout");
  CALL_ERR("onnx.run_values", m, "{\"tensors\": [1, null], \"layout\": {}}", WT_ERR_INVALID,
           "onnx.run_values: tensors[1] must be a tensor handle, got null");
  CALL("onnx.free", m, NULL);
  for (int i = 0; i < 3; i++) OK(wt_tensor_free(ins[i]));
  for (int i = 0; i < 5; i++) OK(wt_tensor_free(outs[i]));
}
