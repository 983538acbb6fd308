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

// ONNX models (abi/onnx.go): load, list the names, run with named inputs.

//export wt_onnx_load
func wt_onnx_load(path, device *C.char, out *C.wt_onnx) (status C.int32_t) {
	defer guard(&status)
	return loadNamed("wt_onnx_load", path, device, out, abi.OnnxLoad)
}

//export wt_onnx_load_bytes
func wt_onnx_load_bytes(buf unsafe.Pointer, nbytes C.size_t, device *C.char, out *C.wt_onnx) (status C.int32_t) {
	defer guard(&status)
	return loadFromBuffer("wt_onnx_load_bytes", buf, nbytes, device, out, abi.OnnxLoadBytes)
}

//export wt_onnx_free
func wt_onnx_free(m C.wt_onnx) (status C.int32_t) {
	defer guard(&status)
	return done(abi.OnnxFree(int64(m)))
}

func onnxCount(fn string, m C.wt_onnx, outputs bool, count *C.int32_t) C.int32_t {
	return get(fn, count, func() ([]string, error) { return abi.OnnxNames(int64(m), outputs) },
		func(n []string) C.int32_t { return C.int32_t(len(n)) })
}

func onnxName(m C.wt_onnx, outputs bool, index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) C.int32_t {
	names, err := abi.OnnxNames(int64(m), outputs)
	if err != nil {
		return fail(err)
	}
	what := "input"
	if outputs {
		what = "output"
	}
	name, err := abi.NameAt(names, int(index), what)
	return writeResult(name, err, buf, capacity, needed)
}

//export wt_onnx_input_count
func wt_onnx_input_count(m C.wt_onnx, count *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return onnxCount("wt_onnx_input_count", m, false, count)
}

//export wt_onnx_input_name
func wt_onnx_input_name(m C.wt_onnx, index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return onnxName(m, false, index, buf, capacity, needed)
}

//export wt_onnx_output_count
func wt_onnx_output_count(m C.wt_onnx, count *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	return onnxCount("wt_onnx_output_count", m, true, count)
}

//export wt_onnx_output_name
func wt_onnx_output_name(m C.wt_onnx, index C.int32_t, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	return onnxName(m, true, index, buf, capacity, needed)
}

//export wt_onnx_info_json
func wt_onnx_info_json(m C.wt_onnx, buf *C.char, capacity C.size_t, needed *C.size_t) (status C.int32_t) {
	defer guard(&status)
	s, err := abi.OnnxInfoJSON(int64(m))
	return writeResult(s, err, buf, capacity, needed)
}

//export wt_onnx_run
func wt_onnx_run(m C.wt_onnx, names **C.char, inputs *C.wt_tensor, n C.int32_t, outputs *C.wt_tensor, outCap C.int32_t, nOut *C.int32_t) (status C.int32_t) {
	defer guard(&status)
	if nOut == nil || (outputs == nil && outCap > 0) || outCap < 0 {
		return invalid("wt_onnx_run: n_outputs is NULL, or outputs is NULL with out_cap %d", int(outCap))
	}
	ins, err := handles(inputs, n, "inputs", "n_inputs")
	if err != nil {
		return fail(abi.Prefix(err, "wt_onnx_run"))
	}
	if n > 0 && names == nil {
		return invalid("wt_onnx_run: names is NULL but n_inputs is %d", int(n))
	}
	goNames := make([]string, len(ins))
	if n > 0 {
		for i, p := range unsafe.Slice(names, int(n)) {
			s, ok := goString(p)
			if !ok {
				return invalid("wt_onnx_run: names[%d] is NULL", i)
			}
			goNames[i] = s
		}
	}
	res, err := abi.OnnxRun(int64(m), goNames, ins, threadNoGrad())
	if err != nil {
		return fail(err)
	}
	return putHandles(res, outputs, outCap, nOut, "wt_onnx_run: the model")
}
