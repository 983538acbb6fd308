/*
 * wtplugin.h: write a webtensor plugin in C (ABI version 1, plugins-wasm/ABI.md)
 * with no libc at all.
 *
 * Build (Debian 12: apt-get install clang lld):
 *   clang --target=wasm32 -O2 -ffreestanding -nostdlib -mbulk-memory \
 *         -fuse-ld=/usr/bin/wasm-ld-14 -Wl,--no-entry -o my.wasm my.c
 * -mbulk-memory lets the compiler turn copy and fill loops into memory.copy
 * and memory.fill instead of calls to a memcpy/memset that does not exist
 * here; the link fails on any symbol nobody defines, so nothing slips through.
 *
 * Include this header in exactly one .c file: it defines the exports
 * wt_plugin_abi, wt_alloc, wt_free and wt_error. The plugin supplies the rest:
 *
 *   WT_MANIFEST("{\"abi\": 1, \"name\": \"my\", ...}")    defines wt_manifest
 *   WT_MAP_F32(my_kernel, float k = wt_attr_float(call, "k", 1), k * x)
 *   WT_KERNELS(my_kernel)                              defines wt_kernel
 *   int64_t wt_infer(int32_t op, uint32_t req, uint32_t len) {...}
 *                                  only for outputs whose shape rule is "infer"
 *
 * The same file compiles natively (cc -std=c11) so kernels can be unit-tested
 * without a WebAssembly runtime: addresses in the call record are then offsets
 * into a static arena (WT_NATIVE_ARENA bytes) instead of linear-memory
 * addresses, and wt_test_call/wt_test_tensor build records there.
 */
#ifndef WTPLUGIN_H
#define WTPLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define WT_ABI_VERSION 1
#define WT_MAX_DIMS 8

#if defined(__wasm__)
#define WT_EXPORT(name) __attribute__((export_name(#name)))
#else
#define WT_EXPORT(name)
#endif

/* ---- dtypes, as the call record numbers them ---- */

typedef enum {
    WT_F32 = 1, WT_F16 = 2, WT_BF16 = 3, WT_F64 = 4, WT_I64 = 5, WT_I32 = 6,
    WT_U32 = 7, WT_I16 = 8, WT_I8 = 9, WT_U8 = 10, WT_BOOL = 11
} wt_dtype;

/* wt_dtype_size is the element size in bytes, 0 for an unknown code. */
static inline uint32_t wt_dtype_size(uint32_t dt) {
    static const uint8_t sizes[12] = {0, 4, 2, 2, 8, 8, 4, 4, 2, 1, 1, 1};
    return dt < 12 ? sizes[dt] : 0;
}

/* wt_dtype_name is webtensor's name of the code, for error messages. */
static inline const char *wt_dtype_name(uint32_t dt) {
    static const char *const names[12] = {"invalid", "f32", "f16", "bf16", "f64", "i64",
                                          "i32", "u32", "i16", "i8", "u8", "bool"};
    return dt < 12 ? names[dt] : "invalid";
}

/* ---- the call record ---- */

/* One tensor of a call: 48 bytes, little-endian, exactly as ABI.md lays it out. */
typedef struct {
    uint32_t data;   /* address of row-major contiguous elements; 0 = absent optional input */
    uint32_t nbytes;
    uint32_t dtype;  /* a wt_dtype */
    uint32_t ndim;   /* at most WT_MAX_DIMS */
    uint32_t shape[WT_MAX_DIMS];
} wt_tensor;

/* The record wt_kernel receives: a header, then n_inputs + n_outputs tensors. */
typedef struct {
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t attrs_ptr; /* JSON object with every attribute, defaults filled in */
    uint32_t attrs_len;
    wt_tensor tensors[];
} wt_call;

_Static_assert(sizeof(wt_tensor) == 48, "wt_tensor must match the ABI's 48-byte record");
_Static_assert(sizeof(wt_call) == 16, "wt_call header must be 16 bytes");

/* ---- addresses ---- */

#if defined(__wasm__)
/* Linear memory starts at address 0, so an ABI address is a pointer. */
#define WT_PTR(type, addr) ((type *)(uintptr_t)(addr))
#else
#ifndef WT_NATIVE_ARENA
#define WT_NATIVE_ARENA (16u << 20)
#endif
/* Natively the arena plays linear memory; offset 0 stays unused so 0 still means "none". */
static _Alignas(8) unsigned char wt__arena[WT_NATIVE_ARENA];
#define WT_PTR(type, addr) ((type *)(wt__arena + (addr)))
#endif

