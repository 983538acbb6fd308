/* webtensor._fast: the per-op hot path of the Python SDK in C.
 *
 * Why: through ctypes, `a + b` on small tensors spent most of its time in
 * Python (argument conversion for eight ctypes arguments, a Python frame per
 * operator, run_op's loop, Tensor._wrap, and a ctypes call from __del__), not
 * in the op. This module does only that plumbing: it reads the handle out of
 * Tensor's `_h` slot, builds the wt_attr array, makes the 0-d tensor of a
 * Python scalar operand, calls the library through the function pointers
 * ctypes already resolved (so WEBTENSOR_LIBRARY and the one Go runtime per
 * process still hold), and builds the result Tensor the way Tensor._wrap
 * does. Whatever it is not sure to do exactly as the Python code does
 * (NumPy scalars, lists, closed tensors, f16 scalars, out-of-range values,
 * unusual attribute values) it hands back, and the Python code, which stays
 * the reference, runs instead: results, errors and messages are the same
 * either way (tests/test_fast.py runs both).
 *
 * The module is optional: _tensor.py uses it when it imports and init()
 * accepts the Tensor class, else the pure ctypes path runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>

/* ---- the C ABI, as declared in capi/include/webtensor.h ---------------------- */

typedef struct {
    const char *name;
    int32_t kind;
    int64_t i;
    double f;
    const char *s;
    const int64_t *ints;
    const double *floats;
    int64_t len;
} wt_attr;

enum { WT_ATTR_INT = 1, WT_ATTR_FLOAT, WT_ATTR_BOOL, WT_ATTR_STRING, WT_ATTR_INTS, WT_ATTR_FLOATS, WT_ATTR_DTYPE };
enum { WT_F32 = 1, WT_F16, WT_BF16, WT_F64, WT_I64, WT_I32, WT_U32, WT_I16, WT_I8, WT_U8, WT_BOOL };
#define WT_ERR_BUFFER_TOO_SMALL 5

typedef int32_t (*wt_op_fn)(const char *, const int64_t *, int32_t, const wt_attr *, int32_t, int64_t *, int32_t,
                            int32_t *);
typedef int32_t (*wt_free_fn)(int64_t);
typedef int32_t (*wt_dtype_fn)(int64_t, int32_t *);
typedef int32_t (*wt_device_fn)(int64_t, char *, size_t, size_t *);
typedef int32_t (*wt_from_data_fn)(const void *, size_t, int32_t, const int64_t *, int32_t, const char *, int64_t *);

static wt_op_fn op_fn;
static wt_free_fn free_fn;
static wt_dtype_fn dtype_fn;
static wt_device_fn device_fn;
static wt_from_data_fn from_data_fn;

static PyTypeObject *tensor_type; /* webtensor.Tensor (a strong reference) */
static Py_ssize_t off_h, off_keep; /* byte offsets of its `_h` and `_keep` slots */
static PyObject *check_fn;         /* _lib.check(status): raises the Python exception */
static PyObject *wrap_fn;          /* Tensor._wrap, used while a wt.scope is open */
static PyObject *to_dtype_fn;      /* _dtype.to_dtype, for dtype attributes */
static long open_scopes;           /* wt.scope blocks open on any thread */

/* ---- one op call ------------------------------------------------------------------ */

#define MAX_INPUTS 8
#define MAX_ATTRS 16
#define MAX_LIST 64 /* ints and floats of all list attributes together */
#define OUT_CAP 8
#define FALLBACK 1 /* prepare: leave this call to the Python code */

typedef struct {
    int64_t in[MAX_INPUTS];
    int k;
    wt_attr attrs[MAX_ATTRS];
    int n_attrs;
    int64_t ints[MAX_LIST];
    double floats[MAX_LIST];
    int n_ints, n_floats;
    int64_t temps[MAX_INPUTS]; /* 0-d tensors made for scalar inputs, freed after the call */
    int n_temps;
} call_t;

static void free_temps(call_t *c) {
    for (int i = 0; i < c->n_temps; i++) {
        free_fn(c->temps[i]);
    }
    c->n_temps = 0;
}

