package onnx

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"unsafe"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// maxElements bounds any one tensor a model declares (2^31 elements, the
// most a 32-bit GPU index addresses), so a hostile dims list is refused
// before anything is allocated for it.
const maxElements = 1 << 31

// dtypeOf maps an ONNX element type to the webtensor dtype of the same
// name. The narrow types the importer holds widened (narrow.go) are
// refused here, where an operator would make a tensor of that type without
// rounding onto it (heldType accepts them); strings and complex numbers
// are refused everywhere, by name.
func dtypeOf(t int32) (core.DType, error) {
	switch pb.TensorProto_DataType(t) {
	case pb.TensorProto_FLOAT:
		return core.F32, nil
	case pb.TensorProto_DOUBLE:
		return core.F64, nil
	case pb.TensorProto_FLOAT16:
		return core.F16, nil
	case pb.TensorProto_BFLOAT16:
		return core.BF16, nil
	case pb.TensorProto_INT64:
		return core.I64, nil
	case pb.TensorProto_INT32:
		return core.I32, nil
	case pb.TensorProto_UINT32:
		return core.U32, nil
	case pb.TensorProto_INT16:
		return core.I16, nil
	case pb.TensorProto_INT8:
		return core.I8, nil
	case pb.TensorProto_UINT8:
		return core.U8, nil
	case pb.TensorProto_BOOL:
		return core.Bool, nil
	}
	name, ok := pb.TensorProto_DataType_name[t]
	if !ok {
		name = strconv.Itoa(int(t))
	}
	if nt := narrowOf(elemType(t)); nt != nil {
		return core.Invalid, fmt.Errorf("element type %s (held widened as %s) is not supported here: only tensors, graph values and the operators that round onto it (Cast, CastLike, QuantizeLinear) take it", name, nt.held)
	}
	return core.Invalid, fmt.Errorf("element type %s is not supported (webtensor holds f32, f16, bf16, f64, i64, i32, u32, i16, i8, u8 and bool; the importer also holds %s widened)", name, narrowNames())
}

// checkDims validates a declared shape and returns it as a core.Shape.
func checkDims(dims []int64) (core.Shape, error) {
	shape := make(core.Shape, len(dims))
	n := int64(1)
	for i, d := range dims {
		if d < 0 {
			return nil, fmt.Errorf("dims %v: dim %d is negative", dims, i)
		}
		if d > maxElements || (d > 0 && n > maxElements/d) {
			return nil, fmt.Errorf("dims %v: more than %d elements", dims, int64(maxElements))
		}
		n *= d
		shape[i] = int(d)
	}
	return shape, nil
}

// tensorSource says where a TensorProto's external data may be read from:
// a directory opened as an os.Root, so no location can escape it (through
// "..", an absolute path or a symbolic link), and where the main graph's
// initializers' raw data is when LoadBytes split it out of the protobuf
// (splitRawData): slices of the model's bytes, which a tensor may adopt
// only when the importer owns them (owned: Load's file buffer; LoadBytes'
// caller keeps its buffer).
type tensorSource struct {
	root  *os.Root
	raws  map[*pb.TensorProto]rawSpan
	owned bool
}

// rawData is tp's raw_data and whether a tensor may adopt it: what
// splitRawData took out of it, or the bytes proto.Unmarshal copied.
func (src *tensorSource) rawData(tp *pb.TensorProto) ([]byte, bool) {
	if src != nil {
		if span, ok := src.raws[tp]; ok {
			return span.b, src.owned
		}
	}
	return tp.GetRawData(), true
}

// decodeTensor turns a TensorProto into a tensor on dev. Raw data for the
// CPU is adopted without a copy when it is aligned for its dtype; typed
// fields (float_data, int32_data, ...) are converted element by element.
func decodeTensor(tp *pb.TensorProto, dev core.Device, src *tensorSource) (*core.Tensor, error) {
	if nt := narrowOf(elemType(tp.GetDataType())); nt != nil {
		return decodeNarrow(tp, nt, dev, src)
	}
	dt, err := dtypeOf(tp.GetDataType())
	if err != nil {
		return nil, err
	}
	shape, err := checkDims(tp.GetDims())
	if err != nil {
		return nil, err
	}
	if tp.GetSegment() != nil {
		return nil, fmt.Errorf("segmented tensors are not supported")
	}
	n := shape.Numel()
	var raw []byte
	owned := true // raw is the importer's: a tensor may adopt it
	switch {
	case tp.GetDataLocation() == pb.TensorProto_EXTERNAL:
		if raw, err = readExternal(tp, n*dt.Size(), src); err != nil {
			return nil, err
		}
	case tp.RawData != nil:
		raw, owned = src.rawData(tp)
		if len(raw) != n*dt.Size() {
			return nil, fmt.Errorf("raw_data has %d bytes, shape %v of %s needs %d", len(raw), shape, dt, n*dt.Size())
		}
		if owned && dev == core.CPU {
			raw = src.alignInPlace(tp, raw, dt.Size())
		}
	default:
		if raw, err = typedData(tp, dt, n); err != nil {
			return nil, err
		}
	}
	return wrapBytes(dt, shape, raw, owned, dev)
}

