package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include <stdlib.h>
#include "webtensor.h"

void wt_internal_dlpack_init_export_versioned(DLManagedTensorVersioned *m, int64_t id);
void wt_internal_dlpack_init_export(DLManagedTensor *m, int64_t id);
void wt_internal_dlpack_call_deleter_versioned(DLManagedTensorVersioned *m);
void wt_internal_dlpack_call_deleter(DLManagedTensor *m);
*/
import "C"

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
)

// DLPack exchange, both ways, without copying CPU data.
//
// Export: the managed struct, shape and strides are one C.malloc block; data
// points at the tensor's storage, which is C memory (alloc.go). A table
// keyed by an integer id (stored in manager_ctx) keeps that storage alive
// until the consumer's deleter runs, however long after the handle is freed.
//
// Import: the producer's memory span is adopted as CPU storage
// (cpu.WrapHost); the storage calls the producer's deleter once, when it is
// released or collected. Everything is validated before anything is adopted,
// so on an error the caller still owns the struct.

var dlExports = struct {
	sync.Mutex
	next int64
	m    map[int64]dlExport
}{next: 1, m: map[int64]dlExport{}}

type dlExport struct {
	keep  core.Storage   // the shared memory; holding it defers its free
	block unsafe.Pointer // the C block of the managed struct, shape and strides
}

//export wt_to_dlpack_versioned
func wt_to_dlpack_versioned(h C.wt_tensor, out **C.DLManagedTensorVersioned) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_to_dlpack_versioned"
	if out == nil {
		return invalid("%s: out is NULL", fn)
	}
	plan, block, err := startExport(fn, h, C.sizeof_DLManagedTensorVersioned)
	if err != nil {
		return fail(err)
	}
	m := (*C.DLManagedTensorVersioned)(block)
	m.version.major = C.DLPACK_MAJOR_VERSION
	m.version.minor = C.DLPACK_MINOR_VERSION
	if plan.readOnly {
		m.flags |= C.DLPACK_FLAG_BITMASK_READ_ONLY
	}
	if plan.copied {
		m.flags |= C.DLPACK_FLAG_BITMASK_IS_COPIED
	}
	fillDLTensor(&m.dl_tensor, plan, block, C.sizeof_DLManagedTensorVersioned)
	C.wt_internal_dlpack_init_export_versioned(m, C.int64_t(registerExport(plan.t.Storage(), block)))
	*out = m
	return statusOK
}

//export wt_to_dlpack
func wt_to_dlpack(h C.wt_tensor, out **C.DLManagedTensor) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_to_dlpack"
	if out == nil {
		return invalid("%s: out is NULL", fn)
	}
	// The legacy struct has no flags: read-only and copied are not
	// expressible, as with every pre-1.0 producer.
	plan, block, err := startExport(fn, h, C.sizeof_DLManagedTensor)
	if err != nil {
		return fail(err)
	}
	m := (*C.DLManagedTensor)(block)
	fillDLTensor(&m.dl_tensor, plan, block, C.sizeof_DLManagedTensor)
	C.wt_internal_dlpack_init_export(m, C.int64_t(registerExport(plan.t.Storage(), block)))
	*out = m
	return statusOK
}

//export wt_live_dlpack_exports
func wt_live_dlpack_exports(count *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	if count == nil {
		return invalid("wt_live_dlpack_exports: count is NULL")
	}
	*count = C.int64_t(liveDLPackExports())
	return statusOK
}

// wt_internal_dlpack_release is what our exports' C deleters call; it is
// not part of the ABI (webtensor.h does not declare it). An unknown id (a
// second call of the same deleter) is ignored: a deleter has no way to
// report an error.
//
//export wt_internal_dlpack_release
func wt_internal_dlpack_release(id C.int64_t) {
	var status C.int32_t
	defer guard(&status)
	dlExports.Lock()
	e, ok := dlExports.m[int64(id)]
	delete(dlExports.m, int64(id))
	dlExports.Unlock()
	if ok {
		C.free(e.block)
	}
}

func liveDLPackExports() int {
	dlExports.Lock()
	defer dlExports.Unlock()
	return len(dlExports.m)
}

func registerExport(keep core.Storage, block unsafe.Pointer) int64 {
	dlExports.Lock()
	defer dlExports.Unlock()
	id := dlExports.next
	dlExports.next++
	dlExports.m[id] = dlExport{keep: keep, block: block}
	return id
}

type exportPlan struct {
	t        *core.Tensor  // on the CPU, its storage C memory; or on a GPU
	device   deviceStorage // t's storage when it is shared as device memory
	copied   bool
	readOnly bool
}