/* The handle of a live Tensor, or 0 when x is not one the fast path takes
 * (not a Tensor, closed, or a slot that does not hold an int). */
static int64_t handle_of(PyObject *x) {
    if (!PyObject_TypeCheck(x, tensor_type)) {
        return 0;
    }
    PyObject *h = *(PyObject **)((char *)x + off_h);
    if (h == NULL || !PyLong_CheckExact(h)) {
        return 0;
    }
    long long v = PyLong_AsLongLong(h);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return (int64_t)v;
}

static int is_scalar(PyObject *x) { return PyFloat_CheckExact(x) || PyLong_CheckExact(x) || PyBool_Check(x); }

/* The bytes of Python scalar x as a 0-d tensor next to a tensor of dtype
 * `ref`, by _scalar_like's rule: ref's dtype when it holds x without loss of
 * kind, else bool, i64 or f32. Only conversions that NumPy's (and the array
 * module's) agree with bit for bit are done here; FALLBACK otherwise. */
static int scalar_bytes(PyObject *x, int32_t ref, int32_t *dtype, unsigned char *buf, size_t *n) {
    int ref_float = ref == WT_F32 || ref == WT_F16 || ref == WT_BF16 || ref == WT_F64;
    double d = 0;
    long long v = 0;
    int is_float = PyFloat_CheckExact(x);
    if (is_float) {
        d = PyFloat_AS_DOUBLE(x);
        *dtype = ref_float ? ref : WT_F32;
    } else {
        int overflow = 0;
        v = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return FALLBACK;
        }
        if (PyBool_Check(x)) {
            *dtype = ref;
        } else {
            *dtype = ref != WT_BOOL ? ref : WT_I64;
        }
        d = (double)v;
        if ((*dtype == WT_F32 || *dtype == WT_F64) && (v > (1LL << 53) || v < -(1LL << 53))) {
            return FALLBACK; /* not exact in a double: NumPy rounds once, we would round twice */
        }
    }
#define INT_CASE(code, type, lo, hi)   \
    case code:                         \
        if (is_float || v < (lo) || v > (hi)) { \
            return FALLBACK;           \
        }                              \
        {                              \
            type t = (type)v;          \
            memcpy(buf, &t, sizeof t); \
            *n = sizeof t;             \
        }                              \
        return 0;
    switch (*dtype) {
    case WT_F32: {
        float f = (float)d;
        memcpy(buf, &f, sizeof f);
        *n = sizeof f;
        return 0;
    }
    case WT_F64:
        memcpy(buf, &d, sizeof d);
        *n = sizeof d;
        return 0;
        INT_CASE(WT_I64, int64_t, INT64_MIN, INT64_MAX)
        INT_CASE(WT_I32, int32_t, INT32_MIN, INT32_MAX)
        INT_CASE(WT_U32, uint32_t, 0, UINT32_MAX)
        INT_CASE(WT_I16, int16_t, INT16_MIN, INT16_MAX)
        INT_CASE(WT_I8, int8_t, INT8_MIN, INT8_MAX)
        INT_CASE(WT_U8, uint8_t, 0, UINT8_MAX)
        INT_CASE(WT_BOOL, uint8_t, 0, 1) /* only a bool x reaches here: 0 or 1 */
    }
#undef INT_CASE
    return FALLBACK; /* f16 and bf16: NumPy's rounding stays in Python */
}

/* Resolves the inputs: live Tensors, None (an absent optional input) and
 * Python scalars, which become 0-d tensors on ref's device (ref: `like`, else
 * the first Tensor input, as in run_op). */