/* ---- allocator: a bump allocator, since a plugin without libc has no malloc ---- */

/*
 * Blocks come from one region that only grows, so allocation is a pointer
 * bump. Freeing the most recent block moves the top back, and once every
 * block is free the region restarts at its base: a host that frees its
 * per-call buffers (in any order) reuses the same memory on every call.
 * Frees of addresses outside the region (static data such as the manifest)
 * are ignored.
 */
static uint32_t wt__heap_base, wt__top, wt__live;

#if defined(__wasm__)
extern unsigned char __heap_base; /* defined by wasm-ld: the first byte after static data and stack */
static inline uint32_t wt__base(void) { return ((uint32_t)(uintptr_t)&__heap_base + 7u) & ~7u; }
static inline int wt__reserve(uint64_t end) {
    uint64_t have = (uint64_t)__builtin_wasm_memory_size(0) << 16;
    if (end <= have)
        return 1;
    return __builtin_wasm_memory_grow(0, (size_t)((end - have + 0xFFFF) >> 16)) != (size_t)-1;
}
#else
static inline uint32_t wt__base(void) { return 8; }
static inline int wt__reserve(uint64_t end) { return end <= WT_NATIVE_ARENA; }
#endif

WT_EXPORT(wt_alloc) uint32_t wt_alloc(uint32_t size) {
    if (!wt__heap_base)
        wt__heap_base = wt__top = wt__base();
    uint64_t n = size ? ((uint64_t)size + 7u) & ~(uint64_t)7u : 8u;
    uint64_t end = (uint64_t)wt__top + n;
    if (end > 0xFFFFFFF8u || !wt__reserve(end))
        return 0;
    uint32_t p = wt__top;
    wt__top = (uint32_t)end;
    wt__live += (uint32_t)n;
    return p;
}

WT_EXPORT(wt_free) void wt_free(uint32_t ptr, uint32_t size) {
    uint32_t n = size ? (size + 7u) & ~7u : 8u;
    if (ptr < wt__heap_base || (uint64_t)ptr + n > wt__top || n > wt__live)
        return;
    wt__live -= n;
    if (ptr + n == wt__top)
        wt__top = ptr;
    if (wt__live == 0)
        wt__top = wt__heap_base;
}

WT_EXPORT(wt_plugin_abi) int32_t wt_plugin_abi(void) { return WT_ABI_VERSION; }

/* wt_addr is the ABI address of len bytes at p. Natively, bytes outside the
 * arena (string literals) are copied in first so the host side can read them. */
static inline uint32_t wt_addr(const void *p, uint32_t len) {
#if defined(__wasm__)
    (void)len;
    return (uint32_t)(uintptr_t)p;
#else
    const unsigned char *b = (const unsigned char *)p;
    if (b >= wt__arena && b < wt__arena + WT_NATIVE_ARENA)
        return (uint32_t)(b - wt__arena);
    uint32_t a = wt_alloc(len);
    for (uint32_t i = 0; a && i < len; i++)
        wt__arena[a + i] = b[i];
    return a;
#endif
}

/* wt_pack returns (address << 32) | len, the form wt_manifest, wt_error and wt_infer answer in. */
static inline int64_t wt_pack(const void *p, uint32_t len) {
    return (int64_t)(((uint64_t)wt_addr(p, len) << 32) | len);
}

static inline uint32_t wt_strlen(const char *s) {
    uint32_t n = 0;
    while (s[n])
        n++;
    return n;
}

/* wt_answer packs a NUL-terminated string that outlives the call (a literal), e.g. a
 * wt_infer answer whose shapes do not depend on the inputs. */
static inline int64_t wt_answer(const char *s) { return wt_pack(s, wt_strlen(s)); }

/* ---- errors ---- */

static char wt__err[512];
static uint32_t wt__err_len;

static inline void wt__put(char c) {
    if (wt__err_len < sizeof wt__err)
        wt__err[wt__err_len++] = c;
}

static inline void wt__put_uint(uint64_t v) {
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        wt__put(digits[--n]);
}

