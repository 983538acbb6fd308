package abi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/onnx"
)

// ONNX sequences and optionals across the ABI (onnx.run_values): the
// tensors travel as one flat list of handles and a JSON layout says how
// they group into values, {"x": 0, "parts": [1, 2], "maybe": null}: a
// tensor is its index in the list, a sequence the list of its tensors'
// indices, an empty optional null (an optional holding a value is written
// as that value). The outputs come back the same way, held behind a
// onnx.values handle until the caller has read them: a sequence's
// length is known only once the model has run, so a caller cannot size
// its arrays beforehand, and holding the results spares it running the
// model again to learn the sizes.

// onnxResult is a run's outputs: the layout naming each output's tensors
// in the flat list, which onnx.run_values hands out.
type onnxResult struct {
	layout string
	outs   Outputs
}

var onnxResults = newObjects[onnxResult]("onnx values")

// onnxKindNames are the kinds onnx.info writes.
var onnxKindNames = map[onnx.Kind]string{
	onnx.KindTensor:           "tensor",
	onnx.KindSequence:         "sequence",
	onnx.KindOptionalTensor:   "optional_tensor",
	onnx.KindOptionalSequence: "optional_sequence",
	onnx.KindStrings:          "strings", // held on the host: no ABI call carries them yet
}

// onnxRunValues is onnx.run_values: the model on the values layoutJSON
// builds from the tensors behind handles; the outputs are held behind the
// handle it returns.
func onnxRunValues(h int64, handles []int64, layoutJSON string, noGrad bool) (int64, error) {
	const fn = "onnx.run_values"
	m, err := onnxModels.get(h)
	if err != nil {
		return 0, err
	}
	ins, err := resolveInputs(handles)
	if err != nil {
		return 0, Prefix(err, fn)
	}
	for i, t := range ins.ts {
		if t == nil {
			return 0, Invalidf("%s: tensor %d is handle 0", fn, i)
		}
	}
	for _, in := range m.Inputs {
		if in.Kind == onnx.KindStrings {
			return 0, Errorf(StatusUnsupported, "%s: input %q is an ONNX STRING tensor, which the C ABI does not carry yet: run this model from Go (onnx.Model.RunValues)", fn, in.Name)
		}
	}
	entries, err := parseValueLayout(layoutJSON, len(ins.ts))
	if err != nil {
		return 0, Prefix(err, fn)
	}
	kinds := make(map[string]onnx.Kind, len(m.Inputs))
	for _, in := range m.Inputs {
		kinds[in.Name] = in.Kind
	}
	values := make(map[string]onnx.Value, len(entries))
	for _, e := range entries {
		values[e.name] = e.value(ins.ts, kinds[e.name])
	}
	var res map[string]onnx.Value
	underGrad(noGrad, func() { res, err = m.RunValues(values) })
	if err != nil {
		return 0, err
	}
	for _, o := range m.Outputs {
		if _, ok := res[o.Name].(*onnx.Strings); ok {
			return 0, Errorf(StatusUnsupported, "%s: output %q is an ONNX STRING tensor, which the C ABI does not carry yet: run this model from Go (onnx.Model.RunValues)", fn, o.Name)
		}
	}
	var layout strings.Builder
	var flat []*core.Tensor
	layout.WriteByte('{')
	for i, o := range m.Outputs {
		if i > 0 {
			layout.WriteByte(',')
		}
		name, _ := json.Marshal(o.Name) // a string always marshals
		layout.Write(name)
		layout.WriteByte(':')
		flat = writeValue(&layout, res[o.Name], flat)
	}
	layout.WriteByte('}')
	// An output may be an input passed through (Identity): a read-only
	// import stays read-only under its new handle, as onnx.run keeps it.
	return onnxResults.add(onnxResult{layout: layout.String(), outs: Outputs{ts: flat, readOnly: ins.readOnly}}), nil
}

// onnxValuesLayoutJSON is onnx.run_values.
func onnxValuesLayoutJSON(h int64) (string, error) {
	r, err := onnxResults.get(h)
	return r.layout, err
}

// onnxValuesTensors is onnx.run_values: the held outputs' tensors,
// in the order the layout indexes them (new handles at every call).
func onnxValuesTensors(h int64) (Outputs, error) {
	r, err := onnxResults.get(h)
	return r.outs, err
}

// onnxValuesFree is onnx.run_values; handles already made stay valid.
func onnxValuesFree(h int64) error { return onnxResults.free(h) }

