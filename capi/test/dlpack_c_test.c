/*
 * dlpack_c_test.c — DLPack through the C ABI: exports checked field by field
 * and released with their deleter, imports of buffers this test owns (zero
 * copy, deleter called exactly once), and refused devices and dtypes.
 */
#define _POSIX_C_SOURCE 200809L
#define TEST_FILE "capi/test/dlpack_c_test.c"
#include "harness.h"

static int64_t live_exports(void) {
  int64_t n = -1;
  OK(wt_live_dlpack_exports(&n));
  return n;
}

/* nudge gives the Go garbage collector a reason to run: garbage from ops
 * and from the manifest, which is large. */
static void nudge(void) {
  for (int i = 0; i < 8; i++) {
    wt_tensor z = 0, s = 0;
    int32_t n = 0;
    size_t needed = 0;
    wt_tensor_zeros(WT_F32, (int64_t[]){64}, 1, NULL, &z);
    wt_op("add", (wt_tensor[]){z, z}, 2, NULL, 0, &s, 1, &n);
    wt_tensor_free(s);
    wt_tensor_free(z);
    wt_manifest_json(NULL, 0, &needed);
  }
}

/* wait_count polls for up to ms milliseconds until *c reaches want. */
static int wait_count(atomic_int *c, int want, int ms) {
  for (int waited = 0; atomic_load(c) < want && waited < ms; waited += 5) {
    nudge();
    sleep_ms(5);
  }
  return atomic_load(c) == want;
}

/* where_f32 is the address of the first element of an exported f32 tensor. */
static const float *where_f32(const DLTensor *t) {
  return (const float *)(const void *)((const char *)t->data + t->byte_offset);
}

