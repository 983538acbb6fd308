/* runner.c: the C ABI's conformance runner. Every case of every vector file
 * (conformance/README.md) through webtensor.h alone - wt_tensor_from_data,
 * wt_op, wt_backward - on one device, graded with the tolerances of
 * vectors/index.json, written as a result file for `make conformance`.
 *
 *   c_runner VECTORS_DIR DEVICE OUT.json
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sha256.h"
#include "webtensor.h"

/* Indexed by wt_dtype; the complex codes 12 and 13 have no vector name (the
   vectors store complex values as real pairs). */
static const char *DT_NAMES[] = {"", "f32", "f16", "bf16", "f64", "i64", "i32", "u32", "i16", "i8", "u8", "bool",
                                 "", "", "u16", "u64"};
static const char *ST_NAMES[] = {"", "F32", "F16", "BF16", "F64", "I64", "I32", "U32", "I16", "I8", "U8", "BOOL",
                                 "", "", "U16", "U64"};
static const int DT_SIZE[] = {0, 4, 2, 2, 8, 8, 4, 4, 2, 1, 1, 1, 8, 16, 2, 8};

static int dtype_of(const char *name, const char **names) {
  for (int d = 1; d <= WT_U64; d++)
    if (names[d][0] && !strcmp(name, names[d])) return d;
  return 0;
}

static char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)size + 1);
  if (fread(buf, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    free(buf);
    return NULL;
  }
  fclose(f);
  buf[size] = 0;
  *n = (size_t)size;
  return buf;
}

static double half_to_double(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return s ? -v : v;
}

/* value decodes element i of raw little-endian data of dtype d. */
static double value(int d, const unsigned char *p, size_t i) {
  union {
    float f;
    uint32_t u;
  } cv;
  switch (d) {
    case WT_F32: memcpy(&cv.f, p + 4 * i, 4); return cv.f;
    case WT_F64: { double x; memcpy(&x, p + 8 * i, 8); return x; }
    case WT_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return half_to_double(h); }
    case WT_BF16: { uint16_t h; memcpy(&h, p + 2 * i, 2); cv.u = (uint32_t)h << 16; return cv.f; }
    case WT_I64: { int64_t x; memcpy(&x, p + 8 * i, 8); return (double)x; }
    case WT_I32: { int32_t x; memcpy(&x, p + 4 * i, 4); return x; }
    case WT_U32: { uint32_t x; memcpy(&x, p + 4 * i, 4); return x; }
    case WT_U16: { uint16_t x; memcpy(&x, p + 2 * i, 2); return x; }
    case WT_U64: { uint64_t x; memcpy(&x, p + 8 * i, 8); return (double)x; }
    case WT_I16: { int16_t x; memcpy(&x, p + 2 * i, 2); return x; }
    case WT_I8: return (int8_t)p[i];
    default: return p[i]; /* u8, bool */
  }
}

/* A tensor of a vector file: dtype, shape and a pointer into the file. */
typedef struct {
  int dtype, ndim;
  int64_t shape[16];
  const unsigned char *data;
  size_t nbytes, numel;
} vt;

typedef struct {
  jval *header, *cases;
  char *raw;
  size_t data_at;
} vfile;

static int find_tensor(const vfile *f, const char *name, vt *out) {
  const jval *t = jget(f->header, name);
  if (!t) return 0;
  out->dtype = dtype_of(jstr(t, "dtype", ""), ST_NAMES);
  const jval *sh = jget(t, "shape"), *off = jget(t, "data_offsets");
  out->ndim = (int)sh->n;
  out->numel = 1;
  for (size_t i = 0; i < sh->n && i < 16; i++) {
    out->shape[i] = (int64_t)sh->items[i]->num;
    out->numel *= (size_t)out->shape[i];
  }
  size_t lo = (size_t)off->items[0]->num, hi = (size_t)off->items[1]->num;
  out->data = (const unsigned char *)f->raw + f->data_at + lo;
  out->nbytes = hi - lo;
  return 1;
}

/* make_input uploads a vector tensor; strided ones become a step-2 slice of
 * a base twice as wide in the last dim (doubled strides in every dim). */