static int prepare_inputs(call_t *c, PyObject *const *items, Py_ssize_t k, PyObject *like) {
    if (k > MAX_INPUTS) {
        return FALLBACK;
    }
    c->k = (int)k;
    int scalars = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *x = items[i];
        if (x == Py_None) {
            c->in[i] = 0;
        } else if ((c->in[i] = handle_of(x)) == 0) {
            if (!is_scalar(x)) {
                return FALLBACK;
            }
            scalars++;
        }
    }
    if (scalars == 0) {
        return 0;
    }
    PyObject *ref = like;
    if (ref == NULL || ref == Py_None) {
        ref = NULL;
        for (Py_ssize_t i = 0; i < k && ref == NULL; i++) {
            if (PyObject_TypeCheck(items[i], tensor_type)) {
                ref = items[i];
            }
        }
    }
    int64_t rh = ref != NULL ? handle_of(ref) : 0;
    int32_t ref_dtype;
    char device[64];
    size_t needed;
    if (rh == 0 || dtype_fn(rh, &ref_dtype) != 0 || device_fn(rh, device, sizeof device, &needed) != 0) {
        return FALLBACK;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        if (c->in[i] != 0 || items[i] == Py_None) {
            continue;
        }
        unsigned char buf[8];
        size_t n;
        int32_t dtype;
        int64_t h = 0, shape = 0;
        if (scalar_bytes(items[i], ref_dtype, &dtype, buf, &n) != 0 ||
            from_data_fn(buf, n, dtype, &shape, 0, device, &h) != 0) {
            free_temps(c);
            return FALLBACK;
        }
        c->temps[c->n_temps++] = c->in[i] = h;
    }
    return 0;
}

static int is_int(PyObject *v) { return PyLong_CheckExact(v) || PyBool_Check(v); }

/* One list attribute ("ints" or "floats"): a list or tuple of them, or one. */
static int prepare_list(call_t *c, wt_attr *a, PyObject *v, int floats) {
    PyObject *const *vals = &v;
    Py_ssize_t n = 1;
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        vals = PySequence_Fast_ITEMS(v);
        n = PySequence_Fast_GET_SIZE(v);
    }
    int *used = floats ? &c->n_floats : &c->n_ints;
    if (*used + n > MAX_LIST) {
        return FALLBACK;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *e = vals[j];
        int overflow = 0;
        if (floats) {
            if (!PyFloat_CheckExact(e) && !is_int(e)) {
                return FALLBACK;
            }
            double f = PyFloat_AsDouble(e);
            if (f == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                return FALLBACK;
            }
            c->floats[*used + j] = f;
        } else {
            if (!is_int(e)) {
                return FALLBACK;
            }
            long long i = PyLong_AsLongLongAndOverflow(e, &overflow);
            if (overflow || (i == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                return FALLBACK;
            }
            c->ints[*used + j] = i;
        }
    }
    if (floats) {
        a->kind = WT_ATTR_FLOATS;
        a->floats = c->floats + *used;
    } else {
        a->kind = WT_ATTR_INTS;
        a->ints = c->ints + *used;
    }
    a->len = n;
    *used += (int)n;
    return 0;
}

/* The wt_attr array of run_op's (name, kind, value) triples, None values
 * left out, exactly as _tensor._attr builds it. */