void test_dlpack_export(void) {
  int64_t start = live_exports();
  wt_tensor t = f32(L, (int64_t[]){2, 3}, 2, (float[]){1, 2, 3, 4, 5, 6});
  DLManagedTensorVersioned *m = NULL;
  if (OK(wt_to_dlpack_versioned(t, &m)) && CHECK(m != NULL)) {
    const DLTensor *d = &m->dl_tensor;
    CHECK(m->version.major == DLPACK_MAJOR_VERSION && m->deleter != NULL);
    CHECK((m->flags & (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED)) == 0);
    CHECK(d->ndim == 2 && d->shape != NULL && d->shape[0] == 2 && d->shape[1] == 3);
    CHECK(d->strides == NULL || (d->strides[0] == 3 && d->strides[1] == 1));
    CHECK(d->dtype.code == kDLFloat && d->dtype.bits == 32 && d->dtype.lanes == 1);
    CHECK(d->device.device_type == kDLCPU && d->device.device_id == 0);
    CHECK(live_exports() == start + 1);
    OK(wt_tensor_free(t)); /* the export keeps the data alive */
    nudge();
    CHECK(memcmp(where_f32(d), (float[]){1, 2, 3, 4, 5, 6}, 24) == 0);
    m->deleter(m);
    CHECK(live_exports() == start);
  }

  /* A transposed view is shared with its strides (or copied densely). */
  wt_tensor base = f32(L, (int64_t[]){2, 3}, 2, (float[]){1, 2, 3, 4, 5, 6});
  wt_tensor tt = op(L, "transpose", &base, 1, NULL, 0);
  DLManagedTensor *lm = NULL;
  if (OK(wt_to_dlpack(tt, &lm)) && CHECK(lm != NULL && lm->deleter != NULL)) {
    const DLTensor *d = &lm->dl_tensor;
    CHECK(d->ndim == 2 && d->shape[0] == 3 && d->shape[1] == 2);
    int64_t s0 = d->strides ? d->strides[0] : 2, s1 = d->strides ? d->strides[1] : 1;
    const float want[3][2] = {{1, 4}, {2, 5}, {3, 6}};
    int same = 1;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) same &= where_f32(d)[i * s0 + j * s1] == want[i][j];
    CHECK(same);
    CHECK(live_exports() == start + 1);
    lm->deleter(lm);
  }
  free_all((wt_tensor[]){base, tt}, 2);

  /* Type codes of the legacy export, and a scalar. */
  static const uint8_t one_byte[1] = {1};
  static const uint16_t two[1] = {0x3C00};
  static const int64_t eight[1] = {7};
  struct { int32_t dt; const void *data; uint8_t code, bits; } cases[] = {
      {WT_I64, eight, kDLInt, 64}, {WT_BOOL, one_byte, kDLBool, 8}, {WT_F16, two, kDLFloat, 16},
      {WT_BF16, two, kDLBfloat, 16}, {WT_U8, one_byte, kDLUInt, 8}, {WT_F64, eight, kDLFloat, 64},
      {WT_U16, two, kDLUInt, 16}, {WT_U64, eight, kDLUInt, 64}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    wt_tensor s = make(L, cases[c].dt, NULL, 0, cases[c].data);
    DLManagedTensor *sm = NULL;
    if (OK(wt_to_dlpack(s, &sm))) {
      const DLTensor *d = &sm->dl_tensor;
      if (!CHECK(d->ndim == 0 && d->dtype.code == cases[c].code && d->dtype.bits == cases[c].bits &&
                 d->dtype.lanes == 1)) {
        printf("    dtype %d exported as code %d bits %d\n", cases[c].dt, d->dtype.code, d->dtype.bits);
      }
      CHECK(memcmp((const char *)d->data + d->byte_offset, cases[c].data, dsize(cases[c].dt)) == 0);
      sm->deleter(sm);
    }
    OK(wt_tensor_free(s));
  }
  CHECK(live_exports() == start);
  wt_tensor e = f32(L, (int64_t[]){0, 4}, 2, (float[]){0});
  if (e != 0 && OK(wt_to_dlpack_versioned(e, &m))) {
    CHECK(m->dl_tensor.ndim == 2 && m->dl_tensor.shape[0] == 0 && m->dl_tensor.shape[1] == 4);
    m->deleter(m);
  }
  if (e != 0) OK(wt_tensor_free(e));
  m = (DLManagedTensorVersioned *)&start;
  ERR(wt_to_dlpack_versioned(e, &m), WT_ERR_HANDLE, num(e));
  CHECK(m == (DLManagedTensorVersioned *)&start);
  ERR(wt_to_dlpack(0, &lm), WT_ERR_HANDLE, NULL);
  wt_tensor x = vec(L, 1, (float[]){1});
  ERR(wt_to_dlpack_versioned(x, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_to_dlpack(x, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_live_dlpack_exports(NULL), WT_ERR_INVALID, NULL);
  OK(wt_tensor_free(x));
  CHECK(live_exports() == start);
}

/* A versioned DLPack tensor built in C around our own buffer, with a
 * deleter that counts its calls. */
typedef struct {
  DLManagedTensorVersioned m;
  int64_t shape[4], strides[4];
  atomic_int *calls;
} mine;

static void mine_deleter(DLManagedTensorVersioned *self) {
  mine *x = (mine *)self;
  atomic_fetch_add(x->calls, 1);
  free(self->dl_tensor.data);
  free(x);
}

static mine *new_mine(atomic_int *calls, int32_t ndim, const int64_t *shape, const int64_t *strides,
                      const float *values, int64_t n) {
  mine *x = calloc(1, sizeof *x);
  float *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  if (n > 0) memcpy(buf, values, (size_t)n * sizeof(float));
  x->calls = calls;
  x->m.version = (DLPackVersion){1, 1};
  x->m.deleter = mine_deleter;
  x->m.dl_tensor = (DLTensor){.data = buf, .device = {kDLCPU, 0}, .ndim = ndim,
                              .dtype = {kDLFloat, 32, 1}, .shape = x->shape};
  for (int32_t i = 0; i < ndim && i < 4; i++) x->shape[i] = shape[i];
  if (strides != NULL) {
    memcpy(x->strides, strides, (size_t)ndim * sizeof(int64_t));
    x->m.dl_tensor.strides = x->strides;
  }
  return x;
}

/* import_ok imports x, checks its values, frees the handle and waits for the
 * deleter to run exactly once. */
static void import_ok(int line, mine *x, const float *want, int64_t n) {
  atomic_int *calls = x->calls;
  wt_tensor t = 0;
  if (!expect_(wt_from_dlpack_versioned(&x->m, &t), WT_OK, WT_OK, NULL, "import", line)) {
    mine_deleter(&x->m);
    return;
  }
  f32_is(line, t, want, n, 0);
  expect_(wt_tensor_free(t), WT_OK, WT_OK, NULL, "wt_tensor_free", line);
  check_(wait_count(calls, 1, 5000), "deleter called once after the free", line);
}

void test_dlpack_import(void) {
  static atomic_int calls;
  int64_t start = live_tensors();
  mine *x = new_mine(&calls, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1}, (float[]){1, 2, 3, 4, 5, 6}, 6);
  float *buf = x->m.dl_tensor.data;
  wt_tensor t = 0;
  if (OK(wt_from_dlpack_versioned(&x->m, &t))) {
    shape_is(L, t, 2, (int64_t[]){2, 3});
    f32_is(L, t, (float[]){1, 2, 3, 4, 5, 6}, 6, 0);
    buf[0] = 100; /* zero copy: our writes show through */
    f32_is(L, t, (float[]){100, 2, 3, 4, 5, 6}, 6, 0);
    wt_tensor v = op(L, "transpose", &t, 1, NULL, 0);
    OK(wt_tensor_free(t));
    for (int i = 0; i < 40; i++) { nudge(); sleep_ms(5); }
    CHECK(atomic_load(&calls) == 0); /* the view still needs the data */
    f32_is(L, v, (float[]){100, 4, 2, 5, 3, 6}, 6, 0);
    OK(wt_tensor_free(v));
    CHECK(wait_count(&calls, 1, 5000));
    for (int i = 0; i < 20; i++) { nudge(); sleep_ms(5); }
    CHECK(atomic_load(&calls) == 1); /* exactly once */
  } else {
    mine_deleter(&x->m);
  }

  /* NULL strides; a size-1 dim with any stride; a byte offset. */
  atomic_store(&calls, 0);
  import_ok(L, new_mine(&calls, 2, (int64_t[]){2, 2}, NULL, (float[]){1, 2, 3, 4}, 4), (float[]){1, 2, 3, 4}, 4);
  atomic_store(&calls, 0);
  import_ok(L, new_mine(&calls, 2, (int64_t[]){3, 1}, (int64_t[]){1, 12345}, (float[]){7, 8, 9}, 3),
            (float[]){7, 8, 9}, 3);
  atomic_store(&calls, 0);
  x = new_mine(&calls, 1, (int64_t[]){2}, NULL, (float[]){1, 2, 3, 4}, 4);
  x->m.dl_tensor.byte_offset = 2 * sizeof(float);
  import_ok(L, x, (float[]){3, 4}, 2);

  /* Read-only stays read-only on re-export. */
  atomic_store(&calls, 0);
  x = new_mine(&calls, 1, (int64_t[]){2}, NULL, (float[]){5, 6}, 2);
  x->m.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  if (OK(wt_from_dlpack_versioned(&x->m, &t))) {
    DLManagedTensorVersioned *re = NULL;
    if (OK(wt_to_dlpack_versioned(t, &re))) {
      CHECK(re->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
      re->deleter(re);
    }
    /* ...also through the handles that share its memory: an already dense
     * tensor's contiguous() and a move to the device it is on. */
    wt_tensor same[2] = {0, 0};
    OK(wt_tensor_contiguous(t, &same[0]));
    OK(wt_tensor_to_device(t, "cpu", &same[1]));
    for (int k = 0; k < 2; k++) {
      if (same[k] && OK(wt_to_dlpack_versioned(same[k], &re))) {
        CHECK(re->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
        re->deleter(re);
      }
      if (same[k]) OK(wt_tensor_free(same[k]));
    }
    OK(wt_tensor_free(t));
    CHECK(wait_count(&calls, 1, 5000));
  } else {
    mine_deleter(&x->m);
  }

  /* Our own export imported back: its deleter runs once, via the library. */
  int64_t exports = live_exports();
  wt_tensor src = vec(L, 3, (float[]){1, 2, 3});
  DLManagedTensorVersioned *ex = NULL;
  if (OK(wt_to_dlpack_versioned(src, &ex))) {
    wt_tensor back = 0;
    OK(wt_tensor_free(src));
    if (OK(wt_from_dlpack_versioned(ex, &back))) {
      f32_is(L, back, (float[]){1, 2, 3}, 3, 0);
      OK(wt_tensor_free(back));
    } else {
      ex->deleter(ex);
    }
    for (int waited = 0; live_exports() != exports && waited < 5000; waited += 5) {
      nudge();
      sleep_ms(5);
    }
    CHECK(live_exports() == exports);
  }
  CHECK(live_tensors() == start);
}

static atomic_int legacy_calls;
static void legacy_deleter(DLManagedTensor *self) {
  atomic_fetch_add(&legacy_calls, 1);
  free(self->dl_tensor.data);
  free(self);
}

void test_dlpack_legacy_and_refusals(void) {
  DLManagedTensor *lm = calloc(1, sizeof *lm);
  static int64_t shape[1] = {3};
  int32_t *data = malloc(3 * sizeof(int32_t));
  memcpy(data, (int32_t[]){-1, 0, 7}, 12);
  lm->dl_tensor = (DLTensor){.data = data, .device = {kDLCPU, 0}, .ndim = 1,
                             .dtype = {kDLInt, 32, 1}, .shape = shape};
  lm->deleter = legacy_deleter;
  wt_tensor t = 0;
  if (OK(wt_from_dlpack(lm, &t))) {
    int32_t back[3] = {0}, dt = 0;
    OK(wt_tensor_dtype(t, &dt));
    CHECK(dt == WT_I32);
    OK(wt_tensor_to_host(t, back, sizeof back));
    CHECK(back[0] == -1 && back[1] == 0 && back[2] == 7);
    OK(wt_tensor_free(t));
    CHECK(wait_count(&legacy_calls, 1, 5000));
  } else {
    legacy_deleter(lm);
  }
  static float fixed[2] = {1, 2}; /* legacy with no deleter: nothing to free */
  static int64_t two[1] = {2};
  static DLManagedTensor nodel = {.dl_tensor = {.data = fixed, .device = {kDLCPU, 0}, .ndim = 1,
                                                .dtype = {kDLFloat, 32, 1}, .shape = two}};
  if (OK(wt_from_dlpack(&nodel, &t))) {
    f32_is(L, t, fixed, 2, 0);
    OK(wt_tensor_free(t));
  }

  /* Refused: the caller still owns src and the deleter is not called. */
  static atomic_int calls;
  mine *x = new_mine(&calls, 1, (int64_t[]){2}, NULL, (float[]){1, 2}, 2);
  wt_tensor out = 4242;
  x->m.dl_tensor.device.device_type = kDLCUDA;
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_UNSUPPORTED, NULL);
  x->m.dl_tensor.device.device_type = kDLCPU;
  x->m.dl_tensor.dtype = (DLDataType){kDLComplex, 32, 1}; /* complex32: c64 and c128 are imported */
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_UNSUPPORTED, "kDLComplex");
  x->m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 2};
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_UNSUPPORTED, NULL);
  x->m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 1};
  x->m.version.major = 99;
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_UNSUPPORTED, "99");
  x->m.version.major = 1;
  x->m.dl_tensor.ndim = -1;
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_INVALID, "-1");
  x->m.dl_tensor.ndim = 1;
  x->m.dl_tensor.shape = NULL;
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_INVALID, NULL);
  x->m.dl_tensor.shape = x->shape;
  void *keep = x->m.dl_tensor.data;
  x->m.dl_tensor.data = NULL;
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_INVALID, NULL);
  x->m.dl_tensor.data = keep;
  x->shape[0] = -2;
  ERR(wt_from_dlpack_versioned(&x->m, &out), WT_ERR_INVALID, "-2");
  x->shape[0] = 2;
  ERR(wt_from_dlpack_versioned(&x->m, NULL), WT_ERR_INVALID, NULL);
  ERR(wt_from_dlpack_versioned(NULL, &out), WT_ERR_INVALID, NULL);
  ERR(wt_from_dlpack(NULL, &out), WT_ERR_INVALID, NULL);
  CHECK(out == 4242);
  for (int i = 0; i < 20; i++) { nudge(); sleep_ms(5); }
  CHECK(atomic_load(&calls) == 0);
  mine_deleter(&x->m);
}