/* Doubles print with up to 6 decimals: enough to show which value was wrong. */
static inline void wt__put_double(double v) {
    if (v != v) {
        wt__put('n'), wt__put('a'), wt__put('n');
        return;
    }
    if (v < 0)
        wt__put('-'), v = -v;
    if (v > 1e18) {
        wt__put('i'), wt__put('n'), wt__put('f');
        return;
    }
    uint64_t whole = (uint64_t)v;
    uint64_t frac = (uint64_t)((v - (double)whole) * 1e6 + 0.5);
    if (frac >= 1000000)
        whole++, frac -= 1000000;
    wt__put_uint(whole);
    if (!frac)
        return;
    wt__put('.');
    char digits[6];
    for (int i = 5; i >= 0; i--)
        digits[i] = (char)('0' + frac % 10), frac /= 10;
    int last = 5;
    while (digits[last] == '0')
        last--;
    for (int i = 0; i <= last; i++)
        wt__put(digits[i]);
}

/*
 * wt_failf records the message of a failed call and returns 1, so a kernel can
 * `return wt_failf(...)`. Formats: %s, %d (int), %u (unsigned), %lld (long
 * long), %f (double) and %%. The host reads the message through wt_error.
 */
static inline int wt_failf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    wt__err_len = 0;
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            wt__put(*f);
            continue;
        }
        f++;
        if (*f == 's') {
            for (const char *s = va_arg(ap, const char *); *s; s++)
                wt__put(*s);
        } else if (*f == 'd' || (f[0] == 'l' && f[1] == 'l' && f[2] == 'd')) {
            long long v = *f == 'd' ? va_arg(ap, int) : va_arg(ap, long long);
            f += *f == 'd' ? 0 : 2;
            if (v < 0)
                wt__put('-');
            wt__put_uint(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
        } else if (*f == 'u') {
            wt__put_uint(va_arg(ap, unsigned));
        } else if (*f == 'f') {
            wt__put_double(va_arg(ap, double));
        } else if (*f == '%') {
            wt__put('%');
        } else {
            break;
        }
    }
    va_end(ap);
    return 1;
}

WT_EXPORT(wt_error) int64_t wt_error(void) { return wt_pack(wt__err, wt__err_len); }

/* ---- tensors ---- */

static inline const wt_tensor *wt_input(const wt_call *c, uint32_t i) { return &c->tensors[i]; }
static inline const wt_tensor *wt_output(const wt_call *c, uint32_t i) { return &c->tensors[c->n_inputs + i]; }
static inline int wt_present(const wt_tensor *t) { return t->data != 0; }

static inline uint64_t wt_numel(const wt_tensor *t) {
    uint64_t n = 1;
    for (uint32_t i = 0; i < t->ndim && i < WT_MAX_DIMS; i++)
        n *= t->shape[i];
    return n;
}

/* Typed views of a tensor's elements. Outputs are written through the same views: the
 * record is read-only, the buffers it points to are not. */
static inline float *wt_f32(const wt_tensor *t) { return WT_PTR(float, t->data); }
static inline double *wt_f64(const wt_tensor *t) { return WT_PTR(double, t->data); }
static inline int64_t *wt_i64(const wt_tensor *t) { return WT_PTR(int64_t, t->data); }
static inline int32_t *wt_i32(const wt_tensor *t) { return WT_PTR(int32_t, t->data); }
static inline uint8_t *wt_u8(const wt_tensor *t) { return WT_PTR(uint8_t, t->data); }

/* wt_check_call rejects a record whose tensors disagree with themselves, so kernels can
 * trust nbytes == numel * element size. wt_kernel (WT_KERNELS) runs it before every kernel. */
static inline int wt_check_call(const wt_call *c) {
    for (uint32_t i = 0; i < c->n_inputs + c->n_outputs; i++) {
        const wt_tensor *t = &c->tensors[i];
        const char *role = i < c->n_inputs ? "input" : "output";
        uint32_t k = i < c->n_inputs ? i : i - c->n_inputs;
        if (!t->data && i < c->n_inputs)
            continue;
        if (t->ndim > WT_MAX_DIMS)
            return wt_failf("%s %u has %u dims (at most 8)", role, k, t->ndim);
        if (!wt_dtype_size(t->dtype))
            return wt_failf("%s %u has unknown dtype code %u", role, k, t->dtype);
        if (wt_numel(t) * wt_dtype_size(t->dtype) != t->nbytes)
            return wt_failf("%s %u: %u bytes do not hold %lld %s elements", role, k, t->nbytes,
                            (long long)wt_numel(t), wt_dtype_name(t->dtype));
    }
    return 0;
}

