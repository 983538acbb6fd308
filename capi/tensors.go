package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/core"
)

// maxRank bounds ndim everywhere in the ABI (DLPack producers included).
const maxRank = 64

func parseDType(d C.int32_t) (core.DType, error) {
	dt := core.DType(d)
	if d < 0 || d > 255 || !dt.Valid() {
		return core.Invalid, invalid("unknown dtype code %d (valid: 1=f32 ... 11=bool, see wt_dtype)", int(d))
	}
	return dt, nil
}

func parseShape(shape *C.int64_t, ndim C.int32_t) (core.Shape, error) {
	if ndim < 0 || ndim > maxRank {
		return nil, invalid("ndim %d out of range (0..%d)", int(ndim), maxRank)
	}
	if ndim > 0 && shape == nil {
		return nil, invalid("shape is NULL but ndim is %d", int(ndim))
	}
	s := make(core.Shape, ndim)
	if ndim > 0 {
		for i, d := range unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(ndim)) {
			if d < 0 || d > 1<<40 {
				return nil, invalid("dimension %d of the shape is %d", i, d)
			}
			s[i] = int(d)
		}
	}
	if err := s.Validate(); err != nil {
		return nil, invalid("%v", err)
	}
	return s, nil
}

// parseDevice reads an optional device name; NULL or "" is the default.
func parseDevice(dev *C.char) ([]core.Device, error) {
	name, _ := goString(dev)
	if name == "" {
		return nil, nil
	}
	d, err := core.ParseDevice(name)
	if err != nil {
		return nil, invalid("%v", err)
	}
	if _, err := core.BackendFor(d); err != nil {
		return nil, errf(statusUnsupported, "device %q: %v", name, err)
	}
	return []core.Device{d}, nil
}

// output registers t (checking its sticky error) and writes the handle.
func output(t *core.Tensor, out *C.wt_tensor) C.int32_t {
	if err := t.Err(); err != nil {
		return fail(err)
	}
	*out = C.wt_tensor(newHandle(t, false))
	return statusOK
}

// layout is what both constructors validate: dtype, shape and device.
type layout struct {
	dtype core.DType
	shape core.Shape
	dev   []core.Device
}

func parseLayout(dtype C.int32_t, shape *C.int64_t, ndim C.int32_t, device *C.char) (layout, error) {
	d, err := parseDType(dtype)
	if err != nil {
		return layout{}, err
	}
	s, err := parseShape(shape, ndim)
	if err != nil {
		return layout{}, err
	}
	dev, err := parseDevice(device)
	return layout{dtype: d, shape: s, dev: dev}, err
}

//export wt_tensor_from_data
func wt_tensor_from_data(data unsafe.Pointer, nbytes C.size_t, dtype C.int32_t, shape *C.int64_t, ndim C.int32_t, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return fail(invalid("wt_tensor_from_data: out is NULL"))
	}
	l, err := parseLayout(dtype, shape, ndim, device)
	if err != nil {
		return fail(err)
	}
	want := l.shape.Numel() * l.dtype.Size()
	if int(nbytes) != want {
		return fail(invalid("data has %d bytes, shape %v of %s needs %d", uint64(nbytes), l.shape, l.dtype, want))
	}
	if data == nil && want > 0 {
		return fail(invalid("wt_tensor_from_data: data is NULL for %d bytes", want))
	}
	var raw []byte
	if want > 0 {
		raw = unsafe.Slice((*byte)(data), want)
	}
	return output(core.FromBytes(l.dtype, l.shape, raw, l.dev...), out)
}

//export wt_tensor_zeros
func wt_tensor_zeros(dtype C.int32_t, shape *C.int64_t, ndim C.int32_t, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return fail(invalid("wt_tensor_zeros: out is NULL"))
	}
	l, err := parseLayout(dtype, shape, ndim, device)
	if err != nil {
		return fail(err)
	}
	return output(core.Zeros(l.shape, l.dtype, l.dev...), out)
}

//export wt_tensor_retain
func wt_tensor_retain(t C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return done(retain(int64(t)))
}

//export wt_tensor_free
func wt_tensor_free(t C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return done(release(int64(t)))
}

//export wt_live_tensors
func wt_live_tensors(count *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	if count == nil {
		return fail(invalid("wt_live_tensors: count is NULL"))
	}
	*count = C.int64_t(liveHandles())
	return statusOK
}

// withTensor runs fn on a live handle's tensor after checking out != nil.
func withTensor(h C.wt_tensor, outNil bool, what string, fn func(t *core.Tensor) C.int32_t) C.int32_t {
	if outNil {
		return fail(invalid("%s: output pointer is NULL", what))
	}
	t, err := tensorOf(int64(h))
	if err != nil {
		return fail(err)
	}
	return fn(t)
}

