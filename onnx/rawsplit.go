package onnx

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// parseModel decodes a ModelProto, its main graph's initializers' raw data
// left in data (splitRawData) and listed in the returned source; owned says
// whether tensors may keep slices of data.
func parseModel(data []byte, owned bool) (*pb.ModelProto, *tensorSource, error) {
	mp := &pb.ModelProto{}
	src := &tensorSource{owned: owned}
	skeleton, raws, ok := splitRawData(data)
	if ok {
		if err := proto.Unmarshal(skeleton, mp); err == nil && len(raws) == len(mp.GetGraph().GetInitializer()) {
			src.raws = make(map[*pb.TensorProto][]byte, len(raws))
			for i, tp := range mp.GetGraph().GetInitializer() {
				if raws[i] != nil {
					src.raws[tp] = raws[i]
				}
			}
			return mp, src, nil
		}
		mp.Reset() // the whole bytes' parse below says what is wrong
	}
	if err := proto.Unmarshal(data, mp); err != nil {
		return nil, nil, fmt.Errorf("onnx: parsing ModelProto: %w", err)
	}
	return mp, src, nil
}

// Field numbers of onnx.proto that splitRawData walks.
const (
	modelGraphField       = 7 // ModelProto.graph
	graphInitializerField = 5 // GraphProto.initializer
	tensorRawDataField    = 9 // TensorProto.raw_data
)

// splitRawData returns the model's bytes without the raw_data of the main
// graph's initializers - an empty raw_data in its place, so the decoded
// TensorProto still says where its values are - and those bytes, one entry
// per initializer in order (nil for one without raw_data), slices of data.
//
// proto.Unmarshal copies every bytes field, so a model's weights (90 MB for
// MiniLM) were copied into fresh Go memory by one memmove per weight before
// the importer looked at them: it cannot be preempted, and a collection
// that started meanwhile spun, signalling the thread, until it ended.
// Inside Node (the library loaded by a c-shared host) that made an import
// take 7 to 500 ms from run to run. Split out, the weights go straight into
// the backend's storage (decodeTensor), taken from its cache of freed blocks
// and copied in steps.
//
// ok is false when data is not what this walk expects (malformed, or a
// graph field given twice, which protobuf would merge): the caller then
// unmarshals data itself, whose parser words the error.
func splitRawData(data []byte) (skeleton []byte, raws [][]byte, ok bool) {
	graphs := 0
	out := make([]byte, 0, 64<<10)
	err := walkFields(data, func(num protowire.Number, typ protowire.Type, field, value []byte) bool {
		if num != modelGraphField || typ != protowire.BytesType {
			out = append(out, field...)
			return true
		}
		if graphs++; graphs > 1 {
			return false
		}
		g, r, ok := splitGraph(value)
		if !ok {
			return false
		}
		raws = r
		out = protowire.AppendTag(out, num, typ)
		out = protowire.AppendBytes(out, g)
		return true
	})
	if err {
		return nil, nil, false
	}
	return out, raws, true
}

// splitGraph is splitRawData for a GraphProto's bytes.
func splitGraph(data []byte) ([]byte, [][]byte, bool) {
	out := make([]byte, 0, min(len(data), 64<<10))
	var raws [][]byte
	failed := walkFields(data, func(num protowire.Number, typ protowire.Type, field, value []byte) bool {
		if num != graphInitializerField || typ != protowire.BytesType {
			out = append(out, field...)
			return true
		}
		t, raw, ok := splitTensor(value)
		if !ok {
			return false
		}
		raws = append(raws, raw)
		out = protowire.AppendTag(out, num, typ)
		out = protowire.AppendBytes(out, t)
		return true
	})
	return out, raws, !failed
}

// splitTensor is a TensorProto's bytes with every raw_data emptied, and the
// last one's bytes (protobuf's rule for a repeated singular field).
func splitTensor(data []byte) ([]byte, []byte, bool) {
	out := make([]byte, 0, 128)
	var raw []byte
	failed := walkFields(data, func(num protowire.Number, typ protowire.Type, field, value []byte) bool {
		if num != tensorRawDataField || typ != protowire.BytesType {
			out = append(out, field...)
			return true
		}
		raw = value
		out = protowire.AppendTag(out, num, typ)
		out = protowire.AppendBytes(out, nil)
		return true
	})
	if raw == nil && !failed {
		return data, nil, true // nothing split: the bytes as they are
	}
	return out, raw, !failed
}

// walkFields calls fn with each field of a message's bytes: its number, wire
// type, whole encoding and, for a length-delimited field, its contents.
// It reports whether the bytes did not parse or fn returned false.
func walkFields(data []byte, fn func(num protowire.Number, typ protowire.Type, field, value []byte) bool) (failed bool) {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return true
		}
		m := protowire.ConsumeFieldValue(num, typ, data[n:])
		if m < 0 {
			return true
		}
		field := data[:n+m]
		var value []byte
		if typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(data[n:])
			if k < 0 {
				return true
			}
			value = v
		}
		if !fn(num, typ, field, value) {
			return true
		}
		data = data[n+m:]
	}
	return false
}