/* ---- attributes: a scanner for the flat JSON object the host writes ---- */

static inline const char *wt__space(const char *s, const char *e) {
    while (s < e && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t'))
        s++;
    return s;
}

static inline const char *wt__skip_string(const char *s, const char *e) {
    for (s++; s < e && *s != '"'; s++)
        if (*s == '\\')
            s++;
    return s < e ? s + 1 : e;
}

/* wt__skip_value steps over one JSON value of any kind and stops at the ',' or
 * closing bracket after it. */
static inline const char *wt__skip_value(const char *s, const char *e) {
    int depth = 0;
    while (s < e) {
        if (*s == '"') {
            s = wt__skip_string(s, e);
            continue;
        }
        if (*s == '[' || *s == '{') {
            depth++;
        } else if (*s == ']' || *s == '}') {
            if (depth-- == 0)
                return s;
        } else if (*s == ',' && depth == 0) {
            return s;
        }
        s++;
    }
    return s;
}

/* wt__attr finds the value of attribute name; 0 when the object has no such key. */
static inline const char *wt__attr(const wt_call *c, const char *name, const char **end) {
    const char *s = WT_PTR(const char, c->attrs_ptr), *e = s + c->attrs_len;
    *end = e;
    if (!c->attrs_ptr || (s = wt__space(s, e)) >= e || *s++ != '{')
        return 0;
    for (;;) {
        s = wt__space(s, e);
        if (s >= e || *s != '"')
            return 0;
        const char *key = s + 1;
        s = wt__skip_string(s, e);
        uint32_t n = wt_strlen(name);
        int match = (uint32_t)(s - 1 - key) == n;
        for (uint32_t i = 0; match && i < n; i++)
            match = key[i] == name[i];
        s = wt__space(s, e);
        if (s >= e || *s++ != ':')
            return 0;
        s = wt__space(s, e);
        if (match)
            return s;
        s = wt__space(wt__skip_value(s, e), e);
        if (s >= e || *s++ != ',')
            return 0;
    }
}

/* wt__number parses a JSON number (or the strings "inf", "-inf", "nan"). */
static inline int wt__number(const char *s, const char *e, double *out) {
    int neg = 0, digits = 0, exp10 = 0;
    uint64_t mant = 0;
    if (s < e && *s == '"') {
        const char *q = s + 1;
        neg = q < e && *q == '-';
        q += neg;
        if (e - q >= 4 && q[0] == 'i' && q[1] == 'n' && q[2] == 'f' && q[3] == '"')
            return *out = neg ? -__builtin_inf() : __builtin_inf(), 1;
        if (e - q >= 4 && q[0] == 'n' && q[1] == 'a' && q[2] == 'n' && q[3] == '"')
            return *out = __builtin_nan(""), 1;
        return 0;
    }
    if (s < e && *s == '-')
        neg = 1, s++;
    for (int frac = 0; s < e; s++) {
        if (*s == '.' && !frac) {
            frac = 1;
            continue;
        }
        if (*s < '0' || *s > '9')
            break;
        if (mant < 100000000000000000ull)
            mant = mant * 10 + (uint64_t)(*s - '0'), exp10 -= frac;
        else
            exp10 += !frac;
        digits++;
    }
    if (!digits)
        return 0;
    if (s < e && (*s == 'e' || *s == 'E')) {
        int eneg = 0, ev = 0;
        s++;
        if (s < e && (*s == '+' || *s == '-'))
            eneg = *s++ == '-';
        for (; s < e && *s >= '0' && *s <= '9'; s++)
            ev = ev < 10000 ? ev * 10 + (*s - '0') : ev;
        exp10 += eneg ? -ev : ev;
    }
    double v = (double)mant;
    /* Dividing by an exact power of ten rounds once, so short decimals come out exact. */
    for (; exp10 < -22; exp10 += 22)
        v /= 1e22;
    for (; exp10 > 22; exp10 -= 22)
        v *= 1e22;
    double p = 1;
    for (int i = exp10 < 0 ? -exp10 : exp10; i > 0; i--)
        p *= 10;
    v = exp10 < 0 ? v / p : v * p;
    *out = neg ? -v : v;
    return 1;
}

/* wt_attr_float is the numeric attribute name, or def when the call has none. */
static inline double wt_attr_float(const wt_call *c, const char *name, double def) {
    const char *end, *v = wt__attr(c, name, &end);
    double x;
    return v && wt__number(v, end, &x) ? x : def;
}

static inline int64_t wt_attr_int(const wt_call *c, const char *name, int64_t def) {
    double x = wt_attr_float(c, name, (double)def);
    return x > -9.2e18 && x < 9.2e18 ? (int64_t)x : def;
}

static inline int wt_attr_bool(const wt_call *c, const char *name, int def) {
    const char *end, *v = wt__attr(c, name, &end);
    if (v && end - v >= 4 && v[0] == 't' && v[1] == 'r' && v[2] == 'u' && v[3] == 'e')
        return 1;
    if (v && end - v >= 5 && v[0] == 'f' && v[1] == 'a' && v[2] == 'l' && v[3] == 's' && v[4] == 'e')
        return 0;
    return def;
}

/* ---- math without libm (double precision; round to float for f32 kernels) ---- */

static inline double wt__ldexp(double x, int k) {
    union { double d; uint64_t u; } s;
    for (; k > 1023; k -= 1023)
        s.u = (uint64_t)(1023 + 1023) << 52, x *= s.d;
    for (; k < -1022; k += 1022)
        s.u = (uint64_t)1 << 52, x *= s.d;
    s.u = (uint64_t)(k + 1023) << 52;
    return x * s.d;
}

/* wt_exp: e^x to within about 1 ulp: x = k ln2 + r with |r| <= ln2/2, then a degree-13
 * Taylor polynomial in r (truncation error below 1e-17). */
static inline double wt_exp(double x) {
    if (x != x)
        return x;
    if (x > 709.8)
        return __builtin_inf();
    if (x < -745.2)
        return 0;
    double kf = (double)(int64_t)(x * 1.44269504088896338700 + (x >= 0 ? 0.5 : -0.5));
    double r = (x - kf * 6.93147180369123816490e-01) - kf * 1.90821492927058770002e-10;
    double p = 1;
    for (int i = 13; i >= 1; i--)
        p = 1 + p * r / i;
    return wt__ldexp(p, (int)kf);
}

/* wt_expm1: e^x - 1 without the cancellation near 0 (Taylor series there). */
static inline double wt_expm1(double x) {
    if (x > -0.5 && x < 0.5) {
        double term = x, sum = x;
        for (int i = 2; i <= 18; i++)
            term *= x / i, sum += term;
        return sum;
    }
    return wt_exp(x) - 1;
}

/* wt_tanh = expm1(2|x|) / (expm1(2|x|) + 2), with the sign of x; exact ±1 beyond 22. */
static inline double wt_tanh(double x) {
    double a = x < 0 ? -x : x;
    if (a != a || a == 0) /* NaN, and ±0 keeping its sign */
        return x;
    if (a > 22)
        return x < 0 ? -1 : 1;
    double m = wt_expm1(2 * a);
    double t = m / (m + 2);
    return x < 0 ? -t : t;
}

static inline double wt_sigmoid(double x) {
    if (x >= 0)
        return 1 / (1 + wt_exp(-x));
    double e = wt_exp(x);
    return e / (1 + e);
}

/* ---- macros that reduce a plugin to its kernels ---- */

typedef int (*wt_kernel_fn)(const wt_call *call);

WT_EXPORT(wt_manifest) int64_t wt_manifest(void);
WT_EXPORT(wt_kernel) int32_t wt_kernel(int32_t op, uint32_t call);
WT_EXPORT(wt_infer) int64_t wt_infer(int32_t op, uint32_t req, uint32_t len);

/* WT_MANIFEST(json) defines wt_manifest over a string literal. */
#define WT_MANIFEST(json)                                                                     \
    int64_t wt_manifest(void) {                                                               \
        static const char wt__manifest_json[] = json;                                         \
        return wt_pack(wt__manifest_json, sizeof wt__manifest_json - 1);                      \
    }

/* WT_KERNELS(k0, k1, ...) defines wt_kernel: op i of the manifest runs ki, after the
 * record passed wt_check_call. */
#define WT_KERNELS(...)                                                                       \
    static const wt_kernel_fn wt__kernels[] = {__VA_ARGS__};                                  \
    int32_t wt_kernel(int32_t op, uint32_t call) {                                            \
        const uint32_t n = sizeof wt__kernels / sizeof wt__kernels[0];                        \
        if (op < 0 || (uint32_t)op >= n)                                                      \
            return wt_failf("no kernel for op %d (the plugin has %u)", op, n);                \
        const wt_call *c = WT_PTR(const wt_call, call);                                       \
        return wt_check_call(c) ? 1 : wt__kernels[op](c);                                     \
    }

/* WT_MAP(fn, dt, T, setup, expr) defines kernel fn: output 0 gets expr for every element
 * x of input 0 (both of dtype dt, element type T, same size). setup runs once first and
 * sees the record as `call`: read attributes there, and `return wt_failf(...)` to refuse. */
#define WT_MAP(fn, dt, T, setup, expr)                                                        \
    static int fn(const wt_call *call) {                                                      \
        const wt_tensor *wt__in = wt_input(call, 0), *wt__out = wt_output(call, 0);           \
        if (call->n_inputs < 1 || call->n_outputs < 1)                                        \
            return wt_failf(#fn ": needs an input and an output, got %u and %u",              \
                            call->n_inputs, call->n_outputs);                                 \
        if (wt__in->dtype != (dt) || wt__out->dtype != (dt) || wt__in->nbytes != wt__out->nbytes) \
            return wt_failf(#fn ": wants %s in and out of one size, got %s (%u bytes) and %s (%u bytes)", \
                            wt_dtype_name(dt), wt_dtype_name(wt__in->dtype), wt__in->nbytes,  \
                            wt_dtype_name(wt__out->dtype), wt__out->nbytes);                  \
        const T *wt__x = WT_PTR(const T, wt__in->data);                                       \
        T *wt__y = WT_PTR(T, wt__out->data);                                                  \
        const uint32_t wt__n = wt__in->nbytes / (uint32_t)sizeof(T);                          \
        setup;                                                                                \
        for (uint32_t wt__i = 0; wt__i < wt__n; wt__i++) {                                    \
            const T x = wt__x[wt__i];                                                         \
            wt__y[wt__i] = (T)(expr);                                                         \
        }                                                                                     \
        return 0;                                                                             \
    }
#define WT_MAP_F32(fn, setup, expr) WT_MAP(fn, WT_F32, float, setup, expr)
#define WT_MAP_F64(fn, setup, expr) WT_MAP(fn, WT_F64, double, setup, expr)

/* ---- native unit tests ---- */

#if !defined(__wasm__)
/* wt_test_call lays out a record for n_inputs + n_outputs tensors with the given
 * attributes (a JSON object) and returns its address; fill it with wt_test_tensor. */
static inline uint32_t wt_test_call(uint32_t n_inputs, uint32_t n_outputs, const char *attrs_json) {
    uint32_t a = wt_alloc(16 + 48 * (n_inputs + n_outputs));
    wt_call *c = WT_PTR(wt_call, a);
    c->n_inputs = n_inputs;
    c->n_outputs = n_outputs;
    c->attrs_len = wt_strlen(attrs_json);
    c->attrs_ptr = wt_addr(attrs_json, c->attrs_len);
    return a;
}

/* wt_test_tensor sets tensor i of the record (inputs first): it copies data in, or
 * zeroes the buffer when data is 0, as the host does for outputs. */
static inline const wt_tensor *wt_test_tensor(uint32_t call, uint32_t i, wt_dtype dt, const void *data,
                                       uint32_t ndim, const uint32_t *shape) {
    wt_tensor *t = &WT_PTR(wt_call, call)->tensors[i];
    t->dtype = dt;
    t->ndim = ndim;
    for (uint32_t d = 0; d < ndim; d++)
        t->shape[d] = shape[d];
    t->nbytes = (uint32_t)wt_numel(t) * wt_dtype_size(dt);
    t->data = wt_alloc(t->nbytes);
    for (uint32_t b = 0; b < t->nbytes; b++)
        wt__arena[t->data + b] = data ? ((const unsigned char *)data)[b] : 0;
    return t;
}

/* wt_test_error is the message of the last failure, NUL-terminated. */
static inline const char *wt_test_error(void) {
    wt__err[wt__err_len < sizeof wt__err ? wt__err_len : sizeof wt__err - 1] = 0;
    return wt__err;
}
#endif

#endif /* WTPLUGIN_H */