static int make_input(const vt *v, int strided, const char *dev, wt_tensor *out) {
  if (!strided || v->ndim == 0)
    return wt_tensor_from_data(v->nbytes ? v->data : NULL, v->nbytes, v->dtype, v->shape, v->ndim, dev, out);
  int64_t bshape[16];
  memcpy(bshape, v->shape, sizeof bshape);
  int64_t last = v->shape[v->ndim - 1];
  bshape[v->ndim - 1] = 2 * last;
  size_t es = (size_t)DT_SIZE[v->dtype];
  unsigned char *base = calloc(v->numel * 2 + 1, es);
  for (size_t i = 0; i < v->numel; i++) memcpy(base + 2 * i * es, v->data + i * es, es);
  wt_tensor b;
  int32_t st = wt_tensor_from_data(base, v->numel * 2 * es, v->dtype, bshape, v->ndim, dev, &b);
  free(base);
  if (st) return st;
  wt_attr a[4] = {{.name = "axis", .kind = WT_ATTR_INT, .i = -1},
                  {.name = "start", .kind = WT_ATTR_INT, .i = 0},
                  {.name = "stop", .kind = WT_ATTR_INT, .i = 2 * last},
                  {.name = "step", .kind = WT_ATTR_INT, .i = 2}};
  int32_t n;
  st = wt_op("slice", &b, 1, a, 4, out, 1, &n);
  wt_tensor_free(b);
  return st;
}

/* host copies any tensor's values to doubles via the CPU. */
static double *host(wt_tensor t, size_t *numel, int *dtype) {
  wt_tensor c;
  int64_t n;
  if (wt_tensor_to_device(t, "cpu", &c) || wt_tensor_numel(c, &n) || wt_tensor_dtype(c, dtype)) return NULL;
  size_t es = (size_t)DT_SIZE[*dtype];
  unsigned char *raw = malloc((size_t)n * es + 1);
  double *out = malloc(((size_t)n + 1) * sizeof *out);
  if (wt_tensor_to_host(c, raw, (size_t)n * es)) {
    free(raw), free(out), wt_tensor_free(c);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) out[i] = value(*dtype, raw, (size_t)i);
  free(raw);
  wt_tensor_free(c);
  *numel = (size_t)n;
  return out;
}

typedef struct {
  const jval *tols;
  double scale, grad_scale;
} grading;

/* grade compares t with the expected vector tensor; returns 0 on a pass and
 * writes a message otherwise; *worst gets the largest tolerance ratio. */
static int grade(wt_tensor t, const vt *want, const grading *g, double extra, double *worst, char *msg) {
  int dt;
  size_t n;
  double *got = host(t, &n, &dt);
  if (!got) return snprintf(msg, 256, "reading the result: %s", wt_last_error()), 1;
  int64_t shape[16];
  int32_t nd;
  wt_tensor_ndim(t, &nd);
  wt_tensor_shape(t, shape, 16);
  int bad = dt != want->dtype || nd != want->ndim;
  for (int i = 0; !bad && i < nd; i++) bad = shape[i] != want->shape[i];
  if (bad) {
    free(got);
    return snprintf(msg, 256, "dtype %s or shape differs from the reference %s", DT_NAMES[dt], DT_NAMES[want->dtype]), 1;
  }
  const jval *tol = jget(g->tols, DT_NAMES[dt]);
  int isf = dt == WT_F32 || dt == WT_F64 || dt == WT_F16 || dt == WT_BF16;
  double atol = isf ? jnum(tol, "atol", 0) * g->scale * extra : 0, rtol = isf ? jnum(tol, "rtol", 0) * g->scale * extra : 0;
  for (size_t i = 0; i < n; i++) {
    double a = got[i], b = value(want->dtype, want->data, i);
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) {
      if (!(isnan(a) && isnan(b)) && a != b) {
        free(got);
        return snprintf(msg, 256, "element %zu: got %g, want %g", i, a, b), 1;
      }
      continue;
    }
    double d = fabs(a - b), bound = atol + rtol * fabs(b);
    double r = bound > 0 ? d / bound : (d > 0 ? 1e308 : 0);
    if (r > *worst) *worst = r;
    if (d > bound) {
      free(got);
      return snprintf(msg, 256, "element %zu: got %g, want %g (atol %g, rtol %g)", i, a, b, atol, rtol), 1;
    }
  }
  free(got);
  return 0;
}

/* attr_kind is the kind the manifest gives op's attribute name, or NULL. */
static const char *attr_kind(const jval *manifest_op, const char *name) {
  const jval *attrs = jget(manifest_op, "attrs");
  for (size_t i = 0; attrs && i < attrs->n; i++)
    if (!strcmp(jstr(attrs->items[i], "name", ""), name)) return jstr(attrs->items[i], "kind", NULL);
  return NULL;
}

