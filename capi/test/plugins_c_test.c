/*
 * plugins_c_test.c — WebAssembly plugins through the C ABI: loading from a
 * file and from memory, listing ops, calling a plugin op with wt_op, and the
 * errors for missing, malformed and duplicate modules. With WT_TEST_PLUGIN
 * set to build/plugins/cclip.wasm (make plugins) the example plugin is loaded
 * and called; the error cases run either way.
 */
#define _POSIX_C_SOURCE 200809L
#define TEST_FILE "capi/test/plugins_c_test.c"
#include "harness.h"

static void test_plugin_errors(void) {
  char name[64];
  size_t needed = 0;
  ERR(wt_plugin_load(NULL, name, sizeof name, &needed), WT_ERR_INVALID, "path");
  ERR(wt_plugin_load("/nonexistent/x.wasm", name, sizeof name, &needed), WT_ERR_INVALID, "x.wasm");
  static const unsigned char junk[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0xff, 0xff};
  ERR(wt_plugin_load_bytes(junk, sizeof junk, "junk", name, sizeof name, &needed), WT_ERR_INVALID, "junk");
  ERR(wt_plugin_load_bytes(NULL, 0, "none", name, sizeof name, &needed), WT_ERR_INVALID, "0 bytes");
  char buf[64];
  ERR(wt_plugin_ops("nosuchplugin", buf, sizeof buf, &needed), WT_ERR_INVALID, "nosuchplugin");
  ERR(wt_plugin_ops(NULL, buf, sizeof buf, &needed), WT_ERR_INVALID, "NULL");
}

static void test_plugin_example(const char *path) {
  char name[64];
  size_t needed = 0;
  if (!OK(wt_plugin_load(path, name, sizeof name, &needed))) return;
  CHECK(strcmp(name, "cclip") == 0);
  char ops[512];
  OK(wt_plugin_ops(name, ops, sizeof ops, &needed));
  CHECK(strstr(ops, "\"cclip.soft_clip\"") != NULL);
  /* Loading the same plugin twice is refused; the first stays usable. */
  ERR(wt_plugin_load(path, name, sizeof name, &needed), WT_ERR_INVALID, "cclip");

  const float xs[4] = {-3.0f, -0.5f, 0.0f, 2.0f};
  wt_tensor x = vec(L, 4, xs);
  wt_attr limit = a_float("limit", 2.0);
  wt_tensor y = op(L, "cclip.soft_clip", &x, 1, &limit, 1);
  float want[4];
  for (int i = 0; i < 4; i++) want[i] = 2.0f * tanhf(xs[i] / 2.0f);
  f32_is(L, y, want, 4, 1e-5f);
  /* The manifest lists plugin ops like built-in ones. */
  size_t n = 0;
  wt_manifest_json(NULL, 0, &n);
  char *m = malloc(n);
  if (CHECK(m != NULL) && OK(wt_manifest_json(m, n, &n))) CHECK(strstr(m, "\"name\":\"cclip.soft_clip\"") != NULL);
  free(m);
  wt_tensor_free(x);
  wt_tensor_free(y);
}

void test_plugins(void) {
  test_plugin_errors();
  const char *path = getenv("WT_TEST_PLUGIN");
  if (path && *path) {
    test_plugin_example(path);
  } else {
    printf("note: WT_TEST_PLUGIN not set (run `make plugins`); the example plugin was not loaded\n");
  }
}