// writeValue writes v's layout (tensor index, list of them, or null) to b
// and returns flat with v's tensors appended.
func writeValue(b *strings.Builder, v onnx.Value, flat []*core.Tensor) []*core.Tensor {
	switch v := v.(type) {
	case *core.Tensor:
		b.WriteString(strconv.Itoa(len(flat)))
		return append(flat, v)
	case *onnx.Sequence:
		b.WriteByte('[')
		for i, t := range v.Tensors {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(len(flat)))
			flat = append(flat, t)
		}
		b.WriteByte(']')
		return flat
	case *onnx.Optional:
		if v != nil && v.Value != nil {
			return writeValue(b, v.Value, flat)
		}
	}
	b.WriteString("null")
	return flat
}

// layoutEntry is one input of a layout: a tensor (index), a sequence
// (list, never nil, perhaps empty) or an empty optional (neither).
type layoutEntry struct {
	name  string
	index int
	list  []int
	none  bool
}

// value is the entry as the importer takes it for an input of kind: a
// tensor or a sequence is wrapped in an Optional where the model declares
// one. A value that does not fit the kind is passed as it is, for the
// importer to refuse naming the input, the kind declared and the value.
func (e layoutEntry) value(ts []*core.Tensor, kind onnx.Kind) onnx.Value {
	switch {
	case e.none:
		return &onnx.Optional{}
	case e.list != nil:
		seq := &onnx.Sequence{Tensors: make([]*core.Tensor, len(e.list))}
		for i, k := range e.list {
			seq.Tensors[i] = ts[k]
		}
		if len(seq.Tensors) > 0 { // an empty one takes the declared dtype
			seq.DType = seq.Tensors[0].DType()
		}
		if kind == onnx.KindOptionalSequence {
			return &onnx.Optional{Value: seq}
		}
		return seq
	}
	if kind == onnx.KindOptionalTensor {
		return &onnx.Optional{Value: ts[e.index]}
	}
	return ts[e.index]
}

// parseValueLayout reads a layout over n tensors: an object of input
// names, each once, whose values are tensor indices in 0..n-1, lists of
// them or null; every tensor must be used (one left out is a caller's
// mistake, not something to ignore).
func parseValueLayout(text string, n int) ([]layoutEntry, error) {
	bad := func(format string, args ...any) error {
		return Invalidf("layout_json %s", fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad("must be a JSON object of input names, as {\"x\": 0, \"parts\": [1, 2], \"maybe\": null}; got %s", jsonStart(text))
	}
	var entries []layoutEntry
	seen := map[string]bool{}
	used := make([]bool, n)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad("is not valid JSON: %v", err)
		}
		name := tok.(string) // inside an object, More then Token gives a key
		if seen[name] {
			return nil, bad("gives input %q twice", name)
		}
		seen[name] = true
		var raw any
		if err := dec.Decode(&raw); err != nil {
			return nil, bad("is not valid JSON at input %q: %v", name, err)
		}
		e := layoutEntry{name: name}
		index := func(v any, where string) (int, error) {
			num, ok := v.(json.Number)
			k, err := strconv.ParseInt(string(num), 10, 64)
			if !ok || err != nil {
				return 0, bad("input %q%s: %s is not a tensor index", name, where, jsonWord(v))
			}
			if k < 0 || k >= int64(n) {
				return 0, bad("input %q%s: tensor index %d out of range: n_tensors is %d", name, where, k, n)
			}
			used[k] = true
			return int(k), nil
		}
		switch v := raw.(type) {
		case nil:
			e.none = true
		case []any:
			e.list = make([]int, len(v))
			for i, x := range v {
				if e.list[i], err = index(x, fmt.Sprintf(" (a sequence), element %d", i)); err != nil {
					return nil, err
				}
			}
		case json.Number:
			if e.index, err = index(v, ""); err != nil {
				return nil, err
			}
		default:
			return nil, bad("input %q: %s is not a tensor index, a list of them (a sequence) or null (an empty optional)", name, jsonWord(v))
		}
		entries = append(entries, e)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, bad("is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("has more after its object")
	}
	for k, ok := range used {
		if !ok {
			return nil, bad("uses no tensor %d (every one of the %d tensors must belong to an input)", k, n)
		}
	}
	return entries, nil
}

// jsonWord names a decoded JSON value for errors, with the value where it
// is short.
func jsonWord(v any) string {
	switch v := v.(type) {
	case json.Number:
		return "the number " + string(v)
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// jsonStart is the first bytes of text, quoted, for an error.
func jsonStart(text string) string {
	if len(text) > 40 {
		text = text[:40] + "..."
	}
	return strconv.Quote(text)
}