static double num_or_special(const jval *v) {
  if (v->kind == J_STR) return !strcmp(v->str, "inf") ? INFINITY : !strcmp(v->str, "-inf") ? -INFINITY : NAN;
  return v->num;
}

/* build_attrs turns a case's JSON attributes into wt_attrs with the kinds
 * of the manifest; arrays are allocated into *keep (freed by the caller). */
static int build_attrs(const jval *mop, const jval *attrs, const char *dev, wt_attr *out, void **keep, int *nkeep) {
  int n = 0, has_device = 0;
  for (size_t i = 0; attrs && i < attrs->n && n < 30; i++) {
    const char *name = attrs->keys[i], *kind = attr_kind(mop, name);
    const jval *v = attrs->items[i];
    if (!kind || v->kind == J_NULL) continue;
    wt_attr a = {.name = name};
    if (!strcmp(name, "device")) has_device = 1;
    if (!strcmp(kind, "int")) a.kind = WT_ATTR_INT, a.i = (int64_t)v->num;
    else if (!strcmp(kind, "float")) a.kind = WT_ATTR_FLOAT, a.f = num_or_special(v);
    else if (!strcmp(kind, "bool")) a.kind = WT_ATTR_BOOL, a.i = v->num != 0;
    else if (!strcmp(kind, "string")) a.kind = WT_ATTR_STRING, a.s = v->str;
    else if (!strcmp(kind, "dtype")) a.kind = WT_ATTR_DTYPE, a.i = dtype_of(v->str, DT_NAMES);
    else if (!strcmp(kind, "ints") || !strcmp(kind, "floats")) {
      int ints = !strcmp(kind, "ints");
      void *arr = calloc(v->n + 1, 8);
      keep[(*nkeep)++] = arr;
      for (size_t k = 0; k < v->n; k++) {
        if (ints) ((int64_t *)arr)[k] = (int64_t)v->items[k]->num;
        else ((double *)arr)[k] = num_or_special(v->items[k]);
      }
      a.kind = ints ? WT_ATTR_INTS : WT_ATTR_FLOATS, a.len = (int64_t)v->n;
      if (ints) a.ints = arr; else a.floats = arr;
    } else continue;
    out[n++] = a;
  }
  if (!has_device && attr_kind(mop, "device")) out[n++] = (wt_attr){.name = "device", .kind = WT_ATTR_STRING, .s = dev};
  return n;
}

/* holds says whether dev can hold every tensor of the case (f64 and i64
 * beyond i32 are not held on webgpu). */
static int holds(const vfile *f, const jval *c, const char *dev) {
  if (strncmp(dev, "webgpu", 6)) return 1;
  const char *name = jstr(c, "name", "");
  char key[256];
  for (int role = 0; role < 2; role++)
    for (int i = 0; i < 16; i++) {
      vt v;
      snprintf(key, sizeof key, "%s/%s%d", name, role ? "out" : "in", i);
      if (!find_tensor(f, key, &v)) continue;
      if (v.dtype == WT_F64) return 0;
      if (v.dtype == WT_I64)
        for (size_t k = 0; k < v.numel; k++) {
          double x = value(WT_I64, v.data, k);
          if (x < -2147483648.0 || x > 2147483647.0) return 0;
        }
    }
  return 1;
}

