/*
 * harness.h — the checks and helpers shared by the C ABI tests: CHECK/OK/ERR
 * macros that print file:line, the expectation and wt_last_error(), and
 * small constructors for tensors and attributes.
 */
/* Each test file defines TEST_FILE (its name) before including this header,
 * so failures name the file the check is in. */
#ifndef WT_TEST_HARNESS_H
#define WT_TEST_HARNESS_H
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webtensor.h"

/* ---- Harness --------------------------------------------------------------- */

extern int passed, failed;

static inline int check_(int ok, const char *what, int line) {
  if (ok) {
    passed++;
    return 1;
  }
  failed++;
  printf("%s:%d: FAIL: %s\n    wt_last_error: \"%s\"\n", TEST_FILE, line, what, wt_last_error());
  return 0;
}
#define CHECK(c) check_(!!(c), #c, __LINE__)
#define L __LINE__

/* expect_ checks a status: want (or alt) exactly; for an error also that the
 * message is non-empty and, when mention is given, contains it. */
static inline int expect_(int32_t got, int32_t want, int32_t alt, const char *mention, const char *call,
                   int line) {
  const char *msg = wt_last_error();
  int ok = got == want || got == alt;
  if (ok && want != WT_OK) {
    ok = msg[0] != 0 && (mention == NULL || strstr(msg, mention) != NULL);
  }
  if (ok) {
    passed++;
    return 1;
  }
  failed++;
  printf("%s:%d: FAIL: %s returned %d (%s), want %d (%s)", TEST_FILE, line, call, got,
         wt_status_string(got), want, wt_status_string(want));
  if (mention != NULL) {
    printf(" with a message mentioning \"%s\"", mention);
  }
  printf("\n    wt_last_error: \"%s\"\n", msg);
  return 0;
}
#define OK(call) expect_((call), WT_OK, WT_OK, NULL, #call, __LINE__)
#define ERR(call, code, mention) expect_((call), (code), (code), (mention), #call, __LINE__)
#define ERR2(call, code, alt, mention) expect_((call), (code), (alt), (mention), #call, __LINE__)

/* num formats an integer for a "mentions" check (a few rotating buffers). */
static inline const char *num(int64_t v) {
  static char bufs[4][32];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, 32, "%" PRId64, v);
  return b;
}

static inline void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static inline int64_t live_tensors(void) {
  int64_t n = -1;
  OK(wt_live_tensors(&n));
  return n;
}

/* ---- Tensor helpers --------------------------------------------------------- */

static inline size_t dsize(int32_t dt) {
  switch (dt) {
  case WT_F64: case WT_I64: case WT_U64: case WT_C64: return 8;
  case WT_C128: return 16;
  case WT_F32: case WT_I32: case WT_U32: return 4;
  case WT_F16: case WT_BF16: case WT_I16: case WT_U16: return 2;
  default: return 1;
  }
}