// decodeNarrow reads a tensor of a narrow type (narrow.go): its storage
// (packed for the 4- and 2-bit types) is checked against the shape before
// anything is sized by the dims, then widened to the held dtype.
func decodeNarrow(tp *pb.TensorProto, nt *narrowType, dev core.Device, src *tensorSource) (*core.Tensor, error) {
	et := elemType(tp.GetDataType())
	shape, err := checkDims(tp.GetDims())
	if err != nil {
		return nil, err
	}
	if tp.GetSegment() != nil {
		return nil, fmt.Errorf("segmented tensors are not supported")
	}
	n := shape.Numel()
	size := nt.storageBytes(n)
	var raw []byte
	switch {
	case tp.GetDataLocation() == pb.TensorProto_EXTERNAL:
		if raw, err = readExternal(tp, size, src); err != nil {
			return nil, err
		}
	case tp.RawData != nil:
		raw, _ = src.rawData(tp) // widened into new memory below
		if len(raw) != size {
			return nil, fmt.Errorf("raw_data has %d bytes, shape %v of %s needs %d", len(raw), shape, typeName(et), size)
		}
	default:
		if raw, err = narrowStorage(tp, nt, n); err != nil {
			return nil, err
		}
	}
	wide, err := nt.widen(et, raw, n)
	if err != nil {
		return nil, err
	}
	return wrapBytes(nt.held, shape, wide, true, dev)
}

// wrapBytes makes a tensor over little-endian element bytes. On the CPU the
// bytes become the storage itself when the importer owns them (a model
// file's buffer, an external data file's, what proto.Unmarshal decoded: not
// used for anything else) and they are aligned; elsewhere they are uploaded
// (on the CPU: copied into a block of the backend's storage cache).
func wrapBytes(dt core.DType, shape core.Shape, raw []byte, owned bool, dev core.Device) (*core.Tensor, error) {
	if owned && dev == core.CPU && len(raw) > 0 && uintptr(unsafe.Pointer(&raw[0]))%uintptr(max(dt.Size(), 1)) == 0 {
		b, err := core.BackendFor(core.CPU)
		if err != nil {
			return nil, err
		}
		return core.WrapStorage(b, cpu.WrapHost(raw, func() {}), shape, nil, 0, dt), nil
	}
	t := core.FromBytes(dt, shape, raw, dev)
	return t, t.Err()
}

// typedData encodes the typed repeated fields of a TensorProto as raw
// little-endian bytes.
func typedData(tp *pb.TensorProto, dt core.DType, n int) ([]byte, error) {
	count := func(have int, field string) error {
		if have != n {
			return fmt.Errorf("%s has %d values, shape %v needs %d", field, have, tp.GetDims(), n)
		}
		return nil
	}
	var out []byte // allocated once the field's count matches the shape: dims alone must not size memory
	switch dt {
	case core.F32:
		v := tp.GetFloatData()
		if err := count(len(v), "float_data"); err != nil {
			return nil, err
		}
		out = make([]byte, n*dt.Size())
		for i, f := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
		}
	case core.F64:
		v := tp.GetDoubleData()
		if err := count(len(v), "double_data"); err != nil {
			return nil, err
		}
		out = make([]byte, n*dt.Size())
		for i, f := range v {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(f))
		}
	case core.I64:
		v := tp.GetInt64Data()
		if err := count(len(v), "int64_data"); err != nil {
			return nil, err
		}
		out = make([]byte, n*dt.Size())
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		}
	case core.U32:
		v := tp.GetUint64Data()
		if err := count(len(v), "uint64_data"); err != nil {
			return nil, err
		}
		out = make([]byte, n*dt.Size())
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
		}
	default: // i32, i16, i8, u8, bool, f16 and bf16 (as bits) live in int32_data
		v := tp.GetInt32Data()
		if err := count(len(v), "int32_data"); err != nil {
			return nil, err
		}
		out = make([]byte, n*dt.Size())
		size := dt.Size()
		for i, x := range v {
			switch size {
			case 4:
				binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
			case 2:
				binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
			default:
				out[i] = byte(x)
			}
		}
	}
	return out, nil
}

// readExternal reads a tensor's bytes from the file its external_data
// names, relative to the model's directory.
func readExternal(tp *pb.TensorProto, want int, src *tensorSource) ([]byte, error) {
	var location string
	offset, length := int64(0), int64(-1)
	for _, kv := range tp.GetExternalData() {
		var err error
		switch kv.GetKey() {
		case "location":
			location = kv.GetValue()
		case "offset":
			offset, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("external data %s %q: %w", kv.GetKey(), kv.GetValue(), err)
		}
	}
	if location == "" {
		return nil, fmt.Errorf("external data without a location")
	}
	if src == nil || src.root == nil {
		return nil, fmt.Errorf("external data %q: the model was loaded from bytes without a directory (use WithDir)", location)
	}
	if offset < 0 || (length >= 0 && length != int64(want)) {
		return nil, fmt.Errorf("external data %q: offset %d, length %d; the tensor needs %d bytes", location, offset, length, want)
	}
	f, err := src.root.Open(location)
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("external data %q: %w", location, err)
	}
	if st.Size() < offset+int64(want) {
		return nil, fmt.Errorf("external data %q has %d bytes, the tensor needs %d from offset %d", location, st.Size(), want, offset)
	}
	// A fresh buffer, allocated as words so any dtype's elements are
	// aligned, becomes the tensor's storage on the CPU.
	words := make([]uint64, (want+7)/8)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:want]
	if _, err := f.ReadAt(buf, offset); err != nil && err != io.EOF {
		return nil, fmt.Errorf("external data %q: %w", location, err)
	}
	return buf, nil
}
