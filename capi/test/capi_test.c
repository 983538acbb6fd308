/*
 * capi_test.c — the C ABI against its contract, capi/include/webtensor.h.
 *
 * Every function of the header is called with good input and with bad input.
 * Each failed check prints file:line, what was expected and wt_last_error();
 * the program ends with one line "N passed, M failed" and exits non-zero on
 * any failure. Run it through capi/test/run.sh.
 */
#define _POSIX_C_SOURCE 200809L
#define TEST_FILE "capi/test/capi_test.c"
#include "harness.h"

int passed, failed;

void test_dlpack_export(void);
void test_dlpack_import(void);
void test_dlpack_legacy_and_refusals(void);
void test_borrowed_import(void);
void test_graphs(void);
void test_plugins(void);
void test_train(void);
void test_onnx(void);
void test_onnx_values(void);
void test_domains(void);

static void test_info(void) {
  CHECK(strcmp(wt_last_error(), "") == 0); /* nothing failed yet on this thread */
  const char *v = wt_version();
  CHECK(v != NULL && strlen(v) >= 5 && strchr(v, '.') != NULL);
  CHECK(wt_abi_version() == WT_ABI_VERSION);
  char *info = get_str(L, S_BUILD, 0);
  if (info != NULL) {
    size_t n = strlen(info);
    CHECK(n > 2 && info[0] == '{' && info[n - 1] == '}');
    CHECK(strstr(info, v) != NULL);
    CHECK(strstr(info, "\"abi\"") != NULL && strstr(info, "\"linux\"") != NULL);
    CHECK(strstr(info, "go1.") != NULL);
    free(info);
  }
  const char *seen[8] = {0};
  for (int32_t s = WT_OK; s <= WT_ERR_INTERNAL; s++) {
    seen[s] = wt_status_string(s);
    CHECK(seen[s] != NULL && seen[s][0] != 0);
    for (int32_t p = 0; p < s && seen[s] != NULL; p++) CHECK(strcmp(seen[p], seen[s]) != 0);
  }
  CHECK(wt_status_string(42) != NULL && wt_status_string(42)[0] != 0);
  CHECK(wt_status_string(-1) != NULL && wt_status_string(-1)[0] != 0);
}

/* ---- Devices ------------------------------------------------------------------ */

static void test_devices(void) {
  int32_t count = -1;
  OK(wt_device_count(&count));
  CHECK(count >= 1);
  int have_cpu = 0;
  for (int32_t i = 0; i < count; i++) {
    char *name = get_str(L, S_DEVNAME, i);
    have_cpu |= name != NULL && strcmp(name, "cpu") == 0;
    free(name);
  }
  CHECK(have_cpu);
  char buf[64];
  size_t needed = 0;
  ERR(wt_device_name(count, buf, sizeof buf, &needed), WT_ERR_INVALID, num(count));
  ERR(wt_device_name(-1, buf, sizeof buf, &needed), WT_ERR_INVALID, "-1");
  ERR(wt_device_count(NULL), WT_ERR_INVALID, NULL);

  OK(wt_set_default_device("cpu"));
  char *def = get_str(L, S_DEFAULT, 0);
  CHECK(def != NULL && strcmp(def, "cpu") == 0);
  free(def);
  ERR2(wt_set_default_device("nosuchdevice"), WT_ERR_INVALID, WT_ERR_UNSUPPORTED, "nosuchdevice");
  ERR(wt_set_default_device(NULL), WT_ERR_INVALID, NULL);
  def = get_str(L, S_DEFAULT, 0); /* a failed set changes nothing */
  CHECK(def != NULL && strcmp(def, "cpu") == 0);
  free(def);
}

/* ---- Tensors -------------------------------------------------------------------- */

