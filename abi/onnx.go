package abi

import (
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/onnx"
)

// ONNX models (the onnx.* targets): the importer (package onnx) behind a handle, so
// every SDK loads and runs a model through the same Go code and sees the
// same errors; an SDK only turns its language's mapping of names to tensors
// into the two parallel lists onnxRun takes and zips the outputs with
// their names.

var onnxModels = newObjects[*onnx.Model]("onnx model")

// onnxLoad is onnx.load: the model at path, its weights on device ("":
// the default). External data files are read beside it.
func onnxLoad(path, device string) (int64, error) {
	if path == "" {
		return 0, Invalidf("onnx.load: path is NULL or empty")
	}
	opts, err := onnxOptions(device)
	if err != nil {
		return 0, err
	}
	m, err := onnx.Load(path, opts...)
	if err != nil {
		// The file system's refusals (the model or an external data file
		// missing, unreadable) are WT_ERR_IO; everything else the model's.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return 0, Errorf(StatusIO, "onnx.load: %v", err)
		}
		return 0, Invalidf("%s: %v", path, err)
	}
	return onnxModels.add(m), nil
}

// onnxLoadBytes is onnx.load: a serialized ModelProto. Without a
// file there is no directory to read external data from, so a model that
// has some is refused (by the importer, naming the tensor).
func onnxLoadBytes(data []byte, device string) (int64, error) { return onnxFromBytes(data, device) }

// onnxAdoptBytes is onnxLoadBytes for bytes the caller hands over (the
// browser bridge's copy of the page's Uint8Array): the CPU weights are
// slices of data (onnx.AdoptBytes), not a second copy of the model.
func onnxAdoptBytes(data []byte, device string) (int64, error) {
	return onnxFromBytes(data, device, onnx.AdoptBytes())
}

func onnxFromBytes(data []byte, device string, extra ...onnx.Option) (int64, error) {
	opts, err := onnxOptions(device)
	if err != nil {
		return 0, err
	}
	m, err := onnx.LoadBytes(data, append(opts, extra...)...)
	if err != nil {
		return 0, Invalidf("%v", err)
	}
	return onnxModels.add(m), nil
}

func onnxOptions(device string) ([]onnx.Option, error) {
	dev, err := parseDevice(device)
	if err != nil {
		return nil, err
	}
	if len(dev) == 0 {
		return nil, nil
	}
	return []onnx.Option{onnx.WithDevice(dev[0])}, nil
}

// onnxFree is onnx.free; tensors a run returned stay valid.
func onnxFree(h int64) error { return onnxModels.free(h) }

// onnxValue is one input or output in onnx.info: kind says
// whether it is a tensor, a sequence or an optional (onnxKindNames; dtype
// and shape then describe the tensors inside); a dim is a number, a
// symbolic name (ONNX's dim_param) or null (not declared). narrow names the declared ONNX element type when webtensor holds it
// widened in dtype (UINT16 in i32, FLOAT8E4M3FN in f32, ...), so a caller
// knows which values the model takes and returns there.
type onnxValue struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	DType  string `json:"dtype"`
	Narrow string `json:"narrow,omitempty"`
	Shape  []any  `json:"shape"`
}

// onnxInfoJSON is onnx.info: the opset, the device and the
// declared inputs and outputs.
func onnxInfoJSON(h int64) (string, error) {
	m, err := onnxModels.get(h)
	if err != nil {
		return "", err
	}
	values := func(infos []onnx.ValueInfo) []onnxValue {
		out := make([]onnxValue, len(infos))
		for i, vi := range infos {
			v := onnxValue{Name: vi.Name, Kind: onnxKindNames[vi.Kind], Narrow: vi.Narrow, Shape: []any{}}
			if vi.DType != core.Invalid {
				v.DType = vi.DType.String()
			}
			if vi.Dims == nil {
				v.Shape = nil // rank unknown
			}
			for _, d := range vi.Dims {
				switch {
				case d.Param != "":
					v.Shape = append(v.Shape, d.Param)
				case d.Size < 0:
					v.Shape = append(v.Shape, nil)
				default:
					v.Shape = append(v.Shape, d.Size)
				}
			}
			out[i] = v
		}
		return out
	}
	b, err := json.Marshal(map[string]any{"opset": m.Opset, "device": m.Device().String(),
		"inputs": values(m.Inputs), "outputs": values(m.Outputs)})
	return string(b), err
}

// onnxRun is onnx.run: the model on the tensors behind handles, each
// named by names[i] (an input, or an initializer the model lets a caller
// override); the outputs come in the model's output order.
func onnxRun(h int64, names []string, handles []int64, noGrad bool) (Outputs, error) {
	m, err := onnxModels.get(h)
	if err != nil {
		return Outputs{}, err
	}
	if len(names) != len(handles) {
		return Outputs{}, Invalidf("onnx.run: %d names for %d inputs", len(names), len(handles))
	}
	ins, err := resolveInputs(handles)
	if err != nil {
		return Outputs{}, Prefix(err, "onnx.run")
	}
	in := make(map[string]*core.Tensor, len(names))
	for i, name := range names {
		if ins.ts[i] == nil {
			return Outputs{}, Invalidf("onnx.run: input %d (%q) is handle 0", i, name)
		}
		if _, dup := in[name]; dup {
			return Outputs{}, Invalidf("onnx.run: input %q is given twice", name)
		}
		in[name] = ins.ts[i]
	}
	var res map[string]*core.Tensor
	underGrad(noGrad, func() { res, err = m.Run(in) })
	if err != nil {
		return Outputs{}, err
	}
	outs := make([]*core.Tensor, len(m.Outputs))
	for i, o := range m.Outputs {
		outs[i] = res[o.Name]
	}
	// An output may be an input passed through (an Identity graph): a
	// read-only import stays read-only under its new handle.
	return Outputs{ts: outs, readOnly: ins.readOnly}, nil
}
