package onnx

import (
	"fmt"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/webtensor/webtensor/internal/gcpace"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// parseModel decodes a ModelProto, its main graph's initializers' raw data
// left in data (splitRawData) and listed in the returned source; owned says
// whether tensors may keep slices of data (and data's other bytes may be
// written over: alignInPlace).
func parseModel(data []byte, owned bool) (*pb.ModelProto, *tensorSource, error) {
	mp := &pb.ModelProto{}
	src := &tensorSource{owned: owned}
	skeleton, raws, ok := splitRawData(data)
	if ok {
		if err := proto.Unmarshal(skeleton, mp); err == nil && len(raws) == len(mp.GetGraph().GetInitializer()) {
			src.raws = make(map[*pb.TensorProto]rawSpan, len(raws))
			end := addr(data) // the end of the last raw data before
			for i, tp := range mp.GetGraph().GetInitializer() {
				if raws[i] == nil {
					continue
				}
				span := rawSpan{b: raws[i]}
				if len(raws[i]) > 0 { // the raws come in data's order, disjoint
					span.free = int(addr(raws[i]) - end)
					end = addr(raws[i]) + uintptr(len(raws[i]))
				}
				src.raws[tp] = span
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
// take 7 to 500 ms from run to run. Split out, the weights are adopted
// where they are when the importer owns the bytes (alignInPlace), or copied
// in steps into the backend's storage, taken from its cache of freed blocks
// (decodeTensor).
//
// ok is false when data is not what this walk expects (malformed, or a
// graph field given twice, which protobuf would merge): the caller then
// unmarshals data itself, whose parser words the error.
func splitRawData(data []byte) (skeleton []byte, raws [][]byte, ok bool) {
	graphs := 0
	skeleton, ok = replaceField(data, modelGraphField, func(graph []byte) ([]byte, bool) {
		if graphs++; graphs > 1 {
			return nil, false
		}
		return replaceField(graph, graphInitializerField, func(tensor []byte) ([]byte, bool) {
			var raw []byte // the last raw_data: protobuf's rule for a repeated singular field
			out, ok := replaceField(tensor, tensorRawDataField, func(v []byte) ([]byte, bool) {
				raw = v
				return nil, true
			})
			raws = append(raws, raw)
			return out, ok
		})
	})
	if !ok {
		return nil, nil, false
	}
	return skeleton, raws, true
}

// replaceField is msg's bytes with the contents of each length-delimited
// field numbered num replaced by what fn returns for them; false when msg
// does not parse or fn refuses.
func replaceField(msg []byte, num protowire.Number, fn func(value []byte) ([]byte, bool)) ([]byte, bool) {
	out := make([]byte, 0, min(len(msg), 1<<10))
	failed := walkFields(msg, func(n protowire.Number, typ protowire.Type, field, value []byte) bool {
		if n != num || typ != protowire.BytesType {
			out = append(out, field...)
			return true
		}
		v, ok := fn(value)
		if !ok {
			return false
		}
		out = protowire.AppendTag(out, n, typ)
		out = protowire.AppendBytes(out, v)
		return true
	})
	return out, !failed
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

// rawSpan is an initializer's raw data in the model's bytes, and how many
// bytes just below it hold nothing a tensor needs once the model is
// decoded (its field's tag and length, the tensor's other fields).
type rawSpan struct {
	b    []byte
	free int
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// alignInPlace returns tp's raw data moved down within the model's bytes
// to the alignment of its elements (size bytes), where the bytes below it
// are free for that, so the CPU tensor can adopt it instead of copying it:
// the protobuf puts raw data at any offset (a varint length before it),
// and most of a model's weights would otherwise be misaligned. raw is
// returned as it is where it cannot move (or need not). Only for bytes
// the importer owns (Load's file, AdoptBytes).
func (src *tensorSource) alignInPlace(tp *pb.TensorProto, raw []byte, size int) []byte {
	if src == nil {
		return raw
	}
	span, ok := src.raws[tp]
	if !ok || !src.owned || len(raw) == 0 || size <= 1 {
		return raw
	}
	d := int(addr(raw) % uintptr(size))
	if d == 0 || d > span.free {
		return raw
	}
	// Down by d: each of gcpace.Copy's steps, in order, has its destination
	// end before its source does, so it never reads what it has written. The
	// bytes below were span.free (another weight's, moved only down, end
	// before them), and this span's own are re-pointed below.
	moved := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(raw)), -d)), len(raw))
	gcpace.Copy(moved, raw)
	span.b, span.free = moved, span.free-d
	src.raws[tp] = span
	return moved
}