static void test_tensor_basics(void) {
  wt_tensor t = f32(L, (int64_t[]){2, 3}, 2, (float[]){1, 2, 3, 4, 5, 6});
  int32_t nd = 0, dt = 0, contig = -1;
  int64_t shape[4] = {0}, strides[4] = {0}, n = 0;
  OK(wt_tensor_ndim(t, &nd));
  CHECK(nd == 2);
  OK(wt_tensor_shape(t, shape, 4));
  CHECK(shape[0] == 2 && shape[1] == 3);
  OK(wt_tensor_strides(t, strides, 4));
  CHECK(strides[0] == 3 && strides[1] == 1);
  OK(wt_tensor_numel(t, &n));
  CHECK(n == 6);
  OK(wt_tensor_dtype(t, &dt));
  CHECK(dt == WT_F32);
  OK(wt_tensor_is_contiguous(t, &contig));
  CHECK(contig == 1);
  char *dev = get_str(L, S_TDEVICE, t);
  CHECK(dev != NULL && strcmp(dev, "cpu") == 0);
  free(dev);
  f32_is(L, t, (float[]){1, 2, 3, 4, 5, 6}, 6, 0);
  float big[8];
  OK(wt_tensor_to_host(t, big, sizeof big)); /* a larger buffer is fine */
  ERR(wt_tensor_shape(t, shape, 1), WT_ERR_BUFFER_TOO_SMALL, NULL);
  ERR(wt_tensor_strides(t, strides, 1), WT_ERR_BUFFER_TOO_SMALL, NULL);
  ERR(wt_tensor_to_host(t, big, 23), WT_ERR_BUFFER_TOO_SMALL, "24");

  wt_tensor z = 0;
  OK(wt_tensor_zeros(WT_I64, (int64_t[]){3, 4}, 2, "cpu", &z));
  int64_t zv[12];
  memset(zv, 0x55, sizeof zv);
  OK(wt_tensor_to_host(z, zv, sizeof zv));
  int zero = 1;
  for (int i = 0; i < 12; i++) zero &= zv[i] == 0;
  CHECK(zero);
  OK(wt_tensor_dtype(z, &dt));
  CHECK(dt == WT_I64);

  /* A scalar: ndim 0, shape may be NULL, one element. */
  wt_tensor s = 0;
  float sv = 2.5f;
  OK(wt_tensor_from_data(&sv, sizeof sv, WT_F32, NULL, 0, "", &s));
  shape_is(L, s, 0, NULL);
  OK(wt_tensor_numel(s, &n));
  CHECK(n == 1);
  OK(wt_tensor_shape(s, shape, 4));
  OK(wt_tensor_strides(s, strides, 4));
  f32_is(L, s, &sv, 1, 0);
  wt_tensor zs = 0;
  OK(wt_tensor_zeros(WT_F64, NULL, 0, NULL, &zs));
  shape_is(L, zs, 0, NULL);

  /* Empty tensors: a 0 extent, no elements, reads of nothing succeed. */
  wt_tensor e = 0, e2 = 0;
  OK(wt_tensor_from_data(&sv, 0, WT_F32, (int64_t[]){2, 0, 3}, 3, NULL, &e));
  shape_is(L, e, 3, (int64_t[]){2, 0, 3});
  OK(wt_tensor_numel(e, &n));
  CHECK(n == 0);
  OK(wt_tensor_to_host(e, big, 0));
  OK(wt_tensor_zeros(WT_I32, (int64_t[]){0}, 1, NULL, &e2));
  OK(wt_tensor_numel(e2, &n));
  CHECK(n == 0);
  wt_tensor es = op(L, "sum", &e, 1, NULL, 0); /* sum of nothing is 0 */
  f32_is(L, es, (float[]){0}, 1, 0);
  free_all((wt_tensor[]){t, z, s, zs, e, e2, es}, 7);
}