//export wt_tensor_ndim
func wt_tensor_ndim(h C.wt_tensor, ndim *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, ndim == nil, "wt_tensor_ndim", func(t *core.Tensor) C.int32_t {
		*ndim = C.int32_t(t.Rank())
		return statusOK
	})
}

func writeInts(vals []int, dst *C.int64_t, capacity C.int32_t, what string) C.int32_t {
	if dst == nil && capacity > 0 {
		return fail(invalid("%s: buffer is NULL but capacity is %d", what, int(capacity)))
	}
	if int(capacity) < len(vals) {
		return fail(errf(statusBuffer, "%s: capacity %d is too small for %d dimensions", what, int(capacity), len(vals)))
	}
	if len(vals) > 0 {
		out := unsafe.Slice((*int64)(unsafe.Pointer(dst)), len(vals))
		for i, v := range vals {
			out[i] = int64(v)
		}
	}
	return statusOK
}

//export wt_tensor_shape
func wt_tensor_shape(h C.wt_tensor, shape *C.int64_t, capacity C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, false, "wt_tensor_shape", func(t *core.Tensor) C.int32_t {
		return writeInts(t.Shape(), shape, capacity, "wt_tensor_shape")
	})
}

//export wt_tensor_strides
func wt_tensor_strides(h C.wt_tensor, strides *C.int64_t, capacity C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, false, "wt_tensor_strides", func(t *core.Tensor) C.int32_t {
		return writeInts(t.Strides(), strides, capacity, "wt_tensor_strides")
	})
}

//export wt_tensor_numel
func wt_tensor_numel(h C.wt_tensor, numel *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, numel == nil, "wt_tensor_numel", func(t *core.Tensor) C.int32_t {
		*numel = C.int64_t(t.Numel())
		return statusOK
	})
}

//export wt_tensor_dtype
func wt_tensor_dtype(h C.wt_tensor, dtype *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, dtype == nil, "wt_tensor_dtype", func(t *core.Tensor) C.int32_t {
		*dtype = C.int32_t(t.DType())
		return statusOK
	})
}

//export wt_tensor_device
func wt_tensor_device(h C.wt_tensor, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, false, "wt_tensor_device", func(t *core.Tensor) C.int32_t {
		return writeString(t.Device().String(), buf, capacity, needed)
	})
}

//export wt_tensor_is_contiguous
func wt_tensor_is_contiguous(h C.wt_tensor, contiguous *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, contiguous == nil, "wt_tensor_is_contiguous", func(t *core.Tensor) C.int32_t {
		*contiguous = 0
		if t.IsContiguous() {
			*contiguous = 1
		}
		return statusOK
	})
}

//export wt_tensor_to_host
func wt_tensor_to_host(h C.wt_tensor, dst unsafe.Pointer, capacity C.size_t) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, false, "wt_tensor_to_host", func(t *core.Tensor) C.int32_t {
		n := t.Numel() * t.DType().Size()
		if dst == nil && capacity > 0 {
			return fail(invalid("wt_tensor_to_host: dst is NULL but capacity is %d", uint64(capacity)))
		}
		if int(capacity) < n {
			return fail(errf(statusBuffer, "wt_tensor_to_host: buffer of %d bytes is too small: %d needed", uint64(capacity), n))
		}
		raw, err := t.Bytes()
		if err != nil {
			return fail(err)
		}
		if n > 0 {
			copy(unsafe.Slice((*byte)(dst), n), raw)
		}
		return statusOK
	})
}

//export wt_tensor_contiguous
func wt_tensor_contiguous(h C.wt_tensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, out == nil, "wt_tensor_contiguous", func(t *core.Tensor) C.int32_t {
		var res *core.Tensor
		underThreadGrad(func() { res = t.Contiguous() })
		return outputShared(h, t, res, out)
	})
}

// outputShared is output for a result that may share src's storage (a
// contiguous or same-device tensor is returned as is): memory imported
// read-only stays read-only through the new handle, so exporting it again
// cannot hand out a writable view of it.
func outputShared(h C.wt_tensor, src, res *core.Tensor, out *C.wt_tensor) C.int32_t {
	if err := res.Err(); err != nil {
		return fail(err)
	}
	readOnly := false
	if e, err := lookup(int64(h)); err == nil && e.readOnly && res.Storage() == src.Storage() {
		readOnly = true
	}
	*out = C.wt_tensor(newHandle(res, readOnly))
	return statusOK
}

//export wt_tensor_to_device
func wt_tensor_to_device(h C.wt_tensor, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return withTensor(h, out == nil, "wt_tensor_to_device", func(t *core.Tensor) C.int32_t {
		name, _ := goString(device)
		if name == "" {
			return fail(invalid("wt_tensor_to_device: device is NULL or empty"))
		}
		dev, err := parseDevice(device)
		if err != nil {
			return fail(err)
		}
		var res *core.Tensor
		underThreadGrad(func() { res = t.To(dev[0]) })
		return outputShared(h, t, res, out)
	})
}