/* ---- Bad input everywhere ------------------------------------------------------------------ */


/* ---- Borrowed imports: zero copy without a deleter ----------------------------------------- */

void test_borrowed_import(void) {
  float *data = aligned_alloc(16, 4 * sizeof(float));
  int32_t released = 7;
  for (int i = 0; i < 4; i++) data[i] = (float)(i + 1);
  wt_tensor t = 0, s = 0;
  int32_t n = 0;
  OK(wt_tensor_from_host_borrowed(data, 4 * sizeof(float), WT_F32, (int64_t[]){2, 2}, 2, &released, &t));
  CHECK(released == 0);
  data[3] = 40; /* the caller's write is the tensor's */
  float got[4] = {0};
  OK(wt_op("add", (wt_tensor[]){t, t}, 2, NULL, 0, &s, 1, &n));
  OK(wt_tensor_to_host(s, got, sizeof got));
  CHECK(got[0] == 2 && got[3] == 80);
  OK(wt_tensor_free(s));
  OK(wt_tensor_free(t));
  for (int waited = 0; __atomic_load_n(&released, __ATOMIC_SEQ_CST) != 1 && waited < 2000; waited += 5) {
    OK(wt_collect());
    nudge();
    sleep_ms(5);
  }
  CHECK(__atomic_load_n(&released, __ATOMIC_SEQ_CST) == 1);
  free(data); /* only now */

  char odd[12] = {0};
  ERR(wt_tensor_from_host_borrowed(odd + 1, 8, WT_F32, (int64_t[]){2}, 1, &released, &t), WT_ERR_INVALID, "aligned");
  ERR(wt_tensor_from_host_borrowed(odd, 8, WT_F32, (int64_t[]){3}, 1, &released, &t), WT_ERR_INVALID, "needs 12");
  ERR(wt_tensor_from_host_borrowed(odd, 8, WT_F32, (int64_t[]){2}, 1, NULL, &t), WT_ERR_INVALID, "NULL");
  ERR(wt_tensor_from_host_borrowed(NULL, 8, WT_F32, (int64_t[]){2}, 1, &released, &t), WT_ERR_INVALID, "NULL");
}
