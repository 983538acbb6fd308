package main

// Go test files cannot use cgo, so the DLPack tests reach C types and C
// memory through these small helpers: a fake producer whose deleter counts
// its calls, and Go-typed wrappers around the exported functions.

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include "webtensor.h"

void wt_internal_dlpack_call_deleter_versioned(DLManagedTensorVersioned *m);
void wt_internal_dlpack_call_deleter(DLManagedTensor *m);

// A producer as a C library would make one. Both struct versions sit in one
// block so a test can import either; calls counts deleter runs.
typedef struct {
  DLManagedTensorVersioned v;
  DLManagedTensor l;
  int64_t calls;
  int32_t free_on_delete; // the deleter frees owned and the block (fuzzing)
  void *owned;
  int64_t shape[65];
  int64_t strides[65];
} wt_test_producer;

static void wt_test_deleted(wt_test_producer *p) {
  __atomic_fetch_add(&p->calls, 1, __ATOMIC_SEQ_CST);
  if (p->free_on_delete) {
    free(p->owned);
    free(p);
  }
}
static void wt_test_deleter_v(DLManagedTensorVersioned *self) { wt_test_deleted((wt_test_producer *)self); }
static void wt_test_deleter_l(DLManagedTensor *self) {
  wt_test_deleted((wt_test_producer *)((char *)self - offsetof(wt_test_producer, l)));
}
static void wt_test_set_deleters(wt_test_producer *p) {
  p->v.deleter = wt_test_deleter_v;
  p->l.deleter = wt_test_deleter_l;
}
static int64_t wt_test_calls(wt_test_producer *p) { return __atomic_load_n(&p->calls, __ATOMIC_SEQ_CST); }

// Runs an export's deleter on a thread Go has never seen.
static void *wt_test_thread_main(void *m) {
  wt_internal_dlpack_call_deleter_versioned((DLManagedTensorVersioned *)m);
  return NULL;
}
static int wt_test_delete_on_thread(DLManagedTensorVersioned *m) {
  pthread_t th;
  if (pthread_create(&th, NULL, wt_test_thread_main, m) != 0) return -1;
  return pthread_join(th, NULL);
}
*/
import "C"

import "unsafe"

// dlSpec is a DLPack struct in Go types. A nil Shape or Strides is a NULL
// pointer.
type dlSpec struct {
	Major, Minor   uint32
	Flags          uint64
	Data           unsafe.Pointer
	DeviceType     uint32
	DeviceID       int32
	Ndim           int32
	Code, Bits     uint8
	Lanes          uint16
	Shape, Strides []int64
	ByteOffset     uint64
	NoDeleter      bool
	FreeOnDelete   bool // the deleter frees Data and the producer
}

// newTestProducer writes spec into a fresh C producer (both versions).
func dlNewProducer(s dlSpec) unsafe.Pointer {
	p := (*C.wt_test_producer)(C.calloc(1, C.sizeof_wt_test_producer))
	dl := C.DLTensor{data: s.Data, ndim: C.int32_t(s.Ndim), byte_offset: C.uint64_t(s.ByteOffset),
		dtype: C.DLDataType{code: C.uint8_t(s.Code), bits: C.uint8_t(s.Bits), lanes: C.uint16_t(s.Lanes)}}
	dl.device.device_type = C.DLDeviceType(s.DeviceType)
	dl.device.device_id = C.int32_t(s.DeviceID)
	if s.Shape != nil {
		for i, v := range s.Shape[:min(len(s.Shape), 65)] {
			p.shape[i] = C.int64_t(v)
		}
		dl.shape = &p.shape[0]
	}
	if s.Strides != nil {
		for i, v := range s.Strides[:min(len(s.Strides), 65)] {
			p.strides[i] = C.int64_t(v)
		}
		dl.strides = &p.strides[0]
	}
	p.v.version.major, p.v.version.minor = C.uint32_t(s.Major), C.uint32_t(s.Minor)
	p.v.flags = C.uint64_t(s.Flags)
	p.v.dl_tensor, p.l.dl_tensor = dl, dl
	if !s.NoDeleter {
		C.wt_test_set_deleters(p)
	}
	if s.FreeOnDelete {
		p.free_on_delete, p.owned = 1, s.Data
	}
	return unsafe.Pointer(p)
}

// producerManaged is the struct of one version inside a test producer.
func dlProducerManaged(p unsafe.Pointer, versioned bool) unsafe.Pointer {
	if versioned {
		return unsafe.Pointer(&(*C.wt_test_producer)(p).v)
	}
	return unsafe.Pointer(&(*C.wt_test_producer)(p).l)
}

func dlProducerCalls(p unsafe.Pointer) int64 { return int64(C.wt_test_calls((*C.wt_test_producer)(p))) }

func dlCAlloc(n int) unsafe.Pointer { return C.calloc(1, C.size_t(max(n, 1))) }
func dlCFree(p unsafe.Pointer)      { C.free(p) }

// importDLPack calls wt_from_dlpack(_versioned); m may be nil, and noOut
// passes a NULL out.
func importDLPack(versioned bool, m unsafe.Pointer, noOut bool) (int64, int32) {
	var h C.wt_tensor
	out := &h
	if noOut {
		out = nil
	}
	var st C.int32_t
	if versioned {
		st = wt_from_dlpack_versioned((*C.DLManagedTensorVersioned)(m), out)
	} else {
		st = wt_from_dlpack((*C.DLManagedTensor)(m), out)
	}
	return int64(h), int32(st)
}

