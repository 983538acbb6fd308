// C side of DLPack exchange. Go cannot call a C function pointer, and C
// must not keep Go pointers, so the deleters live here: an export's deleter
// hands the integer id in manager_ctx back to Go, and an import's release
// calls the producer's deleter through a trampoline.
#include <stdint.h>

#include "_cgo_export.h"

// The deleters of our exports. The consumer may call them from any thread;
// Go's cgo callback machinery attaches a foreign thread on demand.
static void wt_dlpack_export_deleter_versioned(DLManagedTensorVersioned *self) {
  if (self != NULL) {
    wt_internal_dlpack_release((int64_t)(intptr_t)self->manager_ctx);
  }
}

static void wt_dlpack_export_deleter(DLManagedTensor *self) {
  if (self != NULL) {
    wt_internal_dlpack_release((int64_t)(intptr_t)self->manager_ctx);
  }
}

// The export's id travels as an integer disguised as a pointer: Go code may
// not turn an integer into unsafe.Pointer without vet complaining, and C
// must never hold a real Go pointer.
__attribute__((visibility("hidden"))) void wt_internal_dlpack_init_export_versioned(DLManagedTensorVersioned *m, int64_t id) {
  m->manager_ctx = (void *)(intptr_t)id;
  m->deleter = wt_dlpack_export_deleter_versioned;
}

__attribute__((visibility("hidden"))) void wt_internal_dlpack_init_export(DLManagedTensor *m, int64_t id) {
  m->manager_ctx = (void *)(intptr_t)id;
  m->deleter = wt_dlpack_export_deleter;
}

// Trampolines that run an imported tensor's producer deleter (NULL means
// the producer has nothing to free).
__attribute__((visibility("hidden"))) void wt_internal_dlpack_call_deleter_versioned(DLManagedTensorVersioned *m) {
  if (m != NULL && m->deleter != NULL) {
    m->deleter(m);
  }
}

__attribute__((visibility("hidden"))) void wt_internal_dlpack_call_deleter(DLManagedTensor *m) {
  if (m != NULL && m->deleter != NULL) {
    m->deleter(m);
  }
}
