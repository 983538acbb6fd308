//go:build js && wasm

package main

import (
	"syscall/js"

	"github.com/webtensor/webtensor/abi"
)

// ONNX models (abi/onnx.go, abi/onnx_values.go) as the bridge takes them:
// bytes, since the page has no file system; a run's names as an array of
// strings beside its array of handles; wt_onnx_run_values's flat array of
// handles beside its layout string.

// onnxLoadBytes(bytes: Uint8Array, device) -> model handle
func onnxLoadBytes(a args) (any, error) {
	raw, err := a.bytes(0, "bytes", nil)
	if err != nil {
		return nil, err
	}
	d, err := a.optStr(1, "device")
	if err != nil {
		return nil, err
	}
	return abi.OnnxAdoptBytes(raw, d) // raw is the bridge's own copy of the page's bytes
}

// onnxNameAt is wt_onnx_input_name or wt_onnx_output_name: (model, index) -> name.
func onnxNameAt(outputs bool) call {
	what := "input"
	if outputs {
		what = "output"
	}
	return func(a args) (any, error) {
		m, err := a.int(0, "model handle")
		if err != nil {
			return nil, err
		}
		i, err := a.int(1, "index")
		if err != nil {
			return nil, err
		}
		names, err := abi.OnnxNames(m, outputs)
		if err != nil {
			return nil, err
		}
		return abi.NameAt(names, int(i), what)
	}
}

// onnxCount is wt_onnx_input_count or wt_onnx_output_count.
func onnxCount(outputs bool) call {
	return ofHandle(func(m int64) (int, error) {
		names, err := abi.OnnxNames(m, outputs)
		return len(names), err
	})
}

// onnxRun(model, names: string[], inputs: handles) -> handles in output order
func onnxRun(a args) (any, error) {
	m, err := a.int(0, "model handle")
	if err != nil {
		return nil, err
	}
	v, err := a.at(1, "names")
	if err != nil {
		return nil, err
	}
	if !isArray(v) {
		return nil, abi.Invalidf("names must be an array, got %s", v.Type())
	}
	if err := abi.CheckCount("names: count", int64(v.Length()), abi.MaxInputs); err != nil {
		return nil, err
	}
	names := make([]string, v.Length())
	for i := range names {
		s := v.Index(i)
		if s.Type() != js.TypeString {
			return nil, abi.Invalidf("names[%d] must be a string, got %s", i, s.Type())
		}
		names[i] = s.String()
	}
	ins, err := a.ints(2, "inputs")
	if err != nil {
		return nil, err
	}
	outs, err := abi.OnnxRun(m, names, ins, a.noGrad)
	if err != nil {
		return nil, err
	}
	return handleList(outs), nil
}

// onnxRunValues(model, tensors: handles, layout: string) -> values handle:
// wt_onnx_run_values, the tensors flat and the JSON layout grouping them.
func onnxRunValues(a args) (any, error) {
	r := a.reader()
	m := r.int(0, "model handle")
	tensors := r.ints(1, "tensors")
	layout := r.str(2, "layout_json")
	return r.then(func() (any, error) { return abi.OnnxRunValues(m, tensors, layout, a.noGrad) })
}

// onnxValuesTensors(values) -> the held outputs' tensors as new handles.
func onnxValuesTensors(a args) (any, error) {
	v, err := a.handle(0)
	if err != nil {
		return nil, err
	}
	outs, err := abi.OnnxValuesTensors(v)
	if err != nil {
		return nil, err
	}
	return handleList(outs), nil
}