/* Every dtype round-trips its bytes; the 16-bit floats go in as raw bits. */
static void test_dtypes(void) {
  static const uint16_t h[] = {0x3C00, 0xC000, 0x3800, 0x7C00};        /* f16: 1, -2, 0.5, inf */
  static const uint16_t bf[] = {0x3F80, 0xC040, 0x3F00, 0x7F80};       /* bf16: 1, -3, 0.5, inf */
  static const double f64[] = {1e300, -0.5, 3, 4};
  static const int64_t i64[] = {-5, INT64_C(1) << 40, 0, INT64_MAX};
  static const int32_t i32[] = {-7, 1 << 30, 0, INT32_MIN};
  static const uint32_t u32[] = {0xFFFFFFFFu, 1, 2, 3};
  static const int16_t i16[] = {-32768, 32767, 0, 1};
  static const int8_t i8[] = {-128, 127, 0, -1};
  static const uint8_t u8[] = {255, 0, 1, 128};
  static const uint16_t u16[] = {0xFFFF, 0, 1, 0x8000};
  static const uint64_t u64[] = {UINT64_MAX, UINT64_C(1) << 63, 0, (UINT64_C(1) << 53) + 1};
  static const uint8_t b[] = {1, 0, 1, 1};
  static const float f[] = {1.5f, -2, 0, 1e30f};
  struct { int32_t dt; const void *data; } cases[] = {
      {WT_F32, f}, {WT_F16, h}, {WT_BF16, bf}, {WT_F64, f64}, {WT_I64, i64}, {WT_I32, i32},
      {WT_U32, u32}, {WT_I16, i16}, {WT_I8, i8}, {WT_U8, u8}, {WT_BOOL, b}, {WT_U16, u16}, {WT_U64, u64}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    wt_tensor t = make(L, cases[c].dt, (int64_t[]){4}, 1, cases[c].data);
    int32_t dt = 0;
    unsigned char back[32];
    OK(wt_tensor_dtype(t, &dt));
    if (!CHECK(dt == cases[c].dt)) printf("    dtype %d came back as %d\n", cases[c].dt, dt);
    OK(wt_tensor_to_host(t, back, sizeof back));
    if (!CHECK(memcmp(back, cases[c].data, 4 * dsize(cases[c].dt)) == 0)) {
      printf("    dtype %d: bytes differ after the round trip\n", cases[c].dt);
    }
    OK(wt_tensor_free(t));
  }
  /* DTYPE attribute: cast to f32 reads the raw bits as numbers. */
  wt_tensor th = make(L, WT_F16, (int64_t[]){4}, 1, h);
  wt_tensor tb = make(L, WT_BF16, (int64_t[]){4}, 1, bf);
  wt_tensor tbool = make(L, WT_BOOL, (int64_t[]){4}, 1, b);
  wt_attr to_f32 = a_dtype("dtype", WT_F32);
  wt_tensor ch = op(L, "cast", &th, 1, &to_f32, 1);
  wt_tensor cb = op(L, "cast", &tb, 1, &to_f32, 1);
  wt_tensor cbool = op(L, "cast", &tbool, 1, &to_f32, 1);
  f32_is(L, ch, (float[]){1, -2, 0.5f, INFINITY}, 4, 0);
  f32_is(L, cb, (float[]){1, -3, 0.5f, INFINITY}, 4, 0);
  f32_is(L, cbool, (float[]){1, 0, 1, 1}, 4, 0);
  free_all((wt_tensor[]){th, tb, tbool, ch, cb, cbool}, 6);
}

/* A transposed view, made dense, moved to a device, counted. */
static void test_views_and_refs(void) {
  int64_t start = live_tensors();
  wt_tensor t = f32(L, (int64_t[]){2, 3}, 2, (float[]){1, 2, 3, 4, 5, 6});
  wt_tensor tt = op(L, "transpose", &t, 1, NULL, 0);
  int64_t strides[2] = {0};
  int32_t contig = -1;
  shape_is(L, tt, 2, (int64_t[]){3, 2});
  OK(wt_tensor_strides(tt, strides, 2));
  CHECK(strides[0] == 1 && strides[1] == 3);
  OK(wt_tensor_is_contiguous(tt, &contig));
  CHECK(contig == 0);
  f32_is(L, tt, (float[]){1, 4, 2, 5, 3, 6}, 6, 0); /* to_host is row-major */
  wt_tensor c = 0, same = 0, moved = 0;
  OK(wt_tensor_contiguous(tt, &c));
  CHECK(c != 0 && c != tt);
  OK(wt_tensor_is_contiguous(c, &contig));
  CHECK(contig == 1);
  OK(wt_tensor_strides(c, strides, 2));
  CHECK(strides[0] == 2 && strides[1] == 1);
  f32_is(L, c, (float[]){1, 4, 2, 5, 3, 6}, 6, 0);
  OK(wt_tensor_contiguous(t, &same)); /* already dense: a new handle all the same */
  CHECK(same != 0 && same != t);
  OK(wt_tensor_to_device(t, "cpu", &moved));
  CHECK(moved != 0 && moved != t);
  f32_is(L, moved, (float[]){1, 2, 3, 4, 5, 6}, 6, 0);
  wt_tensor keep = 12345;
  ERR2(wt_tensor_to_device(t, "nosuchdevice", &keep), WT_ERR_INVALID, WT_ERR_UNSUPPORTED, "nosuchdevice");
  CHECK(keep == 12345); /* outputs are written only on success */
  CHECK(live_tensors() == start + 5);
  free_all((wt_tensor[]){tt, c, same, moved}, 4);

  /* Reference counting: retain adds a reference, the last free ends it. */
  OK(wt_tensor_retain(t));
  OK(wt_tensor_retain(t));
  OK(wt_tensor_free(t));
  OK(wt_tensor_free(t));
  CHECK(live_tensors() == start + 1);
  f32_is(L, t, (float[]){1, 2, 3, 4, 5, 6}, 6, 0); /* still alive */
  OK(wt_tensor_free(t));
  CHECK(live_tensors() == start);
  int32_t nd = 77;
  ERR(wt_tensor_ndim(t, &nd), WT_ERR_HANDLE, num(t));
  CHECK(nd == 77);
  ERR(wt_tensor_free(t), WT_ERR_HANDLE, num(t)); /* double free */
  ERR(wt_tensor_retain(t), WT_ERR_HANDLE, num(t));
}