static int prepare_attrs(call_t *c, PyObject *attrs) {
    c->n_attrs = 0;
    c->n_ints = c->n_floats = 0;
    if (attrs == NULL || attrs == Py_None) {
        return 0;
    }
    if (!PyList_CheckExact(attrs) && !PyTuple_CheckExact(attrs)) {
        return FALLBACK;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(attrs);
    PyObject *const *items = PySequence_Fast_ITEMS(attrs);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = items[i];
        if (!PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != 3) {
            return FALLBACK;
        }
        PyObject *name = PyTuple_GET_ITEM(t, 0), *kind = PyTuple_GET_ITEM(t, 1), *v = PyTuple_GET_ITEM(t, 2);
        if (v == Py_None) {
            continue;
        }
        if (c->n_attrs == MAX_ATTRS || !PyUnicode_CheckExact(name) || !PyUnicode_CheckExact(kind)) {
            return FALLBACK;
        }
        wt_attr *a = &c->attrs[c->n_attrs];
        memset(a, 0, sizeof *a);
        const char *k = PyUnicode_AsUTF8(kind);
        if ((a->name = PyUnicode_AsUTF8(name)) == NULL || k == NULL) {
            PyErr_Clear();
            return FALLBACK;
        }
        int overflow = 0;
        if (strcmp(k, "int") == 0 && is_int(v)) {
            a->kind = WT_ATTR_INT;
            a->i = PyLong_AsLongLongAndOverflow(v, &overflow);
        } else if (strcmp(k, "bool") == 0 && is_int(v)) {
            a->kind = WT_ATTR_BOOL;
            a->i = PyObject_IsTrue(v);
        } else if (strcmp(k, "float") == 0 && PyLong_CheckExact(v)) {
            /* An integer goes as one, as in _tensor._attr: arange's bounds keep it
             * exact. One beyond int64 overflows and falls back to the Python code. */
            a->kind = WT_ATTR_INT;
            a->i = PyLong_AsLongLongAndOverflow(v, &overflow);
        } else if (strcmp(k, "float") == 0 && (PyFloat_CheckExact(v) || is_int(v))) {
            a->kind = WT_ATTR_FLOAT;
            a->f = PyFloat_AsDouble(v);
        } else if (strcmp(k, "string") == 0 && PyUnicode_CheckExact(v)) {
            a->kind = WT_ATTR_STRING;
            a->s = PyUnicode_AsUTF8(v);
            if (a->s == NULL) {
                PyErr_Clear();
                return FALLBACK;
            }
        } else if (strcmp(k, "dtype") == 0) {
            PyObject *dt = PyObject_CallOneArg(to_dtype_fn, v);
            PyObject *code = dt != NULL ? PyObject_GetAttrString(dt, "code") : NULL;
            Py_XDECREF(dt);
            if (code == NULL || !PyLong_CheckExact(code)) {
                Py_XDECREF(code);
                PyErr_Clear();
                return FALLBACK; /* the Python code raises the same error, in its order */
            }
            a->kind = WT_ATTR_DTYPE;
            a->i = PyLong_AsLongLong(code);
            Py_DECREF(code);
        } else if (strcmp(k, "ints") == 0 || strcmp(k, "floats") == 0) {
            if (prepare_list(c, a, v, k[0] == 'f') != 0) {
                return FALLBACK;
            }
        } else {
            return FALLBACK;
        }
        if (overflow || PyErr_Occurred()) {
            PyErr_Clear();
            return FALLBACK;
        }
        c->n_attrs++;
    }
    return 0;
}

/* A new Tensor owning handle h, as Tensor._wrap(h) makes it. */
static PyObject *wrap(int64_t h) {
    if (open_scopes > 0) { /* the scope stack is thread-local: let Python register it */
        return PyObject_CallFunction(wrap_fn, "L", (long long)h);
    }
    PyObject *hv = PyLong_FromLongLong(h);
    if (hv == NULL) {
        return NULL;
    }
    PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
    if (t == NULL) {
        Py_DECREF(hv);
        return NULL;
    }
    *(PyObject **)((char *)t + off_h) = hv;
    Py_INCREF(Py_None);
    *(PyObject **)((char *)t + off_keep) = Py_None;
    return t;
}

/* Runs the prepared call and frees its temporaries. On success returns the
 * outputs as a list (want_list) or the first output, every other output
 * wrapped and dropped exactly as run_op(...)[0] does. */
static PyObject *run_call(call_t *c, const char *name, int want_list) {
    int64_t stack_out[OUT_CAP];
    int64_t *outs = stack_out;
    int32_t cap = OUT_CAP, n = 0, st;
    const wt_attr *attrs = c->n_attrs ? c->attrs : NULL;
    for (;;) {
        Py_BEGIN_ALLOW_THREADS
        st = op_fn(name, c->in, c->k, attrs, c->n_attrs, outs, cap, &n);
        Py_END_ALLOW_THREADS
        if (st == WT_ERR_BUFFER_TOO_SMALL && n > cap) { /* as run_op: grow and ask again */
            if (outs != stack_out) {
                free(outs);
            }
            cap = n;
            outs = malloc(sizeof(int64_t) * (size_t)cap);
            if (outs == NULL) {
                free_temps(c);
                return PyErr_NoMemory();
            }
            continue;
        }
        break;
    }
    PyObject *result = NULL;
    if (st != 0) {
        PyObject *r = PyObject_CallFunction(check_fn, "i", (int)st); /* reads the message, raises */
        Py_XDECREF(r);
        if (r != NULL) {
            PyErr_Format(PyExc_RuntimeError, "wt_op %s failed with status %d", name, (int)st);
        }
        goto done;
    }
    if (want_list && (result = PyList_New(n)) == NULL) {
        goto done;
    }
    for (int32_t i = 0; i < n; i++) {
        PyObject *t = wrap(outs[i]);
        if (t == NULL) {
            for (int32_t j = i + (want_list ? 0 : 1); j < n; j++) {
                free_fn(outs[j]); /* nobody else will own them */
            }
            Py_CLEAR(result);
            goto done;
        }
        if (want_list) {
            PyList_SET_ITEM(result, i, t);
        } else if (i == 0) {
            result = t;
        } else {
            Py_DECREF(t);
        }
    }
    if (!want_list && n == 0) {
        PyErr_SetString(PyExc_IndexError, "list index out of range"); /* run_op(...)[0] on no outputs */
    }
done:
    free_temps(c);
    if (outs != stack_out) {
        free(outs);
    }
    return result;
}