// planExport finds the tensor to hand out: t itself when its storage is C
// memory on the CPU, else a C-memory copy (a GPU tensor, or CPU storage in
// the Go heap, whose address C must not keep).
func planExport(fn string, h int64) (exportPlan, error) {
	t, readOnly, err := abi.Lookup(h)
	if err != nil {
		return exportPlan{}, err
	}
	if err := t.Err(); err != nil {
		return exportPlan{}, abi.Invalidf("%s: tensor %d carries an error: %v", fn, h, err)
	}
	if _, err := toDLDataType(t.DType()); err != nil {
		return exportPlan{}, abi.Errorf(abi.StatusUnsupported, "%s: %v", fn, err)
	}
	if ds, ok := t.Storage().(deviceStorage); ok && t.Device().Kind == "cuda" {
		// Device memory is shared as it is, once queued work on it is done,
		// so the consumer may read it on any stream.
		if err := abi.SyncDevice(t.Device()); err != nil {
			return exportPlan{}, fmt.Errorf("%s: tensor %d: %w", fn, h, err)
		}
		return exportPlan{t: t, device: ds, readOnly: readOnly}, nil
	}
	if t.Device().Kind == core.CPU.Kind && cpu.IsForeign(t.Storage()) {
		hs, ok := t.Storage().(core.HostStorage)
		if !ok {
			return exportPlan{}, abi.Errorf(abi.StatusInternal, "%s: CPU storage %T is not host memory", fn, t.Storage())
		}
		if hs.Host() == nil && t.Numel() > 0 {
			return exportPlan{}, abi.Invalidf("%s: tensor %d: %v", fn, h, core.ErrReleased)
		}
		return exportPlan{t: t, readOnly: readOnly}, nil
	}
	raw, err := t.Bytes() // waits for the device
	if err != nil {
		return exportPlan{}, fmt.Errorf("%s: reading tensor %d (%s): %w", fn, h, t.Device(), err)
	}
	c := core.FromBytes(t.DType(), t.Shape(), raw, core.CPU)
	if err := c.Err(); err != nil {
		return exportPlan{}, fmt.Errorf("%s: copying tensor %d to host memory: %w", fn, h, err)
	}
	if !cpu.IsForeign(c.Storage()) {
		return exportPlan{}, abi.Errorf(abi.StatusInternal, "%s: the CPU backend has no C host allocator", fn)
	}
	return exportPlan{t: c, copied: true, readOnly: readOnly}, nil
}

// startExport plans h's export (planExport) and allocates its C block:
// the managed struct (header bytes, zeroed) followed by the shape and
// strides arrays.
func startExport(fn string, h C.wt_tensor, header C.size_t) (exportPlan, unsafe.Pointer, error) {
	plan, err := planExport(fn, int64(h))
	if err != nil {
		return exportPlan{}, nil, err
	}
	size := header + C.size_t(2*8*plan.t.Rank())
	block := C.calloc(1, size)
	if block == nil {
		return exportPlan{}, nil, abi.Errorf(abi.StatusOutOfMemory, "%s: cannot allocate %d bytes for the DLPack struct", fn, int(size))
	}
	return plan, block, nil
}

// fillDLTensor describes the plan's tensor in dl; its shape and strides
// arrays follow the header in block.
func fillDLTensor(dl *C.DLTensor, plan exportPlan, block unsafe.Pointer, header C.size_t) {
	t := plan.t
	ndim := t.Rank()
	arrays := unsafe.Add(block, int(header))
	shape := unsafe.Slice((*C.int64_t)(arrays), 2*ndim)
	for i, d := range t.Shape() {
		shape[i] = C.int64_t(d)
	}
	for i, s := range t.Strides() {
		shape[ndim+i] = C.int64_t(s)
	}
	dl.shape = (*C.int64_t)(arrays)
	dl.strides = (*C.int64_t)(unsafe.Add(arrays, 8*ndim))
	dl.ndim = C.int32_t(ndim)
	dl.dtype, _ = toDLDataType(t.DType()) // planExport checked it
	if plan.device != nil {
		dl.device.device_type = C.kDLCUDA
		dl.device.device_id = C.int32_t(t.Device().Index)
		dl.data = unsafe.Add(unsafe.Pointer(nil), uintptr(plan.device.Pointer())) // device memory: never touched here
		dl.byte_offset = C.uint64_t(t.Offset() * t.DType().Size())
		return
	}
	dl.device.device_type = C.kDLCPU
	dl.device.device_id = 0
	host := t.Storage().(core.HostStorage).Host()
	if data := unsafe.SliceData(host); data != nil {
		dl.data = unsafe.Pointer(data)
		dl.byte_offset = C.uint64_t(t.Offset() * t.DType().Size())
	} else {
		// Empty storage: some consumers reject a NULL data pointer even
		// for zero elements, so point at memory that lives as long.
		dl.data = block
	}
}