/* ---- Ops ------------------------------------------------------------------------- */

static void test_op_attrs(void) {
  wt_tensor m = f32(L, (int64_t[]){2, 2}, 2, (float[]){0, 0, 1, 3});
  wt_attr axis0 = a_int("axis", 0); /* INT */
  wt_tensor sm = op(L, "softmax", &m, 1, &axis0, 1);
  float e1 = 1 / (1 + expf(1)), e3 = 1 / (1 + expf(3));
  f32_is(L, sm, (float[]){e1, e3, 1 - e1, 1 - e3}, 4, 1e-6f);

  wt_tensor x = vec(L, 3, (float[]){-2, 3, 0});
  wt_attr slope = a_float("negative_slope", 0.5); /* FLOAT */
  wt_tensor lr = op(L, "leaky_relu", &x, 1, &slope, 1);
  f32_is(L, lr, (float[]){-1, 3, 0}, 3, 0);

  wt_attr keep[2] = {a_ints("axes", (int64_t[]){1}, 1), a_bool("keepdim", 1)}; /* INTS, BOOL */
  wt_tensor s = op(L, "sum", &m, 1, keep, 2);
  shape_is(L, s, 2, (int64_t[]){2, 1});
  f32_is(L, s, (float[]){0, 4}, 2, 0);
  keep[1] = a_bool("keepdim", 0);
  wt_tensor s0 = op(L, "sum", &m, 1, keep, 2);
  shape_is(L, s0, 1, (int64_t[]){2});

  wt_tensor one = vec(L, 1, (float[]){1});
  wt_attr tanh_form = a_str("approximate", "tanh"); /* STRING */
  wt_tensor g = op(L, "gelu", &one, 1, &tanh_form, 1);
  f32_is(L, g, (float[]){0.8411920f}, 1, 2e-6f); /* the exact form would be 0.8413447 */

  wt_attr shape = a_ints("shape", (int64_t[]){4, -1}, 2);
  wt_tensor r = op(L, "reshape", &m, 1, &shape, 1);
  shape_is(L, r, 2, (int64_t[]){4, 1});

  wt_tensor q_in = vec(L, 3, (float[]){1, -1, 0.26f});
  wt_attr scale = a_floats("scale", (double[]){0.5}, 1); /* FLOATS */
  wt_tensor q = op(L, "quantize", &q_in, 1, &scale, 1);
  int32_t dt = 0;
  int8_t qv[3] = {0};
  OK(wt_tensor_dtype(q, &dt));
  CHECK(dt == WT_I8);
  OK(wt_tensor_to_host(q, qv, sizeof qv));
  CHECK(qv[0] == 2 && qv[1] == -2 && qv[2] == 1);
  free_all((wt_tensor[]){m, sm, x, lr, s, s0, one, g, r, q_in, q}, 11);
}

static void test_multi_output_and_matmul(void) {
  wt_tensor x = vec(L, 4, (float[]){1, 5, 3, 4});
  wt_attr k = a_int("k", 2);
  wt_tensor out[3] = {0};
  if (op_n(L, "topk", &x, 1, &k, 1, out, 2)) {
    int64_t idx[2] = {0};
    int32_t dt = 0;
    f32_is(L, out[0], (float[]){5, 4}, 2, 0);
    OK(wt_tensor_dtype(out[1], &dt));
    CHECK(dt == WT_I64);
    OK(wt_tensor_to_host(out[1], idx, sizeof idx));
    CHECK(idx[0] == 1 && idx[1] == 3);
    free_all(out, 2);
  }

  wt_tensor six = vec(L, 6, (float[]){0, 1, 2, 3, 4, 5});
  wt_attr sections = a_int("sections", 3);
  int64_t before = live_tensors();
  int32_t n = -1;
  out[0] = out[1] = 0;
  ERR(wt_op("split", &six, 1, &sections, 1, out, 2, &n), WT_ERR_BUFFER_TOO_SMALL, NULL);
  CHECK(n == 3);
  CHECK(out[0] == 0 && out[1] == 0 && live_tensors() == before); /* created nothing */
  n = -1;
  ERR(wt_op("split", &six, 1, &sections, 1, NULL, 0, &n), WT_ERR_BUFFER_TOO_SMALL, NULL);
  CHECK(n == 3 && live_tensors() == before); /* NULL with capacity 0 asks for the count */
  if (op_n(L, "split", &six, 1, &sections, 1, out, 3)) {
    f32_is(L, out[2], (float[]){4, 5}, 2, 0);
    free_all(out, 3);
  }

  /* [[1 2 3] [4 5 6]] x [[7 8] [9 10] [11 12]] = [[58 64] [139 154]] */
  wt_tensor a = f32(L, (int64_t[]){2, 3}, 2, (float[]){1, 2, 3, 4, 5, 6});
  wt_tensor b = f32(L, (int64_t[]){3, 2}, 2, (float[]){7, 8, 9, 10, 11, 12});
  wt_tensor mm = op(L, "matmul", (wt_tensor[]){a, b}, 2, NULL, 0);
  shape_is(L, mm, 2, (int64_t[]){2, 2});
  f32_is(L, mm, (float[]){58, 64, 139, 154}, 4, 0);
  wt_tensor o = 0;
  ERR(wt_op("matmul", (wt_tensor[]){a, a}, 2, NULL, 0, &o, 1, &n), WT_ERR_INVALID, "matmul");

  /* An absent optional input (conv2d's bias) is passed as 0. */
  wt_tensor img = f32(L, (int64_t[]){1, 1, 2, 2}, 4, (float[]){1, 2, 3, 4});
  wt_tensor w = f32(L, (int64_t[]){1, 1, 1, 1}, 4, (float[]){2});
  wt_tensor conv = op(L, "conv2d", (wt_tensor[]){img, w, 0}, 3, NULL, 0);
  shape_is(L, conv, 4, (int64_t[]){1, 1, 2, 2});
  f32_is(L, conv, (float[]){2, 4, 6, 8}, 4, 0);
  free_all((wt_tensor[]){x, six, a, b, mm, img, w, conv}, 8);
}

