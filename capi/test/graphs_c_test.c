/*
 * graphs_c_test.c — graph capture through the C ABI: wt_trace_begin, ops
 * through wt_op, wt_trace_end, then wt_graph_run on new inputs equals the
 * eager ops; the passes show in wt_graph_text; bad calls are errors. And
 * the auto-agents' calls' protocol (their measurements are tested in Go,
 * Python and Node, with a policy module).
 */
#define TEST_FILE "capi/test/graphs_c_test.c"
#include "harness.h"

void test_graphs(void) {
  const float xs[4] = {1, 2, 3, 4}, ws[4] = {0.5f, -1, 2, 0.25f};
  wt_tensor x = vec(L, 4, xs), w = vec(L, 4, ws);
  OK(wt_trace_begin(&x, 1));
  ERR(wt_trace_begin(&x, 1), WT_ERR_INVALID, "already in progress");
  wt_tensor a = op(L, "mul", (wt_tensor[]){x, w}, 2, NULL, 0);
  wt_tensor b = op(L, "exp", &a, 1, NULL, 0);
  wt_tensor unused = op(L, "sin", &x, 1, NULL, 0);
  wt_graph g = 0;
  OK(wt_trace_end(&b, 1, &g));
  ERR(wt_trace_end(&b, 1, &g), WT_ERR_INVALID, "no capture");

  char text[1024];
  size_t needed = 0;
  OK(wt_graph_text(g, text, sizeof text, &needed));
  CHECK(strstr(text, "exp(") != NULL && strstr(text, "sin(") == NULL); /* dead code dropped */

  const float x2s[4] = {-1, 0, 1, 2};
  wt_tensor x2 = vec(L, 4, x2s);
  wt_tensor out = 0;
  int32_t n = 0;
  OK(wt_graph_run(g, &x2, 1, &out, 1, &n));
  CHECK(n == 1);
  float got[4];
  OK(wt_tensor_to_host(out, got, sizeof got));
  for (int i = 0; i < 4; i++) CHECK(fabsf(got[i] - expf(x2s[i] * ws[i])) < 1e-6f);

  ERR(wt_graph_run(g, NULL, 0, &out, 1, &n), WT_ERR_INVALID, "0 inputs");
  ERR(wt_graph_run(g, &x2, 1, NULL, 0, &n), WT_ERR_BUFFER_TOO_SMALL, "out_cap");
  wt_tensor wrong = vec(L, 4, xs);
  OK(wt_tensor_free(wrong));
  ERR(wt_graph_run(g, &wrong, 1, &out, 1, &n), WT_ERR_HANDLE, "freed");
  OK(wt_graph_free(g));
  ERR(wt_graph_free(g), WT_ERR_HANDLE, "graph handle");
  ERR(wt_graph_run(g, &x2, 1, &out, 1, &n), WT_ERR_HANDLE, "graph handle");

  /* An output the code did not compute is refused; abort drops a capture. */
  OK(wt_trace_begin(&x, 1));
  ERR(wt_trace_end(&w, 1, &g), WT_ERR_INVALID, "not computed");
  OK(wt_trace_begin(&x, 1));
  OK(wt_trace_abort());
  OK(wt_trace_abort());

  /* The auto-agents by name (g is freed: the handle is checked first). */
  const char *opts = "\"options\": {\"dir\": \"build/capi-test/auto-journal\"}";
  CALL_ERR("auto.tune_graph", 0, fmt("{\"graph\": %lld, \"inputs\": [%lld], %s}", (long long)g, (long long)x, opts),
           WT_ERR_HANDLE, "graph handle");
  CALL_ERR("auto.tune_loader", 0, fmt("{\"loader\": 987654, %s}", opts), WT_ERR_HANDLE, "loader");
  CALL_ERR("auto.rollback", 0, fmt("{%s}", opts), WT_ERR_INVALID, "auto.rollback: id is required");
  CALL_ERR("auto.rollback", 0, fmt("{\"id\": \"d9999\", %s}", opts), WT_ERR_INVALID, "no decision");
  const char *journal = CALL("auto.journal", 0, fmt("{%s}", opts));
  CHECK(journal && journal[0] == '[');
  CALL_ERR("auto.journal", 0, "{\"options\": {\"dri\": 1}}", WT_ERR_INVALID, "dri");

  /* Auto-parallel plans a traced graph on a described cluster: JSON with
   * the chosen plan; bad options and a freed graph are errors. */
  OK(wt_trace_begin(&x, 1));
  wt_tensor p = op(L, "mul", (wt_tensor[]){x, w}, 2, NULL, 0);
  wt_graph pg = 0;
  OK(wt_trace_end(&p, 1, &pg));
  const char *cluster = "\"options\": {\"cluster\": {\"devices\": [{\"name\": \"cpu\", \"kind\": \"cpu\", \"gflops\": 10, "
                        "\"gbps\": 10, \"memory_bytes\": 1000000}]}}";
  const char *plan = CALL("auto.parallel_plan", 0, fmt("{\"graph\": %lld, %s}", (long long)pg, cluster));
  CHECK(plan && strstr(plan, "\"chosen\":{\"strategy\":\"single\"") != NULL);
  CALL_ERR("auto.parallel_plan", 0, fmt("{\"graph\": %lld, \"options\": {\"workers\": 2}}", (long long)pg), WT_ERR_INVALID,
           "worker_exe");
  OK(wt_graph_free(pg));
  CALL_ERR("auto.parallel_plan", 0, fmt("{\"graph\": %lld, %s}", (long long)pg, cluster), WT_ERR_HANDLE, "graph handle");

  for (wt_tensor *t = (wt_tensor[]){x, w, a, b, unused, x2, out, p, 0}; *t; t++) OK(wt_tensor_free(*t));
}
