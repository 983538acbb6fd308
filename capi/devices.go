package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/webtensor/webtensor/backends/cuda"
	"github.com/webtensor/webtensor/core"
)

// Devices beyond naming them: waiting for their queued work, what they are
// and how they use memory, their options, the CUDA stream DLPack exchange
// needs, and the count of ops that ran on the CPU instead of them.

// deviceStorage is GPU storage shared through DLPack as device memory.
type deviceStorage interface {
	core.Storage
	Pointer() uint64
}

// syncer is a backend whose work is queued (WebGPU, CUDA).
type syncer interface{ Sync() error }

func syncDevice(d core.Device) error {
	b, err := core.BackendFor(d)
	if err != nil {
		return err
	}
	if s, ok := b.(syncer); ok {
		return s.Sync()
	}
	return nil
}

func deviceArg(fn string, device *C.char) (core.Device, core.Backend, error) {
	name, ok := goString(device)
	if !ok {
		return core.Device{}, nil, invalid("%s: device is NULL", fn)
	}
	d, err := core.ParseDevice(name)
	if err != nil {
		return core.Device{}, nil, invalid("%s: %v", fn, err)
	}
	b, err := core.BackendFor(d)
	if err != nil {
		return core.Device{}, nil, errf(statusUnsupported, "%s: device %q: %v", fn, name, err)
	}
	return d, b, nil
}

//export wt_device_sync
func wt_device_sync(device *C.char) (status C.int32_t) {
	defer guard(&status)
	_, b, err := deviceArg("wt_device_sync", device)
	if err != nil {
		return fail(err)
	}
	if s, ok := b.(syncer); ok {
		if err := s.Sync(); err != nil {
			return fail(err)
		}
	}
	return statusOK
}

//export wt_device_info_json
func wt_device_info_json(device *C.char, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	d, b, err := deviceArg("wt_device_info_json", device)
	if err != nil {
		return fail(err)
	}
	caps := b.Capabilities()
	info := map[string]any{"device": d.String(), "description": caps.Description, "software": caps.Software,
		"fallbacks": core.FallbackCount(d)}
	if cb, ok := b.(*cuda.Backend); ok {
		info["cuda"] = cb.Info()
		info["memory"] = cb.MemoryStats()
		if free, total, err := cb.DeviceMemory(); err == nil {
			info["device_free_bytes"], info["device_total_bytes"] = free, total
		}
		info["allow_tf32"] = cb.AllowTF32()
	}
	out, err := json.Marshal(info)
	if err != nil {
		return fail(err)
	}
	return writeString(string(out), buf, capacity, needed)
}

//export wt_device_empty_cache
func wt_device_empty_cache(device *C.char) (status C.int32_t) {
	defer guard(&status)
	_, b, err := deviceArg("wt_device_empty_cache", device)
	if err != nil {
		return fail(err)
	}
	// Closed tensors free their storage in cleanups after a collection
	// (closed.go); collect first so memory the caller closed is returned too.
	runtime.GC()
	if cb, ok := b.(*cuda.Backend); ok {
		if err := cb.EmptyCache(); err != nil {
			return fail(err)
		}
	}
	return statusOK
}

//export wt_device_set_option
func wt_device_set_option(device *C.char, name *C.char, value C.int64_t) (status C.int32_t) {
	defer guard(&status)
	const fn = "wt_device_set_option"
	d, b, err := deviceArg(fn, device)
	if err != nil {
		return fail(err)
	}
	opt, ok := goString(name)
	if !ok {
		return fail(invalid("%s: name is NULL", fn))
	}
	cb, isCUDA := b.(*cuda.Backend)
	switch {
	case opt == "allow_tf32" && isCUDA:
		cb.SetAllowTF32(value != 0)
		return statusOK
	case opt == "allow_tf32":
		return fail(errf(statusUnsupported, "%s: allow_tf32 is a CUDA option; %s has no TF32 mode", fn, d))
	}
	return fail(invalid("%s: unknown option %q (known: allow_tf32)", fn, opt))
}

//export wt_device_stream
func wt_device_stream(device *C.char, stream *C.uint64_t) (status C.int32_t) {
	defer guard(&status)
	if stream == nil {
		return fail(invalid("wt_device_stream: stream is NULL"))
	}
	_, b, err := deviceArg("wt_device_stream", device)
	if err != nil {
		return fail(err)
	}
	*stream = 0
	if s, ok := b.(interface{ StreamHandle() uintptr }); ok {
		*stream = C.uint64_t(s.StreamHandle())
	}
	return statusOK
}

//export wt_fallbacks_json
func wt_fallbacks_json(reset C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	fb := core.Fallbacks()
	if fb == nil {
		fb = []core.Fallback{}
	}
	out, err := json.Marshal(fb)
	if err != nil {
		return fail(err)
	}
	st := writeString(string(out), buf, capacity, needed)
	if st == statusOK && reset != 0 {
		core.ResetFallbacks()
	}
	return st
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
		return 0, errf(statusUnsupported, "%s: a kDLCUDA tensor on device %d, but %s does not open: %v", fn, int32(dl.device.device_id), d, err)
	}
	cb, ok := b.(*cuda.Backend)
	if !ok {
		return 0, errf(statusInternal, "%s: backend of %s is %T", fn, d, b)
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
		return 0, errf(statusUnsupported, "%s: %v", fn, err)
	}
	t := core.WrapStorage(b, storage, lay.shape, lay.strides, lay.offset, lay.dtype)
	if t.Err() != nil {
		return 0, fmt.Errorf("%s: %w", fn, t.Err())
	}
	return newHandle(t, readOnly), nil
}