static void test_op_errors(void) {
  wt_tensor x = vec(L, 2, (float[]){1, 2});
  wt_tensor gone = vec(L, 2, (float[]){1, 2});
  OK(wt_tensor_free(gone));
  wt_tensor o = 0;
  int32_t n = -1;
  int64_t start = live_tensors();
  ERR(wt_op("nosuchop", &x, 1, NULL, 0, &o, 1, &n), WT_ERR_INVALID, "nosuchop");
  ERR(wt_op(NULL, &x, 1, NULL, 0, &o, 1, &n), WT_ERR_INVALID, NULL);
  wt_attr as_string = a_str("axis", "0");
  ERR(wt_op("softmax", &x, 1, &as_string, 1, &o, 1, &n), WT_ERR_INVALID, "axis");
  wt_attr bogus = a_int("bogus", 1);
  ERR(wt_op("softmax", &x, 1, &bogus, 1, &o, 1, &n), WT_ERR_INVALID, "bogus");
  wt_attr bad_kind = {.name = "axis", .kind = 99};
  ERR(wt_op("softmax", &x, 1, &bad_kind, 1, &o, 1, &n), WT_ERR_INVALID, "99");
  wt_attr no_name = a_int(NULL, 0);
  ERR(wt_op("softmax", &x, 1, &no_name, 1, &o, 1, &n), WT_ERR_INVALID, NULL);
  wt_attr null_s = a_str("approximate", NULL);
  ERR(wt_op("gelu", &x, 1, &null_s, 1, &o, 1, &n), WT_ERR_INVALID, NULL);
  wt_attr null_ints = a_ints("shape", NULL, 2);
  ERR(wt_op("reshape", &x, 1, &null_ints, 1, &o, 1, &n), WT_ERR_INVALID, NULL);
  wt_attr neg_len = a_ints("shape", (int64_t[]){2}, -1);
  ERR(wt_op("reshape", &x, 1, &neg_len, 1, &o, 1, &n), WT_ERR_INVALID, "-1");
  ERR(wt_op("softmax", &x, 1, NULL, 1, &o, 1, &n), WT_ERR_INVALID, NULL);
  ERR(wt_op("add", NULL, 2, NULL, 0, &o, 1, &n), WT_ERR_INVALID, NULL);
  ERR(wt_op("add", &x, 1, NULL, 0, &o, 1, &n), WT_ERR_INVALID, "add");
  ERR(wt_op("add", (wt_tensor[]){x, gone}, 2, NULL, 0, &o, 1, &n), WT_ERR_HANDLE, num(gone));
  ERR2(wt_op("add", (wt_tensor[]){x, 0}, 2, NULL, 0, &o, 1, &n), WT_ERR_INVALID, WT_ERR_HANDLE, NULL);
  ERR(wt_op("neg", &x, -1, NULL, 0, &o, 1, &n), WT_ERR_INVALID, "-1");
  ERR(wt_op("neg", &x, 1, NULL, -1, &o, 1, &n), WT_ERR_INVALID, "-1");
  ERR(wt_op("neg", &x, 1, NULL, 0, NULL, 1, &n), WT_ERR_INVALID, NULL);
  ERR(wt_op("neg", &x, 1, NULL, 0, &o, 1, NULL), WT_ERR_INVALID, NULL);
  CHECK(o == 0 && live_tensors() == start);
  OK(wt_tensor_free(x));
}