/* run_case runs one case; 0 on a pass, else msg says why. */
static int run_case(const char *op, const jval *mop, const vfile *f, const jval *c, const char *dev,
                    const grading *g, double *worst, char *msg) {
  const char *name = jstr(c, "name", "");
  const jval *inputs = jget(c, "inputs");
  int grad = jbool(c, "grad", 0), rc = 1;
  wt_tensor ins[16] = {0}, outs[16] = {0}, cins[16] = {0};
  int32_t n_in = (int32_t)inputs->n, n_out = 0;
  char key[256];
  void *keep[32];
  int nkeep = 0;
  for (int32_t i = 0; i < n_in; i++) {
    const jval *s = inputs->items[i];
    if (jbool(s, "absent", 0)) continue;
    vt v;
    snprintf(key, sizeof key, "%s/in%d", name, i);
    if (!find_tensor(f, key, &v)) return snprintf(msg, 256, "input %d missing", i), 1;
    if (make_input(&v, jbool(s, "strided", 0), dev, &ins[i])) {
      snprintf(msg, 256, "input %d: %s", i, wt_last_error());
      goto done;
    }
    if (grad && jbool(s, "grad", 0)) wt_tensor_set_requires_grad(ins[i], 1);
  }
  /* A complex input is filed as its real pairs (index.json's "complex"):
     the op gets view_as_complex of them, the gradients arrive at the pairs. */
  wt_tensor call[16];
  for (int32_t i = 0; i < n_in; i++) {
    int32_t k;
    call[i] = ins[i];
    if (ins[i] && jbool(inputs->items[i], "complex", 0)) {
      if (wt_op("view_as_complex", &ins[i], 1, NULL, 0, &cins[i], 1, &k)) {
        snprintf(msg, 256, "input %d: view_as_complex: %s", i, wt_last_error());
        goto done;
      }
      call[i] = cins[i];
    }
  }
  wt_attr attrs[32];
  int na = build_attrs(mop, jget(c, "attrs"), dev, attrs, keep, &nkeep);
  if (wt_op(op, call, n_in, attrs, na, outs, 16, &n_out)) {
    snprintf(msg, 256, "%s", wt_last_error());
    goto done;
  }
  if ((size_t)n_out != jget(c, "outputs")->n) {
    snprintf(msg, 256, "%d outputs, want %zu", n_out, jget(c, "outputs")->n);
    goto done;
  }
  for (int j = 0; j < n_out; j++) {
    wt_tensor pairs;
    int32_t k;
    if (!jbool(jget(c, "outputs")->items[j], "complex", 0)) continue;
    if (wt_op("view_as_real", &outs[j], 1, NULL, 0, &pairs, 1, &k)) {
      snprintf(msg, 256, "output %d: view_as_real: %s", j, wt_last_error());
      goto done;
    }
    wt_tensor_free(outs[j]);
    outs[j] = pairs; /* compared and differentiated as its pairs */
  }
  wt_tensor loss = 0;
  for (int j = 0; j < n_out; j++) {
    vt want, up;
    snprintf(key, sizeof key, "%s/out%d", name, j);
    if (!find_tensor(f, key, &want) || grade(outs[j], &want, g, 1, worst, msg)) {
      if (!msg[0]) snprintf(msg, 256, "output %d missing", j);
      goto done;
    }
    int32_t rg = 0;
    snprintf(key, sizeof key, "%s/up%d", name, j);
    if (grad && find_tensor(f, key, &up) && !wt_tensor_requires_grad(outs[j], &rg) && rg) {
      wt_tensor u, m, s, sum;
      int32_t k;
      make_input(&up, 0, dev, &u);
      wt_tensor pair[2] = {outs[j], u};
      wt_op("mul", pair, 2, NULL, 0, &m, 1, &k);
      wt_op("sum", &m, 1, NULL, 0, &s, 1, &k);
      wt_tensor_free(u), wt_tensor_free(m);
      if (loss) {
        wt_tensor two[2] = {loss, s};
        wt_op("add", two, 2, NULL, 0, &sum, 1, &k);
        wt_tensor_free(loss), wt_tensor_free(s);
        loss = sum;
      } else loss = s;
    }
  }
  if (grad && loss) {
    int32_t st = wt_backward(loss, 0);
    wt_tensor_free(loss);
    if (st) {
      snprintf(msg, 256, "backward: %s", wt_last_error());
      goto done;
    }
    for (int32_t i = 0; i < n_in; i++) {
      if (!jbool(inputs->items[i], "grad", 0)) continue;
      vt want;
      wt_tensor gr = 0;
      snprintf(key, sizeof key, "%s/grad%d", name, i);
      if (!find_tensor(f, key, &want)) continue;
      wt_tensor_grad(ins[i], &gr);
      if (!gr) {
        int32_t k;
        wt_op("zeros_like", &ins[i], 1, NULL, 0, &gr, 1, &k);
      }
      int bad = grade(gr, &want, g, g->grad_scale, worst, msg);
      wt_tensor_free(gr);
      if (bad) goto done;
    }
  }
  rc = 0;
done:
  for (int i = 0; i < 16; i++) {
    if (ins[i]) wt_tensor_free(ins[i]);
    if (cins[i]) wt_tensor_free(cins[i]);
    if (outs[i]) wt_tensor_free(outs[i]);
  }
  for (int i = 0; i < nkeep; i++) free(keep[i]);
  return rc;
}