// dlTypes pairs our dtypes with DLPack's (code, bits); lanes are always 1.
var dlTypes = []struct {
	d          core.DType
	code, bits uint8
}{
	{core.F32, C.kDLFloat, 32}, {core.F64, C.kDLFloat, 64}, {core.F16, C.kDLFloat, 16},
	{core.BF16, C.kDLBfloat, 16},
	{core.I64, C.kDLInt, 64}, {core.I32, C.kDLInt, 32}, {core.I16, C.kDLInt, 16}, {core.I8, C.kDLInt, 8},
	{core.U32, C.kDLUInt, 32}, {core.U8, C.kDLUInt, 8}, {core.U16, C.kDLUInt, 16}, {core.U64, C.kDLUInt, 64},
	{core.Bool, C.kDLBool, 8},
	{core.C64, C.kDLComplex, 64}, {core.C128, C.kDLComplex, 128},
}

func toDLDataType(d core.DType) (C.DLDataType, error) {
	for _, e := range dlTypes {
		if e.d == d {
			return C.DLDataType{code: C.uint8_t(e.code), bits: C.uint8_t(e.bits), lanes: 1}, nil
		}
	}
	return C.DLDataType{}, fmt.Errorf("dtype %s has no DLPack equivalent", d)
}

func fromDLDataType(dt C.DLDataType) (core.DType, error) {
	code, bits, lanes := uint8(dt.code), uint8(dt.bits), uint16(dt.lanes)
	if lanes == 1 {
		for _, e := range dlTypes {
			if e.code == code && e.bits == bits {
				return e.d, nil
			}
		}
	}
	return core.Invalid, fmt.Errorf("DLPack dtype %s (code %d) with %d bits and %d lanes is not supported "+
		"(webtensor has f32 f64 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8 bool c64 c128, one lane)", dlCodeName(code), code, bits, lanes)
}

var dlCodeNames = map[uint8]string{C.kDLInt: "kDLInt", C.kDLUInt: "kDLUInt", C.kDLFloat: "kDLFloat",
	C.kDLOpaqueHandle: "kDLOpaqueHandle", C.kDLBfloat: "kDLBfloat", C.kDLComplex: "kDLComplex", C.kDLBool: "kDLBool"}

func dlCodeName(code uint8) string {
	if n, ok := dlCodeNames[code]; ok {
		return n
	}
	if code >= C.kDLFloat8_e3m4 && code <= C.kDLFloat4_e2m1fn {
		return "float8/6/4"
	}
	return "unknown"
}

var dlDeviceNames = map[uint32]string{C.kDLCPU: "kDLCPU", C.kDLCUDA: "kDLCUDA", C.kDLCUDAHost: "kDLCUDAHost",
	C.kDLOpenCL: "kDLOpenCL", C.kDLVulkan: "kDLVulkan", C.kDLMetal: "kDLMetal", C.kDLVPI: "kDLVPI",
	C.kDLROCM: "kDLROCM", C.kDLROCMHost: "kDLROCMHost", C.kDLExtDev: "kDLExtDev",
	C.kDLCUDAManaged: "kDLCUDAManaged", C.kDLOneAPI: "kDLOneAPI", C.kDLWebGPU: "kDLWebGPU",
	C.kDLHexagon: "kDLHexagon", C.kDLMAIA: "kDLMAIA"}

//export wt_from_dlpack_versioned
func wt_from_dlpack_versioned(src *C.DLManagedTensorVersioned, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_from_dlpack_versioned"
	if src == nil || out == nil {
		return invalid("%s: src or out is NULL", fn)
	}
	// Only major 1 exists: a new major may change the struct's layout, and
	// 0 means the producer never filled the version in.
	if v := src.version; v.major != 1 {
		return fail(abi.Errorf(abi.StatusUnsupported, "%s: DLPack version %d.%d is not supported (want major version 1)", fn, v.major, v.minor))
	}
	readOnly := src.flags&C.DLPACK_FLAG_BITMASK_READ_ONLY != 0
	h, err := importDLTensor(fn, &src.dl_tensor, readOnly, func() { C.wt_internal_dlpack_call_deleter_versioned(src) })
	if err != nil {
		return fail(err)
	}
	*out = C.wt_tensor(h)
	return statusOK
}