static void test_manifest(void) {
  char *m = get_str(L, S_MANIFEST, 0);
  if (m != NULL) {
    CHECK(m[0] == '{' || m[0] == '[');
    CHECK(strstr(m, "\"name\":\"conv2d\"") != NULL);
    CHECK(strstr(m, "\"name\":\"matmul\"") != NULL);
    free(m);
  }
}

/* ---- Autograd ---------------------------------------------------------------------- */

/* sum_sq returns sum(x*x), freeing the intermediate. */
static wt_tensor sum_sq(int line, wt_tensor x) {
  wt_tensor y = op(line, "mul", (wt_tensor[]){x, x}, 2, NULL, 0);
  wt_tensor s = op(line, "sum", &y, 1, NULL, 0);
  expect_(wt_tensor_free(y), WT_OK, WT_OK, NULL, "wt_tensor_free", line);
  return s;
}

static void test_autograd(void) {
  wt_tensor x = vec(L, 3, (float[]){1, 2, 3});
  int32_t on = -1;
  wt_tensor g = 99;
  OK(wt_tensor_requires_grad(x, &on));
  CHECK(on == 0);
  OK(wt_tensor_grad(x, &g)); /* no gradient yet: 0 */
  CHECK(g == 0);
  OK(wt_tensor_set_requires_grad(x, 1));
  OK(wt_tensor_requires_grad(x, &on));
  CHECK(on == 1);

  wt_tensor s = sum_sq(L, x);
  OK(wt_tensor_requires_grad(s, &on));
  CHECK(on == 1);
  OK(wt_backward(s, 0));
  OK(wt_tensor_grad(x, &g));
  if (CHECK(g != 0)) {
    f32_is(L, g, (float[]){2, 4, 6}, 3, 0);
    OK(wt_tensor_free(g));
  }
  wt_tensor s2 = sum_sq(L, x); /* gradients accumulate */
  OK(wt_backward(s2, 0));
  OK(wt_tensor_grad(x, &g));
  f32_is(L, g, (float[]){4, 8, 12}, 3, 0);
  OK(wt_tensor_free(g));

  /* Backward from a non-scalar with an explicit gradient. */
  OK(wt_tensor_zero_grad(x));
  OK(wt_tensor_grad(x, &g));
  if (g != 0) { /* zero_grad may drop the gradient or zero it */
    f32_is(L, g, (float[]){0, 0, 0}, 3, 0);
    OK(wt_tensor_free(g));
  }
  wt_tensor y = op(L, "mul", (wt_tensor[]){x, x}, 2, NULL, 0);
  wt_tensor ones = vec(L, 3, (float[]){1, 1, 1});
  ERR(wt_backward(y, 0), WT_ERR_INVALID, NULL); /* three elements and no gradient */
  OK(wt_backward(y, ones));
  OK(wt_tensor_grad(x, &g));
  f32_is(L, g, (float[]){2, 4, 6}, 3, 0);
  OK(wt_tensor_free(g));

  ERR(wt_backward(ones, 0), WT_ERR_INVALID, NULL); /* does not require grad */
  wt_tensor iv = make(L, WT_I32, (int64_t[]){2}, 1, (int32_t[]){1, 2});
  ERR(wt_tensor_set_requires_grad(iv, 1), WT_ERR_INVALID, NULL); /* not floating point */

  /* no_grad: nested scopes; results inside do not require grad. */
  OK(wt_no_grad_enter());
  OK(wt_no_grad_enter());
  wt_tensor ng = op(L, "mul", (wt_tensor[]){x, x}, 2, NULL, 0);
  OK(wt_no_grad_exit());
  wt_tensor ng2 = op(L, "mul", (wt_tensor[]){x, x}, 2, NULL, 0);
  OK(wt_no_grad_exit());
  wt_tensor yes = op(L, "mul", (wt_tensor[]){x, x}, 2, NULL, 0);
  OK(wt_tensor_requires_grad(ng, &on));
  CHECK(on == 0);
  OK(wt_tensor_requires_grad(ng2, &on));
  CHECK(on == 0);
  OK(wt_tensor_requires_grad(yes, &on));
  CHECK(on == 1);

  wt_tensor d = 0;
  OK(wt_tensor_detach(yes, &d));
  OK(wt_tensor_requires_grad(d, &on));
  CHECK(on == 0 && d != yes);
  f32_is(L, d, (float[]){1, 4, 9}, 3, 0);
  DLManagedTensorVersioned *md = NULL, *my = NULL; /* detach shares the data */
  if (OK(wt_to_dlpack_versioned(d, &md)) && OK(wt_to_dlpack_versioned(yes, &my))) {
    CHECK((char *)md->dl_tensor.data + md->dl_tensor.byte_offset ==
          (char *)my->dl_tensor.data + my->dl_tensor.byte_offset);
  }
  if (md != NULL) md->deleter(md);
  if (my != NULL) my->deleter(my);
  OK(wt_tensor_set_requires_grad(x, 0));
  OK(wt_tensor_requires_grad(x, &on));
  CHECK(on == 0);
  free_all((wt_tensor[]){x, s, s2, y, ones, iv, ng, ng2, yes, d}, 10);
}