static int load_vfile(const char *path, vfile *f) {
  size_t n;
  f->raw = read_file(path, &n);
  if (!f->raw || n < 8) return 0;
  uint64_t hl;
  memcpy(&hl, f->raw, 8);
  if (hl > n - 8) return 0;
  f->header = json_parse(f->raw + 8, (size_t)hl);
  f->data_at = 8 + (size_t)hl;
  const char *cases = jstr(jget(f->header, "__metadata__"), "cases", NULL);
  f->cases = cases ? json_parse(cases, strlen(cases)) : NULL;
  return f->header && f->cases;
}

/* identity writes the SHA-256 of seeded random tensors (conformance/identity.go). */
static void identity(FILE *out, const char *dev) {
  int64_t shape[1] = {64};
  wt_attr common[5] = {{.name = "shape", .kind = WT_ATTR_INTS, .ints = shape, .len = 1},
                       {.name = "device", .kind = WT_ATTR_STRING, .s = dev}};
  struct { const char *name, *op; int64_t seed, low, high; } cases[3] = {
      {"rand_seed7", "rand", 7, 0, 0}, {"randint_seed7", "randint", 7, -5, 50}, {"bernoulli_seed3", "bernoulli", 3, 0, 0}};
  fprintf(out, "  \"identity\": {");
  for (int c = 0; c < 3; c++) {
    wt_attr a[5];
    memcpy(a, common, sizeof a);
    int na = 2;
    a[na++] = (wt_attr){.name = "seed", .kind = WT_ATTR_INT, .i = cases[c].seed};
    if (cases[c].high) {
      a[na++] = (wt_attr){.name = "low", .kind = WT_ATTR_INT, .i = cases[c].low};
      a[na++] = (wt_attr){.name = "high", .kind = WT_ATTR_INT, .i = cases[c].high};
    }
    wt_tensor t = 0, p = 0, cpu = 0;
    int32_t k, st;
    if (!strcmp(cases[c].op, "bernoulli")) {
      float half[64];
      for (int i = 0; i < 64; i++) half[i] = 0.3f;
      st = wt_tensor_from_data(half, sizeof half, WT_F32, shape, 1, dev, &p);
      wt_attr seed = {.name = "seed", .kind = WT_ATTR_INT, .i = cases[c].seed};
      if (!st) st = wt_op("bernoulli", &p, 1, &seed, 1, &t, 1, &k);
    } else {
      st = wt_op(cases[c].op, NULL, 0, a, na, &t, 1, &k);
    }
    char hex[65] = "error";
    int32_t dt;
    int64_t n;
    if (!st && !wt_tensor_to_device(t, "cpu", &cpu) && !wt_tensor_dtype(cpu, &dt) && !wt_tensor_numel(cpu, &n)) {
      size_t bytes = (size_t)n * (size_t)DT_SIZE[dt];
      unsigned char *raw = malloc(bytes + 1);
      if (!wt_tensor_to_host(cpu, raw, bytes)) sha256_hex(raw, bytes, hex);
      free(raw);
    }
    fprintf(out, "%s\n    \"%s\": \"%s\"", c ? "," : "", cases[c].name, hex);
    if (t) wt_tensor_free(t);
    if (p) wt_tensor_free(p);
    if (cpu) wt_tensor_free(cpu);
  }
  fprintf(out, "\n  },\n");
}

/* read_fallbacks is wt_fallbacks_json's report (malloc'd; NULL on failure);
 * reset clears the counts once read. */
static char *read_fallbacks(int reset) {
  size_t need = 0;
  wt_fallbacks_json(0, NULL, 0, &need);
  char *buf = malloc(need + 1);
  if (buf && wt_fallbacks_json(reset, buf, need + 1, &need) == WT_OK) return buf;
  free(buf);
  return NULL;
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(out, "\\%c", ch);
    else if (ch < 0x20) fprintf(out, "\\u%04x", ch);
    else fputc(ch, out);
  }
  fputc('"', out);
}

static const jval *manifest_op(const jval *manifest, const char *name) {
  const jval *ops = jget(manifest, "ops");
  for (size_t i = 0; ops && i < ops->n; i++)
    if (!strcmp(jstr(ops->items[i], "name", ""), name)) return ops->items[i];
  return NULL;
}

/* core.NoDeviceText: the library's message says so when the machine has no
 * such device at all (no adapter, no driver), as opposed to a backend that
 * failed to open, which fails the column (conformance/columns.go). */
static const char *NO_DEVICE = "no such device on this machine";