/* ---- run_op and op1 -----------------------------------------------------------
 * Runner(fallback, first) is what _tensor.run_op (first=False: the list of
 * outputs) and _tensor.op1 (first=True: the first output) are when this
 * module is present: run_op(name, inputs, attrs=(), like=None) in C, with
 * fallback, the Python function, for any call it does not take. */

typedef struct {
    PyObject_HEAD
    PyObject *fallback;
    int first;
    vectorcallfunc vectorcall;
} Runner;

static PyObject *runner_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Runner *r = (Runner *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && n >= 2 && n <= 4 && PyUnicode_CheckExact(args[0]) &&
        (PyList_CheckExact(args[1]) || PyTuple_CheckExact(args[1]))) {
        const char *name = PyUnicode_AsUTF8(args[0]);
        call_t c;
        c.n_temps = 0;
        if (name == NULL) {
            PyErr_Clear();
        } else if (prepare_attrs(&c, n > 2 ? args[2] : NULL) == 0 &&
                   prepare_inputs(&c, PySequence_Fast_ITEMS(args[1]), PySequence_Fast_GET_SIZE(args[1]),
                                  n > 3 ? args[3] : NULL) == 0) {
            return run_call(&c, name, !r->first);
        }
    }
    return PyObject_Vectorcall(r->fallback, args, nargsf, kwnames);
}

static PyObject *runner_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *fallback;
    int first;
    static char *kwlist[] = {"fallback", "first", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Op:Runner", kwlist, &fallback, &first)) {
        return NULL;
    }
    Runner *r = (Runner *)type->tp_alloc(type, 0);
    if (r == NULL) {
        return NULL;
    }
    Py_INCREF(fallback);
    r->fallback = fallback;
    r->first = first;
    r->vectorcall = runner_vectorcall;
    return (PyObject *)r;
}

static void runner_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    Py_CLEAR(((Runner *)self)->fallback);
    Py_TYPE(self)->tp_free(self);
}

static int runner_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(((Runner *)self)->fallback);
    return 0;
}

static PyMemberDef runner_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(Runner, fallback), READONLY, "the pure-Python function"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject RunnerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "webtensor._fast.Runner",
    .tp_basicsize = sizeof(Runner),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "run_op(name, inputs, attrs=(), like=None) in C, else the Python fallback.",
    .tp_new = runner_new,
    .tp_dealloc = runner_dealloc,
    .tp_traverse = runner_traverse,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Runner, vectorcall),
    .tp_members = runner_members,
};

/* ---- operator methods -------------------------------------------------------
 * Method(op, reflected, fallback, arity=2) is what Tensor.__add__, __neg__
 * and friends are when this module is present. Like a Python function it is
 * a method descriptor, so `a + b` calls it unbound with (a, b) and no
 * bound-method object or Python frame is made. A live Tensor (with another,
 * or with a Python scalar) goes straight to wt_op; anything else, including
 * a wrong number of arguments, goes to fallback, the pure-Python method. */

typedef struct {
    PyObject_HEAD
    PyObject *op;     /* the op name (str) */
    const char *name; /* its UTF-8, owned by op */
    int reflected;
    int arity; /* 1 (unary) or 2 (binary) */
    PyObject *fallback;
    vectorcallfunc vectorcall;
} Method;