/* ---- Random numbers ------------------------------------------------------------------- */

static void randn16(int line, float *dst) {
  wt_attr shape = a_ints("shape", (int64_t[]){16}, 1);
  wt_tensor r = op(line, "randn", NULL, 0, &shape, 1);
  memset(dst, 0, 16 * sizeof(float));
  expect_(wt_tensor_to_host(r, dst, 16 * sizeof(float)), WT_OK, WT_OK, NULL, "to_host", line);
  expect_(wt_tensor_free(r), WT_OK, WT_OK, NULL, "wt_tensor_free", line);
}

static void test_rng(void) {
  float a[16], b[16], c[16], d[16];
  uint64_t seed = 0, off0 = 0, off1 = 0;
  OK(wt_manual_seed(1234));
  OK(wt_rng_state(&seed, &off0));
  CHECK(seed == 1234);
  randn16(L, a);
  OK(wt_rng_state(&seed, &off1));
  CHECK(seed == 1234 && off1 > off0); /* the offset moves past the counters used */
  randn16(L, b);
  CHECK(memcmp(a, b, sizeof a) != 0);
  OK(wt_manual_seed(1234));
  randn16(L, c);
  CHECK(memcmp(a, c, sizeof a) == 0);
  OK(wt_set_rng_state(1234, off1));
  randn16(L, d);
  CHECK(memcmp(b, d, sizeof b) == 0);
  OK(wt_manual_seed(99));
  randn16(L, d);
  CHECK(memcmp(a, d, sizeof a) != 0);
  int nonzero = 0;
  for (int i = 0; i < 16; i++) nonzero += a[i] != 0 && isfinite(a[i]);
  CHECK(nonzero == 16);
  ERR(wt_rng_state(NULL, &off0), WT_ERR_INVALID, NULL);
  ERR(wt_rng_state(&seed, NULL), WT_ERR_INVALID, NULL);
}

/* ---- DLPack -------------------------------------------------------------------------- */