// exportDLPack calls wt_to_dlpack(_versioned).
func exportDLPack(versioned bool, h int64, noOut bool) (unsafe.Pointer, int32) {
	var st C.int32_t
	var m unsafe.Pointer
	if versioned {
		var out *C.DLManagedTensorVersioned
		p := &out
		if noOut {
			p = nil
		}
		st, m = wt_to_dlpack_versioned(C.wt_tensor(h), p), unsafe.Pointer(out)
	} else {
		var out *C.DLManagedTensor
		p := &out
		if noOut {
			p = nil
		}
		st, m = wt_to_dlpack(C.wt_tensor(h), p), unsafe.Pointer(out)
	}
	return m, int32(st)
}

// readManaged reads a managed struct back into Go types (ManagerCtx is the
// raw manager_ctx, an export id for ours).
func dlReadManaged(versioned bool, m unsafe.Pointer) (s dlSpec, managerCtx uintptr) {
	var dl *C.DLTensor
	if versioned {
		v := (*C.DLManagedTensorVersioned)(m)
		s.Major, s.Minor, s.Flags = uint32(v.version.major), uint32(v.version.minor), uint64(v.flags)
		dl, managerCtx = &v.dl_tensor, uintptr(v.manager_ctx)
	} else {
		l := (*C.DLManagedTensor)(m)
		dl, managerCtx = &l.dl_tensor, uintptr(l.manager_ctx)
	}
	s.Data, s.Ndim, s.ByteOffset = dl.data, int32(dl.ndim), uint64(dl.byte_offset)
	s.DeviceType, s.DeviceID = uint32(dl.device.device_type), int32(dl.device.device_id)
	s.Code, s.Bits, s.Lanes = uint8(dl.dtype.code), uint8(dl.dtype.bits), uint16(dl.dtype.lanes)
	if dl.shape != nil {
		s.Shape = int64s(unsafe.Slice(dl.shape, dl.ndim))
	}
	if dl.strides != nil {
		s.Strides = int64s(unsafe.Slice(dl.strides, dl.ndim))
	}
	return s, managerCtx
}

// callManagedDeleter runs m's deleter as a consumer would.
func dlCallDeleter(versioned bool, m unsafe.Pointer) {
	if versioned {
		C.wt_internal_dlpack_call_deleter_versioned((*C.DLManagedTensorVersioned)(m))
	} else {
		C.wt_internal_dlpack_call_deleter((*C.DLManagedTensor)(m))
	}
}

// deleteOnForeignThread runs a versioned export's deleter on a new pthread.
func dlDeleteOnForeignThread(m unsafe.Pointer) int {
	return int(C.wt_test_delete_on_thread((*C.DLManagedTensorVersioned)(m)))
}

// liveExports calls wt_live_dlpack_exports (nullOut passes NULL).
func dlLiveExports(nullOut bool) (int64, int32) {
	var n C.int64_t
	p := &n
	if nullOut {
		p = nil
	}
	st := wt_live_dlpack_exports(p)
	return int64(n), int32(st)
}

// dlpackLayout is the size and field offsets of the DLPack structs as cgo
// sees them, that is, as the C compiler laid them out.
func dlpackLayout() map[string]uintptr {
	var t C.DLTensor
	var l C.DLManagedTensor
	var v C.DLManagedTensorVersioned
	var d C.DLDataType
	return map[string]uintptr{
		"DLDevice": unsafe.Sizeof(C.DLDevice{}), "DLDataType": unsafe.Sizeof(d), "DLPackVersion": unsafe.Sizeof(C.DLPackVersion{}),
		"DLDataType.code": unsafe.Offsetof(d.code), "DLDataType.bits": unsafe.Offsetof(d.bits), "DLDataType.lanes": unsafe.Offsetof(d.lanes),
		"DLTensor": unsafe.Sizeof(t), "DLTensor.data": unsafe.Offsetof(t.data), "DLTensor.device": unsafe.Offsetof(t.device),
		"DLTensor.ndim": unsafe.Offsetof(t.ndim), "DLTensor.dtype": unsafe.Offsetof(t.dtype), "DLTensor.shape": unsafe.Offsetof(t.shape),
		"DLTensor.strides": unsafe.Offsetof(t.strides), "DLTensor.byte_offset": unsafe.Offsetof(t.byte_offset),
		"DLManagedTensor": unsafe.Sizeof(l), "DLManagedTensor.dl_tensor": unsafe.Offsetof(l.dl_tensor),
		"DLManagedTensor.manager_ctx": unsafe.Offsetof(l.manager_ctx), "DLManagedTensor.deleter": unsafe.Offsetof(l.deleter),
		"DLManagedTensorVersioned": unsafe.Sizeof(v), "DLManagedTensorVersioned.version": unsafe.Offsetof(v.version),
		"DLManagedTensorVersioned.manager_ctx": unsafe.Offsetof(v.manager_ctx), "DLManagedTensorVersioned.deleter": unsafe.Offsetof(v.deleter),
		"DLManagedTensorVersioned.flags": unsafe.Offsetof(v.flags), "DLManagedTensorVersioned.dl_tensor": unsafe.Offsetof(v.dl_tensor),
	}
}