static PyObject *method_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Method *m = (Method *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n == m->arity && kwnames == NULL && handle_of(args[0]) != 0) {
        call_t c;
        c.n_temps = c.n_attrs = 0;
        if (n == 1) {
            c.k = 1;
            c.in[0] = handle_of(args[0]);
            return run_call(&c, m->name, 0);
        }
        PyObject *items[2] = {m->reflected ? args[1] : args[0], m->reflected ? args[0] : args[1]};
        if (prepare_inputs(&c, items, 2, args[0]) == 0) {
            return run_call(&c, m->name, 0);
        }
    }
    return PyObject_Vectorcall(m->fallback, args, nargsf, kwnames);
}

static PyObject *method_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *op, *fallback;
    int reflected, arity = 2;
    static char *kwlist[] = {"op", "reflected", "fallback", "arity", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "UpO|i:Method", kwlist, &op, &reflected, &fallback, &arity)) {
        return NULL;
    }
    if (arity != 1 && arity != 2) {
        PyErr_SetString(PyExc_ValueError, "Method: arity is 1 or 2");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(op);
    if (name == NULL) {
        return NULL;
    }
    Method *m = (Method *)type->tp_alloc(type, 0);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(op);
    Py_INCREF(fallback);
    m->op = op;
    m->name = name;
    m->reflected = reflected;
    m->arity = arity;
    m->fallback = fallback;
    m->vectorcall = method_vectorcall;
    return (PyObject *)m;
}

static void method_dealloc(PyObject *self) {
    Method *m = (Method *)self;
    PyObject_GC_UnTrack(self);
    Py_CLEAR(m->op);
    Py_CLEAR(m->fallback);
    Py_TYPE(self)->tp_free(self);
}

static int method_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(((Method *)self)->fallback);
    return 0;
}

static PyObject *method_get(PyObject *self, PyObject *obj, PyObject *type) {
    (void)type;
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *method_repr(PyObject *self) {
    Method *m = (Method *)self;
    return PyUnicode_FromFormat("<webtensor operator %U%s>", m->op, m->reflected ? " (reflected)" : "");
}

static PyMemberDef method_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(Method, fallback), READONLY, "the pure-Python method"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject MethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "webtensor._fast.Method",
    .tp_basicsize = sizeof(Method),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A Tensor operator method: wt_op for a live Tensor and a Tensor or scalar, else the Python fallback.",
    .tp_new = method_new,
    .tp_dealloc = method_dealloc,
    .tp_traverse = method_traverse,
    .tp_descr_get = method_get,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Method, vectorcall),
    .tp_repr = method_repr,
    .tp_members = method_members,
};

/* ---- Tensor.__del__ ----------------------------------------------------------- */

/* Frees the handle of a Tensor being collected. As the Python __del__ did,
 * a failure is ignored: there is nobody to tell. */
static PyObject *tensor_del(PyObject *self, PyObject *unused) {
    (void)unused;
    PyObject *h = *(PyObject **)((char *)self + off_h);
    if (h != NULL && PyLong_CheckExact(h)) {
        long long v = PyLong_AsLongLong(h);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
        } else if (v != 0) {
            free_fn((int64_t)v);
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef tensor_del_def = {"__del__", tensor_del, METH_NOARGS, "Free the native handle."};

/* Tensor's tp_finalize, set by direct_finalizer: what CPython's generic
 * slot for a Python __del__ does (look the method up, call it, keep the
 * pending exception) without the lookup and the call, a fifth of the
 * Python side of a small op. The pending exception, if any, is kept: a
 * tensor may die while one propagates. */
static void tensor_finalize(PyObject *self) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    Py_XDECREF(tensor_del(self, NULL));
    PyErr_Restore(type, value, tb);
}

/* ---- module ---------------------------------------------------------------------- */

static Py_ssize_t slot_offset(PyTypeObject *type, const char *name) {
    PyObject *d = PyDict_GetItemString(type->tp_dict, name);
    if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "_fast: %s.%s is not a __slots__ member", type->tp_name, name);
        return -1;
    }
    PyMemberDef *def = ((PyMemberDescrObject *)d)->d_member;
    if (def->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "_fast: %s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    return def->offset;
}

