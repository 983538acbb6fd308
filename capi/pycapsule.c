// A PyCapsule destructor for DLPack exports, in C. CPython calls a
// capsule's destructor when the capsule dies, which may be while the
// consumer's exception is pending: NumPy's from_dlpack drops the capsule
// after setting the BufferError that rejects it (a CUDA tensor, a bfloat16
// dtype). A destructor written in Python then cannot run a single bytecode
// (the pending exception surfaces in it, and the caller gets "returned NULL
// without setting an exception"), so the SDK passes this one instead. It
// sets the pending exception aside as CPython's own destructors do, and
// calls the CPython functions through pointers the SDK takes from the
// running interpreter, so the library links no Python.
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "include/webtensor.h"

typedef int (*wt_py_is_valid)(void *capsule, const char *name);
typedef void *(*wt_py_get_pointer)(void *capsule, const char *name);
typedef void (*wt_py_err_fetch)(void **type, void **value, void **traceback);
typedef void (*wt_py_err_restore)(void *type, void *value, void *traceback);

// Set once per process before the first capsule is made; read under the GIL.
static wt_py_is_valid wt_py_capsule_is_valid;
static wt_py_get_pointer wt_py_capsule_get_pointer;
static wt_py_err_fetch wt_py_fetch;
static wt_py_err_restore wt_py_restore;

void wt_set_error(const char *msg, size_t n);

// A consumer that takes the tensor renames the capsule to "used_*" and
// owns it; only a capsule still carrying its first name calls the deleter.
static void wt_py_dlpack_capsule_destructor(void *capsule) {
  void *type = NULL, *value = NULL, *traceback = NULL;
  wt_py_fetch(&type, &value, &traceback);
  if (wt_py_capsule_is_valid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = wt_py_capsule_get_pointer(capsule, "dltensor_versioned");
    if (m != NULL && m->deleter != NULL) {
      m->deleter(m);
    }
  } else if (wt_py_capsule_is_valid(capsule, "dltensor")) {
    DLManagedTensor *m = wt_py_capsule_get_pointer(capsule, "dltensor");
    if (m != NULL && m->deleter != NULL) {
      m->deleter(m);
    }
  }
  wt_py_restore(type, value, traceback);
}

int32_t wt_python_capsule_destructor(void *const python_api[4], void (**destructor)(void *)) {
  static const char missing[] = "wt_python_capsule_destructor: python_api must hold PyCapsule_IsValid, "
                                "PyCapsule_GetPointer, PyErr_Fetch and PyErr_Restore, and destructor must not be NULL";
  if (python_api == NULL || destructor == NULL || python_api[0] == NULL || python_api[1] == NULL ||
      python_api[2] == NULL || python_api[3] == NULL) {
    wt_set_error(missing, sizeof missing - 1);
    return WT_ERR_INVALID;
  }
  wt_py_capsule_is_valid = (wt_py_is_valid)python_api[0];
  wt_py_capsule_get_pointer = (wt_py_get_pointer)python_api[1];
  wt_py_fetch = (wt_py_err_fetch)python_api[2];
  wt_py_restore = (wt_py_err_restore)python_api[3];
  *destructor = wt_py_dlpack_capsule_destructor;
  return WT_OK;
}