//export wt_from_dlpack
func wt_from_dlpack(src *C.DLManagedTensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_from_dlpack"
	if src == nil || out == nil {
		return invalid("%s: src or out is NULL", fn)
	}
	h, err := importDLTensor(fn, &src.dl_tensor, false, func() { C.wt_internal_dlpack_call_deleter(src) })
	if err != nil {
		return fail(err)
	}
	*out = C.wt_tensor(h)
	return statusOK
}

// importDLTensor validates dl and adopts its memory; release (the
// producer's deleter) becomes the storage's to call, but only on success.
func importDLTensor(fn string, dl *C.DLTensor, readOnly bool, release func()) (int64, error) {
	if uint32(dl.device.device_type) == C.kDLCUDA {
		return importDeviceTensor(fn, dl, readOnly, release)
	}
	lay, err := readDLLayout(fn, dl, false)
	if err != nil {
		return 0, err
	}
	cpuBackend, err := core.BackendFor(core.CPU)
	if err != nil {
		return 0, err
	}
	// Nothing below can fail, so the deleter is ours only when we succeed.
	storage := cpu.WrapHost(lay.span, release)
	t := core.WrapStorage(cpuBackend, storage, lay.shape, lay.strides, lay.offset, lay.dtype)
	return abi.NewHandle(t, readOnly), nil
}

// dlLayout is a validated DLTensor: the bytes it may touch, and the view
// of them in elements.
type dlLayout struct {
	span    []byte
	shape   core.Shape
	strides []int
	offset  int
	dtype   core.DType
}

// readDLLayout checks every field a producer controls before any memory is
// touched.
func readDLLayout(fn string, dl *C.DLTensor, device bool) (dlLayout, error) {
	dev := uint32(dl.device.device_type)
	if dev != C.kDLCPU && dev != C.kDLCUDAHost && !(dev == C.kDLCUDA && device) {
		name, ok := dlDeviceNames[dev]
		if !ok {
			name = "unknown"
		}
		return dlLayout{}, abi.Errorf(abi.StatusUnsupported, "%s: DLPack device %s (device_type %d, device_id %d) is not supported; "+
			"kDLCPU, kDLCUDAHost and (with the CUDA backend) kDLCUDA tensors can be imported (copy it to the CPU first)", fn, name, dev, int32(dl.device.device_id))
	}
	dtype, err := fromDLDataType(dl.dtype)
	if err != nil {
		return dlLayout{}, abi.Errorf(abi.StatusUnsupported, "%s: %v", fn, err)
	}
	ndim := int(dl.ndim)
	if ndim < 0 || ndim > abi.MaxRank {
		return dlLayout{}, abi.Invalidf("%s: ndim %d is out of range 0..%d", fn, ndim, abi.MaxRank)
	}
	if ndim > 0 && dl.shape == nil {
		return dlLayout{}, abi.Invalidf("%s: shape is NULL with ndim %d", fn, ndim)
	}
	shape, err := readDLShape(fn, dl, ndim)
	if err != nil {
		return dlLayout{}, err
	}
	lay := dlLayout{shape: shape, dtype: dtype, strides: core.ContiguousStrides(shape)}
	numel := shape.Numel()
	if numel == 0 {
		// Nothing will be read: the data pointer and strides do not matter,
		// and a non-nil empty span keeps the storage from looking released.
		lay.span = unsafe.Slice((*byte)(unsafe.Pointer(dl)), 0)
		return lay, nil
	}
	if dl.data == nil {
		return dlLayout{}, abi.Invalidf("%s: data is NULL but shape %v has %d elements", fn, []int(shape), numel)
	}
	if dl.strides != nil {
		raw := unsafe.Slice((*C.int64_t)(dl.strides), ndim)
		for i := range raw {
			// A size-1 dimension is never stepped along, so its stride is
			// meaningless; keep the row-major one so later arithmetic never
			// sees a producer's arbitrary value.
			if shape[i] != 1 {
				lay.strides[i] = int(raw[i])
			}
		}
	}
	return finishSpan(fn, dl, lay)
}

// readDLShape copies and checks the extents: none negative, the element
// count within what a tensor can hold.
func readDLShape(fn string, dl *C.DLTensor, ndim int) (core.Shape, error) {
	shape := make(core.Shape, ndim)
	if ndim == 0 {
		return shape, nil
	}
	raw := unsafe.Slice((*C.int64_t)(dl.shape), ndim)
	for i, d := range raw {
		if d < 0 || int64(int(d)) != int64(d) {
			return nil, abi.Invalidf("%s: shape %v has a negative or oversized extent at dim %d", fn, int64s(raw), i)
		}
		shape[i] = int(d)
	}
	if err := shape.Validate(); err != nil {
		return nil, abi.Invalidf("%s: %v", fn, err)
	}
	return shape, nil
}