static void *address(PyObject *funcs, const char *name) {
    PyObject *v = PyDict_GetItemString(funcs, name);
    void *p = v != NULL ? PyLong_AsVoidPtr(v) : NULL;
    if (p == NULL && !PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, "_fast.init: no address for %s", name);
    }
    return p;
}

/* init(addresses, Tensor, check, wrap, to_dtype) -> the method descriptor to
 * install as Tensor.__del__. addresses maps wt_op, wt_tensor_free,
 * wt_tensor_dtype, wt_tensor_device and wt_tensor_from_data to their
 * addresses in the loaded library. */
static PyObject *fast_init(PyObject *mod, PyObject *args) {
    (void)mod;
    PyObject *funcs, *type, *check, *wrapf, *to_dtype;
    if (!PyArg_ParseTuple(args, "O!O!OOO:init", &PyDict_Type, &funcs, &PyType_Type, &type, &check, &wrapf,
                          &to_dtype)) {
        return NULL;
    }
    void *op = address(funcs, "wt_op"), *fr = address(funcs, "wt_tensor_free");
    void *dt = address(funcs, "wt_tensor_dtype"), *dev = address(funcs, "wt_tensor_device");
    void *fd = address(funcs, "wt_tensor_from_data");
    if (!op || !fr || !dt || !dev || !fd) {
        return NULL;
    }
    Py_ssize_t h = slot_offset((PyTypeObject *)type, "_h");
    Py_ssize_t keep = slot_offset((PyTypeObject *)type, "_keep");
    if (h < 0 || keep < 0) {
        return NULL;
    }
    PyObject *del = PyDescr_NewMethod((PyTypeObject *)type, &tensor_del_def);
    if (del == NULL) {
        return NULL;
    }
    op_fn = (wt_op_fn)op;
    free_fn = (wt_free_fn)fr;
    dtype_fn = (wt_dtype_fn)dt;
    device_fn = (wt_device_fn)dev;
    from_data_fn = (wt_from_data_fn)fd;
    off_h = h;
    off_keep = keep;
    Py_INCREF(type);
    Py_XSETREF(tensor_type, (PyTypeObject *)type);
    Py_INCREF(check);
    Py_XSETREF(check_fn, check);
    Py_INCREF(wrapf);
    Py_XSETREF(wrap_fn, wrapf);
    Py_INCREF(to_dtype);
    Py_XSETREF(to_dtype_fn, to_dtype);
    return del;
}

/* direct_finalizer(): after Tensor.__del__ is set to init's method, makes
 * Tensor's finalizer call it directly (tensor_finalize). Assigning
 * Tensor.__del__ again puts CPython's generic slot back; subclasses keep the
 * generic slot, which finds the same method. */
static PyObject *fast_direct_finalizer(PyObject *mod, PyObject *unused) {
    (void)mod;
    (void)unused;
    if (tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_fast.direct_finalizer before init");
        return NULL;
    }
    tensor_type->tp_finalize = tensor_finalize;
    PyType_Modified(tensor_type);
    Py_RETURN_NONE;
}

/* scope_entered(+1 or -1): wt.scope keeps the count, so outputs made while
 * any scope is open go through Tensor._wrap and land on the right stack. */
static PyObject *fast_scope_entered(PyObject *mod, PyObject *arg) {
    (void)mod;
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred()) {
        return NULL;
    }
    open_scopes += d;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"init", fast_init, METH_VARARGS, "Bind to the loaded library and the Tensor class."},
    {"scope_entered", fast_scope_entered, METH_O, "Count wt.scope blocks (+1 on enter, -1 on exit)."},
    {"direct_finalizer", fast_direct_finalizer, METH_NOARGS, "Finalize Tensors by init's __del__ without a method call."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "webtensor._fast", "The per-op hot path of the Python SDK in C (optional).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fast(void) {
    if (PyType_Ready(&MethodType) < 0 || PyType_Ready(&RunnerType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Method", (PyObject *)&MethodType) < 0 ||
        PyModule_AddObjectRef(m, "Runner", (PyObject *)&RunnerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