static int device_present(const char *dev) {
  int32_t n = 0;
  wt_device_count(&n);
  size_t kind = strcspn(dev, ":");
  for (int32_t i = 0; i < n; i++) {
    char name[64];
    if (!wt_device_name(i, name, sizeof name, NULL) && !strncmp(name, dev, kind)) return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s VECTORS_DIR DEVICE OUT.json\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1], *dev = argv[2];
  char path[4096], kind[32];
  snprintf(kind, sizeof kind, "%.*s", (int)strcspn(dev, ":"), dev);
  FILE *out = fopen(argv[3], "w");
  if (!out) return perror(argv[3]), 1;
  fprintf(out, "{\n  \"sdk\": \"c\",\n  \"backend\": \"%s\",\n", kind);
  if (!device_present(dev)) {
    /* wt_set_default_device fails saying why: no such device, or a fault. */
    const char *msg = wt_set_default_device(dev) ? wt_last_error() : "opens but is not in the device list";
    char detail[2048];
    snprintf(detail, sizeof detail, "%s: %s", strstr(msg, NO_DEVICE) ? "unavailable" : "open failed", msg);
    fprintf(out, "  \"detail\": ");
    json_string(out, detail);
    fprintf(out, ",\n  \"ops\": {}\n}\n");
    fclose(out);
    return 0;
  }
  free(read_fallbacks(1));
  fprintf(out, "  \"detail\": \"libwebtensor %s through webtensor.h (ABI %d)\",\n", wt_version(), wt_abi_version());
  size_t n;
  snprintf(path, sizeof path, "%s/index.json", dir);
  char *itext = read_file(path, &n);
  jval *index = itext ? json_parse(itext, n) : NULL;
  size_t need = 0;
  wt_manifest_json(NULL, 0, &need);
  char *mtext = malloc(need + 1);
  jval *manifest = NULL;
  if (!wt_manifest_json(mtext, need + 1, &need)) manifest = json_parse(mtext, strlen(mtext));
  if (!index || !manifest) {
    fprintf(stderr, "c runner: cannot read %s or the manifest: %s\n", path, json_error ? json_error : "missing");
    return 1;
  }
  grading g = {jget(index, "tolerances"), 1, jnum(index, "grad_tol_scale", 10)};
  const jval *ops = jget(index, "ops");
  fprintf(out, "  \"ops\": {");
  for (size_t k = 0; k < ops->n; k++) {
    const char *op = ops->keys[k];
    const jval *entry = ops->items[k];
    g.scale = jnum(entry, "tol_scale", 1);
    char msg[256] = "", detail[300] = "";
    int cases = 0, skipped = 0, failed = 0;
    double worst = 0;
    vfile f = {0};
    snprintf(path, sizeof path, "%s/%s", dir, jstr(entry, "file", ""));
    if (!load_vfile(path, &f)) {
      failed = 1;
      snprintf(detail, sizeof detail, "cannot read %.250s", path);
    } else {
      const jval *mop = manifest_op(manifest, op);
      for (size_t c = 0; c < f.cases->n; c++) {
        const jval *cs = f.cases->items[c];
        if (!holds(&f, cs, dev)) {
          skipped++;
          continue;
        }
        cases++;
        msg[0] = 0;
        if (run_case(op, mop, &f, cs, dev, &g, &worst, msg) && !failed) {
          failed = 1;
          snprintf(detail, sizeof detail, "case %s: %s", jstr(cs, "name", ""), msg);
        }
      }
    }
    json_free(f.header), json_free(f.cases), free(f.raw);
    const char *status = failed ? "fail" : cases == 0 ? "n/a" : "pass";
    fprintf(out, "%s\n    ", k ? "," : "");
    json_string(out, op);
    fprintf(out, ": {\"status\": \"%s\", \"cases\": %d, \"skipped\": %d, \"worst\": %.6g, \"detail\": ", status, cases,
            skipped, worst > 1e300 ? 1e300 : worst);
    json_string(out, detail);
    fputc('}', out);
  }
  fprintf(out, "\n  },\n");
  identity(out, dev);
  char *fb = read_fallbacks(0);
  fprintf(out, "  \"fallbacks\": %s\n}\n", fb ? fb : "null");
  free(fb);
  fclose(out);
  json_free(index), json_free(manifest), free(itext), free(mtext);
  int64_t live = 0;
  wt_live_tensors(&live);
  if (live != 0) fprintf(stderr, "c runner: %lld tensors still live at exit (a leak)\n", (long long)live);
  return live != 0;
}
