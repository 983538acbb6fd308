package main

/*
#cgo CFLAGS: -I${SRCDIR}/include -DWT_NO_PROTOTYPES
#include "webtensor.h"
*/
import "C"

import (
	"unsafe"

	"github.com/webtensor/webtensor/abi"
)

// Datasets and loaders (abi/data.go).

func setDataset(h int64, err error, out *C.wt_dataset) C.int32_t {
	if err != nil {
		return fail(err)
	}
	*out = C.wt_dataset(h)
	return statusOK
}

//export wt_dataset_open
func wt_dataset_open(spec *C.char, out *C.wt_dataset) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_dataset_open: out is NULL")
	}
	s, ok := goString(spec)
	if !ok {
		return invalid("wt_dataset_open: spec_json is NULL")
	}
	h, err := abi.DatasetOpen(s)
	return setDataset(h, err, out)
}

//export wt_dataset_open_bytes
func wt_dataset_open_bytes(spec *C.char, buf unsafe.Pointer, nbytes C.size_t, out *C.wt_dataset) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_dataset_open_bytes: out is NULL")
	}
	if buf == nil && nbytes > 0 {
		return invalid("wt_dataset_open_bytes: buf is NULL but nbytes is %d", uint64(nbytes))
	}
	s, ok := goString(spec)
	if !ok {
		return invalid("wt_dataset_open_bytes: spec_json is NULL")
	}
	var raw []byte
	if nbytes > 0 {
		raw = unsafe.Slice((*byte)(buf), int(nbytes)) // copied by abi.DatasetOpenBytes
	}
	h, err := abi.DatasetOpenBytes(s, raw)
	return setDataset(h, err, out)
}

//export wt_dataset_from_tensors
func wt_dataset_from_tensors(tensors *C.wt_tensor, names **C.char, n C.int32_t, out *C.wt_dataset) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_dataset_from_tensors: out is NULL")
	}
	hs, err := handles(tensors, n, "tensors", "n")
	if err != nil {
		return fail(abi.Prefix(err, "wt_dataset_from_tensors"))
	}
	var goNames []string
	if names != nil && n > 0 {
		for i, p := range unsafe.Slice(names, int(n)) {
			s, ok := goString(p)
			if !ok {
				return invalid("wt_dataset_from_tensors: names[%d] is NULL", i)
			}
			goNames = append(goNames, s)
		}
	}
	h, err := abi.DatasetFromTensors(hs, goNames)
	return setDataset(h, err, out)
}

//export wt_dataset_free
func wt_dataset_free(ds C.wt_dataset) (status C.int32_t) {
	defer guard(&status)
	return done(abi.DatasetFree(int64(ds)))
}

//export wt_dataset_len
func wt_dataset_len(ds C.wt_dataset, n *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_dataset_len", n, func() (int64, error) { return abi.DatasetLen(int64(ds)) },
		func(v int64) C.int64_t { return C.int64_t(v) })
}

//export wt_dataset_info_json
func wt_dataset_info_json(ds C.wt_dataset, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.DatasetInfoJSON(int64(ds))
	return writeResult(s, err, buf, capacity, needed)
}

// outputArgs checks the outputs triple every batch-returning call takes.
func outputArgs(fn string, outputs *C.wt_tensor, outCap C.int32_t, nOut *C.int32_t) error {
	if nOut == nil || (outputs == nil && outCap > 0) || outCap < 0 {
		return abi.Invalidf("%s: n_outputs is NULL, or outputs is NULL with out_cap %d", fn, int(outCap))
	}
	return nil
}

//export wt_dataset_get
func wt_dataset_get(ds C.wt_dataset, index C.int64_t, device *C.char, outputs *C.wt_tensor, outCap C.int32_t, nOut *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if err := outputArgs("wt_dataset_get", outputs, outCap, nOut); err != nil {
		return fail(err)
	}
	n, err := abi.DatasetFieldCount(int64(ds))
	if err != nil {
		return fail(err)
	}
	if int(outCap) < n { // checked before reading, which may decode an image
		*nOut = C.int32_t(n)
		return fail(abi.Errorf(abi.StatusBufferTooSmall, "wt_dataset_get: a record has %d tensors, out_cap is %d", n, int(outCap)))
	}
	d, _ := goString(device)
	res, err := abi.DatasetGet(int64(ds), int64(index), d)
	if err != nil {
		return fail(err)
	}
	return putHandles(res, outputs, outCap, nOut, "wt_dataset_get")
}

//export wt_loader_new
func wt_loader_new(ds C.wt_dataset, options *C.char, out *C.wt_loader) (status C.int32_t) {
	defer guard(&status)
	if out == nil {
		return invalid("wt_loader_new: out is NULL")
	}
	o, _ := goString(options)
	h, err := abi.LoaderNew(int64(ds), o)
	if err != nil {
		return fail(err)
	}
	*out = C.wt_loader(h)
	return statusOK
}

//export wt_loader_free
func wt_loader_free(l C.wt_loader) (status C.int32_t) {
	defer guard(&status)
	return done(abi.LoaderFree(int64(l)))
}

//export wt_loader_len
func wt_loader_len(l C.wt_loader, n *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	return get("wt_loader_len", n, func() (int64, error) { return abi.LoaderLen(int64(l)) },
		func(v int64) C.int64_t { return C.int64_t(v) })
}

//export wt_loader_epoch
func wt_loader_epoch(l C.wt_loader, epoch C.int64_t) (status C.int32_t) {
	defer guard(&status)
	return done(abi.LoaderEpoch(int64(l), int64(epoch)))
}

//export wt_loader_next
func wt_loader_next(l C.wt_loader, outputs *C.wt_tensor, outCap C.int32_t, nOut *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if err := outputArgs("wt_loader_next", outputs, outCap, nOut); err != nil {
		return fail(err)
	}
	res, err := abi.LoaderNext(int64(l), int(outCap))
	if err != nil {
		if abi.StatusOf(err) == abi.StatusBufferTooSmall {
			if n, cerr := abi.LoaderFieldCount(int64(l)); cerr == nil {
				*nOut = C.int32_t(n)
			}
		}
		return fail(err)
	}
	return putHandles(res, outputs, outCap, nOut, "wt_loader_next")
}

//export wt_data_permutation
func wt_data_permutation(n C.int64_t, seed C.uint64_t, epoch C.int64_t, out *C.int64_t) (status C.int32_t) {
	defer guard(&status)
	if out == nil && n > 0 {
		return invalid("wt_data_permutation: out is NULL but n is %d", int64(n))
	}
	p, err := abi.DataPermutation(int64(n), uint64(seed), int64(epoch))
	if err != nil {
		return fail(err)
	}
	if n > 0 {
		copy(unsafe.Slice((*int64)(unsafe.Pointer(out)), int(n)), p)
	}
	return statusOK
}