// finishSpan finds the lowest and highest element positions (strides may
// be negative or zero), checks the first element's alignment and that the
// address range does not wrap, and slices the span the tensor may touch.
// Positions are bounded by posLimit so that no sum or product here can
// overflow an int64.
func finishSpan(fn string, dl *C.DLTensor, lay dlLayout) (dlLayout, error) {
	size := int64(lay.dtype.Size())
	posLimit := int64(1<<61) / size
	var lo, hi int64
	for i, n := range lay.shape {
		if n <= 1 {
			continue
		}
		s := int64(lay.strides[i])
		steps := int64(n - 1)
		if s > posLimit/steps || s < -posLimit/steps {
			return dlLayout{}, abi.Invalidf("%s: stride %d of dim %d (extent %d) reaches beyond any addressable memory", fn, s, i, n)
		}
		if s > 0 {
			hi += s * steps
		} else {
			lo += s * steps
		}
		if hi > posLimit || lo < -posLimit {
			return dlLayout{}, abi.Invalidf("%s: strides %v with shape %v reach beyond any addressable memory", fn, lay.strides, []int(lay.shape))
		}
	}
	byteOffset := uint64(dl.byte_offset)
	base := uint64(uintptr(dl.data))
	if byteOffset > math.MaxInt64 || base+byteOffset < base {
		return dlLayout{}, abi.Invalidf("%s: byte_offset %d overflows the address space (data %p)", fn, byteOffset, dl.data)
	}
	first := base + byteOffset
	if first%uint64(size) != 0 {
		return dlLayout{}, abi.Invalidf("%s: the first element (data %p + byte_offset %d = 0x%x) is not aligned to the %d-byte size of %s",
			fn, dl.data, byteOffset, first, size, lay.dtype)
	}
	below := uint64(-lo * size) // bytes before the first element that negative strides reach
	spanBytes := uint64((hi - lo + 1) * size)
	if below > first || first-below == 0 || first-below+spanBytes < first-below || first-below+spanBytes == 0 {
		return dlLayout{}, abi.Invalidf("%s: data %p + byte_offset %d with strides %v and shape %v wraps around the address space",
			fn, dl.data, byteOffset, lay.strides, []int(lay.shape))
	}
	start := unsafe.Add(dl.data, int64(byteOffset)+lo*size)
	lay.span = unsafe.Slice((*byte)(start), int(spanBytes))
	lay.offset = int(-lo)
	return lay, nil
}

func int64s(raw []C.int64_t) []int64 {
	out := make([]int64, len(raw))
	for i, v := range raw {
		out[i] = int64(v)
	}
	return out
}

// deviceStorage is GPU storage shared through DLPack as device memory.
type deviceStorage interface {
	core.Storage
	Pointer() uint64
}

// importDeviceTensor adopts kDLCUDA memory as CUDA storage: nothing is
// read here; the CUDA backend checks that the address is its device's
// memory before wrapping it.
func importDeviceTensor(fn string, dl *C.DLTensor, readOnly bool, release func()) (int64, error) {
	lay, err := readDLLayout(fn, dl, true)
	if err != nil {
		return 0, err
	}
	d := core.Device{Kind: "cuda", Index: int(dl.device.device_id)}
	b, err := core.BackendFor(d)
	if err != nil {
		return 0, abi.Errorf(abi.StatusUnsupported, "%s: a kDLCUDA tensor on device %d, but %s does not open: %v", fn, int32(dl.device.device_id), d, err)
	}
	cb, ok := b.(*cuda.Backend)
	if !ok {
		return 0, abi.Errorf(abi.StatusInternal, "%s: backend of %s is %T", fn, d, b)
	}
	var addr uint64
	numel := len(lay.span) / lay.dtype.Size()
	if lay.shape.Numel() > 0 {
		addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(lay.span))))
	} else {
		numel = 0
	}
	storage, err := cb.WrapDevicePointer(addr, lay.dtype, numel, release)
	if err != nil {
		return 0, abi.Errorf(abi.StatusUnsupported, "%s: %v", fn, err)
	}
	t := core.WrapStorage(b, storage, lay.shape, lay.strides, lay.offset, lay.dtype)
	if t.Err() != nil {
		return 0, fmt.Errorf("%s: %w", fn, t.Err())
	}
	return abi.NewHandle(t, readOnly), nil
}