static inline int64_t numel_of(const int64_t *shape, int32_t ndim) {
  int64_t n = 1;
  for (int32_t i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static inline wt_tensor make(int line, int32_t dt, const int64_t *shape, int32_t ndim, const void *data) {
  wt_tensor t = 0;
  size_t nbytes = (size_t)numel_of(shape, ndim) * dsize(dt);
  expect_(wt_tensor_from_data(data, nbytes, dt, shape, ndim, NULL, &t), WT_OK, WT_OK, NULL,
          "wt_tensor_from_data", line);
  return t;
}

static inline wt_tensor f32(int line, const int64_t *shape, int32_t ndim, const float *v) {
  return make(line, WT_F32, shape, ndim, v);
}

static inline wt_tensor vec(int line, int64_t n, const float *v) { return f32(line, &n, 1, v); }

/* op_n calls an op expecting exactly n outputs into out. */
static inline int op_n(int line, const char *name, const wt_tensor *in, int32_t nin, const wt_attr *a,
                int32_t na, wt_tensor *out, int32_t n) {
  int32_t got = -1;
  if (!expect_(wt_op(name, in, nin, a, na, out, n, &got), WT_OK, WT_OK, NULL, name, line)) {
    return 0;
  }
  return check_(got == n, "op output count", line);
}

static inline wt_tensor op(int line, const char *name, const wt_tensor *in, int32_t nin, const wt_attr *a,
                    int32_t na) {
  wt_tensor out = 0;
  return op_n(line, name, in, nin, a, na, &out, 1) ? out : 0;
}

static inline wt_attr a_int(const char *n, int64_t v) { return (wt_attr){.name = n, .kind = WT_ATTR_INT, .i = v}; }
static inline wt_attr a_bool(const char *n, int v) { return (wt_attr){.name = n, .kind = WT_ATTR_BOOL, .i = v}; }
static inline wt_attr a_dtype(const char *n, int32_t v) { return (wt_attr){.name = n, .kind = WT_ATTR_DTYPE, .i = v}; }
static inline wt_attr a_float(const char *n, double v) { return (wt_attr){.name = n, .kind = WT_ATTR_FLOAT, .f = v}; }
static inline wt_attr a_str(const char *n, const char *s) { return (wt_attr){.name = n, .kind = WT_ATTR_STRING, .s = s}; }
static inline wt_attr a_ints(const char *n, const int64_t *v, int64_t len) {
  return (wt_attr){.name = n, .kind = WT_ATTR_INTS, .ints = v, .len = len};
}
static inline wt_attr a_floats(const char *n, const double *v, int64_t len) {
  return (wt_attr){.name = n, .kind = WT_ATTR_FLOATS, .floats = v, .len = len};
}

/* shape_is checks ndim and the extents. */
static inline int shape_is(int line, wt_tensor t, int32_t ndim, const int64_t *want) {
  int32_t nd = -1;
  int64_t got[8] = {0};
  if (!expect_(wt_tensor_ndim(t, &nd), WT_OK, WT_OK, NULL, "wt_tensor_ndim", line) ||
      !check_(nd == ndim, "ndim", line)) {
    return 0;
  }
  expect_(wt_tensor_shape(t, got, 8), WT_OK, WT_OK, NULL, "wt_tensor_shape", line);
  return check_(ndim == 0 || memcmp(got, want, (size_t)ndim * 8) == 0, "shape", line);
}

/* f32_is reads t (f32) back and compares it with want within tol. */
static inline int f32_is(int line, wt_tensor t, const float *want, int64_t n, float tol) {
  int64_t numel = -1;
  int32_t dt = 0;
  expect_(wt_tensor_numel(t, &numel), WT_OK, WT_OK, NULL, "wt_tensor_numel", line);
  expect_(wt_tensor_dtype(t, &dt), WT_OK, WT_OK, NULL, "wt_tensor_dtype", line);
  if (!check_(numel == n && dt == WT_F32, "f32 tensor of the expected size", line)) return 0;
  float got[64] = {0};
  if (!expect_(wt_tensor_to_host(t, got, sizeof got), WT_OK, WT_OK, NULL, "wt_tensor_to_host", line)) {
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!(fabsf(got[i] - want[i]) <= tol || got[i] == want[i])) {
      char what[96];
      snprintf(what, sizeof what, "element %" PRId64 " is %g, want %g", i, got[i], want[i]);
      return check_(0, what, line);
    }
  }
  passed++;
  return 1;
}

static inline void free_all(const wt_tensor *ts, int n) {
  for (int i = 0; i < n; i++) {
    if (ts[i] != 0) OK(wt_tensor_free(ts[i]));
  }
}

/* ---- Strings through the buffer protocol ---------------------------------- */

enum { S_BUILD, S_MANIFEST, S_DEFAULT, S_DEVNAME, S_TDEVICE };

static inline int32_t str_call(int which, int64_t arg, char *buf, size_t cap, size_t *needed) {
  switch (which) {
  case S_BUILD: return wt_build_info(buf, cap, needed);
  case S_MANIFEST: return wt_manifest_json(buf, cap, needed);
  case S_DEFAULT: return wt_default_device(buf, cap, needed);
  case S_DEVNAME: return wt_device_name((int32_t)arg, buf, cap, needed);
  default: return wt_tensor_device(arg, buf, cap, needed);
  }
}

/* get_str runs the whole protocol: ask with NULL, try one byte short (the
 * buffer must stay untouched), then fetch. Returns a malloc'd string. */
static inline char *get_str(int line, int which, int64_t arg) {
  size_t needed = 0, again = 0;
  if (!expect_(str_call(which, arg, NULL, 0, &needed), WT_ERR_BUFFER_TOO_SMALL,
               WT_ERR_BUFFER_TOO_SMALL, NULL, "size query", line) ||
      !check_(needed >= 1, "*needed counts at least the NUL", line)) {
    return NULL;
  }
  char *buf = malloc(needed);
  memset(buf, '#', needed);
  expect_(str_call(which, arg, buf, needed - 1, &again), WT_ERR_BUFFER_TOO_SMALL,
          WT_ERR_BUFFER_TOO_SMALL, NULL, "one byte short", line);
  check_(again == needed, "*needed is the same on every call", line);
  check_(needed == 1 || (buf[0] == '#' && buf[needed - 2] == '#'), "buffer untouched on failure", line);
  if (!expect_(str_call(which, arg, buf, needed, &again), WT_OK, WT_OK, NULL, "fetch", line)) {
    free(buf);
    return NULL;
  }
  check_(strlen(buf) + 1 == needed, "strlen + 1 == *needed", line);
  return buf;
}

/* ---- wt_call: the domain methods by name --------------------------------------- */

/* call_ runs target through wt_call and returns its result's JSON (in a
 * static buffer, valid until the next call), or NULL after a failed check. */
static inline const char *call_(const char *target, int64_t self, const char *args, const void *data, size_t n,
                         int line) {
  static char buf[1 << 16];
  wt_call_result r = 0;
  if (!expect_(wt_call(target, self, args, data, n, &r), WT_OK, WT_OK, NULL, target, line)) return NULL;
  size_t needed = 0;
  int ok = expect_(wt_call_result_json(r, buf, sizeof buf, &needed), WT_OK, WT_OK, NULL, "wt_call_result_json", line);
  expect_(wt_call_result_free(r), WT_OK, WT_OK, NULL, "wt_call_result_free", line);
  return ok ? buf : NULL;
}
#define CALL(target, self, args) call_((target), (self), (args), NULL, 0, __LINE__)
#define CALL_ERR(target, self, args, code, mention)                                              \
  do {                                                                                            \
    wt_call_result r_ = 0;                                                                        \
    ERR(wt_call((target), (self), (args), NULL, 0, &r_), (code), (mention));                      \
  } while (0)

/* field is the integer after "key": in a result's JSON (key NULL: the whole
 * result is the integer), 0 when absent. */
static inline int64_t field(const char *json, const char *key) {
  if (json == NULL) return 0;
  if (key == NULL) return strtoll(json, NULL, 10);
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *at = strstr(json, pat);
  return at ? strtoll(at + strlen(pat), NULL, 10) : 0;
}

/* fmt formats a call's arguments (a few rotating buffers). */
static inline const char *fmt(const char *format, ...) {
  static char bufs[4][512];
  static int next;
  char *b = bufs[next++ % 4];
  va_list ap;
  va_start(ap, format);
  vsnprintf(b, sizeof bufs[0], format, ap);
  va_end(ap);
  return b;
}


/* nth is the i-th integer of a result's JSON list, 0 when absent. */
static inline int64_t nth(const char *json, int i) {
  if (json == NULL || (json = strchr(json, '[')) == NULL) return 0;
  for (json++; i > 0 && json; i--) {
    json = strchr(json, ',');
    if (json) json++;
  }
  return json ? strtoll(json, NULL, 10) : 0;
}

/* ---- Version, build, status, errors ---------------------------------------- */


#endif /* WT_TEST_HARNESS_H */
