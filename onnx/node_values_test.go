package onnx

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// The node tests store a sequence or optional input or output as ONNX's
// SequenceProto or OptionalProto (onnx-data.proto, which onnxpb does not
// generate: the importer never reads them). These few fields are decoded
// here by hand.
const (
	protoName     = 1 // both messages: name
	protoTensor   = 3 // SequenceProto.tensor_values, OptionalProto.tensor_value
	protoSequence = 5 // SequenceProto.sequence_values, OptionalProto.sequence_value
	protoOptional = 7 // SequenceProto.optional_values, OptionalProto.optional_value
)

// testValue is a decoded test value and the ONNX element type of its
// tensors (0 when it holds none).
type testValue struct {
	name string
	v    Value
	elem elemType
}

// readValue reads a test's input or output file as kind says it is.
func readValue(path string, kind Kind, dev core.Device) (testValue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return testValue{}, err
	}
	return decodeValue(data, kind, dev)
}

func decodeValue(data []byte, kind Kind, dev core.Device) (testValue, error) {
	switch kind {
	case KindTensor, KindStrings:
		return decodeTestTensor(data, dev)
	case KindSequence:
		return decodeSequence(data, dev)
	}
	var out testValue
	opt := &Optional{}
	err := eachField(data, func(num protowire.Number, b []byte) error {
		switch num {
		case protoName:
			out.name = string(b)
		case protoTensor:
			tv, err := decodeTestTensor(b, dev)
			opt.Value, out.elem = tv.v, tv.elem
			return err
		case protoSequence:
			sv, err := decodeSequence(b, dev)
			opt.Value, out.elem = sv.v, sv.elem
			return err
		case protoOptional:
			return errors.New("an optional of an optional")
		}
		return nil
	})
	out.v = opt
	return out, err
}

func decodeSequence(data []byte, dev core.Device) (testValue, error) {
	var out testValue
	s := &Sequence{}
	err := eachField(data, func(num protowire.Number, b []byte) error {
		switch num {
		case protoName:
			out.name = string(b)
		case protoTensor:
			tv, err := decodeTestTensor(b, dev)
			if err != nil {
				return err
			}
			s.Tensors = append(s.Tensors, tv.v.(*core.Tensor))
			s.DType, out.elem = tv.v.(*core.Tensor).DType(), tv.elem
		case protoSequence, protoOptional:
			return errors.New("a sequence of sequences or optionals")
		}
		return nil
	})
	out.v = s
	return out, err
}

func decodeTestTensor(data []byte, dev core.Device) (testValue, error) {
	var tp pb.TensorProto
	if err := proto.Unmarshal(data, &tp); err != nil {
		return testValue{}, err
	}
	if tp.GetDataType() == 0 {
		return testValue{}, fmt.Errorf("not a tensor")
	}
	v, err := decodeTensorValue(&tp, dev, nil)
	if err != nil {
		return testValue{}, err
	}
	return testValue{name: tp.GetName(), v: v, elem: elemType(tp.GetDataType())}, nil
}

// eachField calls f on each length-delimited field of a message (the
// varint ones, elem_type, are skipped: the kind is known from the model),
// through the importer's walkFields.
func eachField(data []byte, f func(protowire.Number, []byte) error) error {
	var ferr error
	failed := walkFields(data, func(num protowire.Number, typ protowire.Type, _, value []byte) bool {
		if typ != protowire.BytesType {
			return true
		}
		ferr = f(num, value)
		return ferr == nil
	})
	if ferr != nil {
		return ferr
	}
	if failed {
		return errors.New("malformed protobuf message")
	}
	return nil
}

// compareValue compares a run's output with a test's: tensors as compare
// does, sequences tensor by tensor, optionals by what they hold.
func compareValue(got Value, want testValue) string {
	exact := narrowOf(want.elem) != nil
	switch w := want.v.(type) {
	case *core.Tensor:
		g, ok := got.(*core.Tensor)
		if !ok {
			return fmt.Sprintf("%s, want a tensor", describe(got))
		}
		return compare(g, w, exact)
	case *Strings:
		g, ok := got.(*Strings)
		switch {
		case !ok:
			return fmt.Sprintf("%s, want a string tensor", describe(got))
		case !slices.Equal(g.Shape, w.Shape):
			return fmt.Sprintf("shape %v, want %v", g.Shape, w.Shape)
		}
		for i := range w.Data {
			if g.Data[i] != w.Data[i] {
				return fmt.Sprintf("element %d is %q, want %q", i, g.Data[i], w.Data[i])
			}
		}
		return ""
	case *Sequence:
		g, ok := got.(*Sequence)
		if !ok || len(g.Tensors) != len(w.Tensors) {
			return fmt.Sprintf("%s, want %s", describe(got), describe(w))
		}
		for i := range w.Tensors {
			if msg := compare(g.Tensors[i], w.Tensors[i], exact); msg != "" {
				return fmt.Sprintf("tensor %d: %s", i, msg)
			}
		}
		return ""
	case *Optional:
		g, ok := got.(*Optional)
		if !ok || (g.Value == nil) != (w.Value == nil) {
			return fmt.Sprintf("%s, want %s", describe(got), describe(w))
		}
		if w.Value == nil {
			return ""
		}
		return compareValue(g.Value, testValue{v: w.Value, elem: want.elem})
	}
	return fmt.Sprintf("the test's value is %s", describe(want.v))
}
