package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
	"github.com/webtensor/webtensor/core"
)

// parseLayout reads a constructor's C arguments: the shape array is
// checked for its count and pointer here, everything else in abi.
func parseLayout(dtype C.int32_t, shape *C.int64_t, ndim C.int32_t, device *C.char) (abi.Layout, error) {
	if _, err := abi.ParseDType(int64(dtype)); err != nil {
		return abi.Layout{}, err
	}
	if err := abi.CheckCount("ndim", int64(ndim), abi.MaxRank); err != nil {
		return abi.Layout{}, err
	}
	if ndim > 0 && shape == nil {
		return abi.Layout{}, abi.Invalidf("shape is NULL but ndim is %d", int(ndim))
	}
	var dims []int64
	if ndim > 0 {
		dims = unsafe.Slice((*int64)(unsafe.Pointer(shape)), int(ndim))
	}
	name, _ := goString(device)
	return abi.ParseLayout(int64(dtype), dims, name)
}

// setHandle writes a new handle or fails with err.
func setHandle(h int64, err error, out *C.wt_tensor) C.int32_t {
	if err != nil {
		return fail(err)
	}
	*out = C.wt_tensor(h)
	return statusOK
}

//export wt_tensor_from_data
func wt_tensor_from_data(data unsafe.Pointer, nbytes C.size_t, dtype C.int32_t, shape *C.int64_t, ndim C.int32_t, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_tensor_from_data: out is NULL")
	}
	l, err := parseLayout(dtype, shape, ndim, device)
	if err != nil {
		return fail(err)
	}
	want, err := l.DataSize(uint64(nbytes))
	if err != nil {
		return fail(err)
	}
	if data == nil && want > 0 {
		return invalid("wt_tensor_from_data: data is NULL for %d bytes", want)
	}
	var raw []byte
	if want > 0 {
		raw = unsafe.Slice((*byte)(data), want)
	}
	h, err := abi.TensorFromData(l, raw)
	return setHandle(h, err, out)
}

//export wt_tensor_zeros
func wt_tensor_zeros(dtype C.int32_t, shape *C.int64_t, ndim C.int32_t, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_tensor_zeros: out is NULL")
	}
	l, err := parseLayout(dtype, shape, ndim, device)
	if err != nil {
		return fail(err)
	}
	h, err := abi.TensorZeros(l)
	return setHandle(h, err, out)
}

//export wt_tensor_retain
func wt_tensor_retain(t C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return done(abi.TensorRetain(int64(t)))
}

//export wt_tensor_free
func wt_tensor_free(t C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	return done(abi.TensorFree(int64(t)))
}

//export wt_live_tensors
func wt_live_tensors(count *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	if count == nil {
		return invalid("wt_live_tensors: count is NULL")
	}
	*count = C.int64_t(abi.LiveTensors())
	return statusOK
}

// get writes what f returns through out, which is checked first; fn names
// the call in the error.
func get[T, R any](fn string, out *T, f func() (R, error), conv func(R) T) C.int32_t {
	if out == nil {
		return invalid("%s: output pointer is NULL", fn)
	}
	v, err := f()
	if err != nil {
		return fail(err)
	}
	*out = conv(v)
	return statusOK
}

func bool32(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}

// tensorHandle makes an abi call taking a handle from a C one.
func tensorHandle[R any](f func(int64) (R, error), h C.wt_tensor) func() (R, error) {
	return func() (R, error) { return f(int64(h)) }
}

//export wt_tensor_ndim
func wt_tensor_ndim(h C.wt_tensor, ndim *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_tensor_ndim", ndim, tensorHandle(abi.TensorNDim, h), func(n int) C.int32_t { return C.int32_t(n) })
}

//export wt_tensor_numel
func wt_tensor_numel(h C.wt_tensor, numel *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_tensor_numel", numel, tensorHandle(abi.TensorNumel, h), func(n int) C.int64_t { return C.int64_t(n) })
}

//export wt_tensor_dtype
func wt_tensor_dtype(h C.wt_tensor, dtype *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_tensor_dtype", dtype, tensorHandle(abi.TensorDType, h), func(d core.DType) C.int32_t { return C.int32_t(d) })
}

//export wt_tensor_is_contiguous
func wt_tensor_is_contiguous(h C.wt_tensor, contiguous *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_tensor_is_contiguous", contiguous, tensorHandle(abi.TensorIsContiguous, h), bool32)
}

// writeInts copies extents into a caller array of capacity elements.
func writeInts(vals []int, err error, dst *C.int64_t, capacity C.int32_t, what string) C.int32_t {
	if err != nil {
		return fail(err)
	}
	if dst == nil && capacity > 0 {
		return invalid("%s: buffer is NULL but capacity is %d", what, int(capacity))
	}
	if int(capacity) < len(vals) {
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "%s: capacity %d is too small for %d dimensions", what, int(capacity), len(vals)))
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
	s, err := abi.TensorShape(int64(h))
	return writeInts(s, err, shape, capacity, "wt_tensor_shape")
}

//export wt_tensor_strides
func wt_tensor_strides(h C.wt_tensor, strides *C.int64_t, capacity C.int32_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.TensorStrides(int64(h))
	return writeInts(s, err, strides, capacity, "wt_tensor_strides")
}

//export wt_tensor_device
func wt_tensor_device(h C.wt_tensor, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	d, err := abi.TensorDevice(int64(h))
	return writeResult(d, err, buf, capacity, needed)
}

//export wt_tensor_to_host
func wt_tensor_to_host(h C.wt_tensor, dst unsafe.Pointer, capacity C.size_t) (status C.int32_t) {
	defer guard(&status)
	n, err := abi.TensorHostSize(int64(h))
	if err != nil {
		return fail(err)
	}
	if dst == nil && capacity > 0 {
		return invalid("wt_tensor_to_host: dst is NULL but capacity is %d", uint64(capacity))
	}
	if int(capacity) < n {
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "wt_tensor_to_host: buffer of %d bytes is too small: %d needed", uint64(capacity), n))
	}
	raw, err := abi.TensorToHost(int64(h))
	if err != nil {
		return fail(err)
	}
	if n > 0 {
		copy(unsafe.Slice((*byte)(dst), n), raw)
	}
	return statusOK
}

//export wt_tensor_contiguous
func wt_tensor_contiguous(h C.wt_tensor, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_tensor_contiguous: output pointer is NULL")
	}
	r, err := abi.TensorContiguous(int64(h), threadNoGrad())
	return setHandle(r, err, out)
}

//export wt_tensor_to_device
func wt_tensor_to_device(h C.wt_tensor, device *C.char, out *C.wt_tensor) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_tensor_to_device: output pointer is NULL")
	}
	name, _ := goString(device)
	r, err := abi.TensorToDevice(int64(h), name, threadNoGrad())
	return setHandle(r, err, out)
}