static void test_bad_input(void) {
  int64_t start = live_tensors();
  wt_tensor t = vec(L, 2, (float[]){1, 2});
  wt_tensor gone = vec(L, 1, (float[]){1});
  OK(wt_tensor_free(gone));
  float d[6] = {0};
  wt_tensor out = 31337;
  int32_t i32 = 0;
  int64_t i64 = 0, sh[2] = {2, 3}, ext[2];
  char buf[16];
  size_t needed = 0;

  /* NULL out pointers. */
  ERR(wt_tensor_from_data(d, 24, WT_F32, sh, 2, NULL, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_zeros(WT_F32, sh, 2, NULL, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_ndim(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_shape(t, NULL, 2), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_strides(t, NULL, 2), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_numel(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_dtype(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_is_contiguous(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_to_host(t, NULL, 8), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_contiguous(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_to_device(t, "cpu", NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_requires_grad(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_grad(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_detach(t, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_live_tensors(NULL), WT_ERR_INVALID, NULL);
  ERR2(wt_build_info(buf, 1, NULL), WT_ERR_INVALID, WT_ERR_BUFFER_TOO_SMALL, NULL);
  ERR(wt_tensor_device(t, NULL, 0, &needed), WT_ERR_BUFFER_TOO_SMALL, NULL);
  CHECK(needed == 4); /* "cpu" and its NUL */

  /* Handle 0 and a freed handle, for every function that takes one. */
  wt_tensor bad[2] = {0, gone};
  for (int b = 0; b < 2; b++) {
    wt_tensor h = bad[b];
    const char *hs = b == 0 ? NULL : num(gone);
    ERR(wt_tensor_retain(h), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_free(h), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_ndim(h, &i32), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_shape(h, ext, 2), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_strides(h, ext, 2), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_numel(h, &i64), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_dtype(h, &i32), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_device(h, buf, sizeof buf, &needed), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_is_contiguous(h, &i32), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_to_host(h, d, sizeof d), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_contiguous(h, &out), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_to_device(h, "cpu", &out), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_set_requires_grad(h, 1), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_requires_grad(h, &i32), WT_ERR_HANDLE, hs);
    ERR(wt_backward(h, 0), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_grad(h, &out), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_zero_grad(h), WT_ERR_HANDLE, hs);
    ERR(wt_tensor_detach(h, &out), WT_ERR_HANDLE, hs);
  }
  ERR(wt_tensor_retain(-5), WT_ERR_HANDLE, "-5");
  ERR(wt_tensor_free(INT64_MAX), WT_ERR_HANDLE, num(INT64_MAX));
  ERR(wt_backward(t, gone), WT_ERR_HANDLE, num(gone));
  CHECK(out == 31337);

  /* Shapes, sizes, dtypes, ranks. */
  ERR(wt_tensor_from_data(d, 24, WT_F32, (int64_t[]){-1, 2}, 2, NULL, &out), WT_ERR_INVALID, "-1");
  ERR(wt_tensor_zeros(WT_F32, (int64_t[]){3, -4}, 2, NULL, &out), WT_ERR_INVALID, "-4");
  ERR(wt_tensor_from_data(d, 20, WT_F32, sh, 2, NULL, &out), WT_ERR_INVALID, "20");
  ERR(wt_tensor_from_data(d, 28, WT_F32, sh, 2, NULL, &out), WT_ERR_INVALID, "24");
  ERR(wt_tensor_from_data(d, 24, 0, sh, 2, NULL, &out), WT_ERR_INVALID, "0");
  ERR(wt_tensor_from_data(d, 24, 99, sh, 2, NULL, &out), WT_ERR_INVALID, "99");
  ERR(wt_tensor_zeros(99, sh, 2, NULL, &out), WT_ERR_INVALID, "99");
  ERR(wt_tensor_zeros(-3, sh, 2, NULL, &out), WT_ERR_INVALID, "-3");
  ERR(wt_tensor_from_data(d, 24, WT_F32, sh, -1, NULL, &out), WT_ERR_INVALID, "-1");
  ERR(wt_tensor_zeros(WT_F32, sh, 1000, NULL, &out), WT_ERR_INVALID, "1000");
  ERR(wt_tensor_from_data(d, 24, WT_F32, NULL, 2, NULL, &out), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_from_data(NULL, 24, WT_F32, sh, 2, NULL, &out), WT_ERR_INVALID, NULL);
  int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 16};
  ERR(wt_tensor_zeros(WT_F32, huge, 3, NULL, &out), WT_ERR_INVALID, NULL);
  ERR(wt_tensor_from_data(d, 24, WT_F32, huge, 3, NULL, &out), WT_ERR_INVALID, NULL);
  int64_t bytes_overflow[1] = {INT64_C(1) << 62}; /* numel fits, bytes do not */
  ERR2(wt_tensor_zeros(WT_F64, bytes_overflow, 1, NULL, &out), WT_ERR_INVALID, WT_ERR_OUT_OF_MEMORY, NULL);
  int64_t too_big[2] = {INT32_MAX, 64}; /* 1 TiB of f64: a valid shape, no memory for it */
  ERR(wt_tensor_zeros(WT_F64, too_big, 2, NULL, &out), WT_ERR_OUT_OF_MEMORY, NULL);
  ERR2(wt_tensor_zeros(WT_F32, sh, 2, "nosuchdevice", &out), WT_ERR_INVALID, WT_ERR_UNSUPPORTED,
       "nosuchdevice");
  ERR(wt_tensor_to_device(t, NULL, &out), WT_ERR_INVALID, NULL);
  CHECK(out == 31337);
  CHECK(live_tensors() == start + 1);
  OK(wt_tensor_free(t));
}

/* ---- Main --------------------------------------------------------------------------------------- */

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  test_info();
  int64_t start = live_tensors();
  test_devices();
  test_tensor_basics();
  test_dtypes();
  test_views_and_refs();
  test_op_attrs();
  test_multi_output_and_matmul();
  test_op_errors();
  test_manifest();
  test_autograd();
  test_rng();
  test_bad_input();
  test_dlpack_export();
  test_dlpack_import();
  test_dlpack_legacy_and_refusals();
  test_borrowed_import();
  test_graphs();
  test_plugins();
  test_train();
  test_onnx();
  test_onnx_values();
  test_domains();
  int64_t end = live_tensors();
  if (!CHECK(end == start)) printf("    %" PRId64 " tensors leaked\n", end - start);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
