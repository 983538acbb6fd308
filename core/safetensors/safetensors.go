package safetensors

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/webtensor/webtensor/core"
)

// Tensor is one named array: dtype, shape and row-major little-endian bytes.
type Tensor struct {
	DType core.DType
	Shape core.Shape
	Data  []byte
}

// File is a decoded safetensors file. Names lists the tensors in file order.
type File struct {
	Tensors  map[string]Tensor
	Metadata map[string]string
	Names    []string
}

// maxHeader bounds the JSON header (the reference implementation uses 100 MB).
const maxHeader = 100 << 20

var dtypeNames = map[core.DType]string{
	core.F64: "F64", core.F32: "F32", core.F16: "F16", core.BF16: "BF16", core.I64: "I64",
	core.I32: "I32", core.U32: "U32", core.I16: "I16", core.I8: "I8", core.U8: "U8", core.Bool: "BOOL",
	core.U16: "U16", core.U64: "U64",
	core.C64: "C64", // the format has no 128-bit complex: c128 is refused by name
}

// DTypeName is the safetensors spelling of a dtype.
func DTypeName(d core.DType) string { return dtypeNames[d] }

// ParseDType reads a safetensors dtype name.
func ParseDType(s string) (core.DType, error) {
	for d, n := range dtypeNames {
		if n == s {
			return d, nil
		}
	}
	return core.Invalid, fmt.Errorf("unsupported safetensors dtype %q (webtensor reads F64 F32 F16 BF16 I64 I32 U32 I16 I8 U8 U16 U64 BOOL C64)", clip(s))
}

type entry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// Encode writes tensors (sorted by name, as the reference writer does) and
// metadata to w.
func Encode(w io.Writer, tensors map[string]Tensor, metadata map[string]string) error {
	head, names, err := EncodeHeader(tensors, metadata)
	if err != nil {
		return err
	}
	for _, n := range names {
		t := tensors[n]
		if want := t.Shape.Numel() * t.DType.Size(); want != len(t.Data) {
			return fmt.Errorf("safetensors: tensor %q has %d bytes, shape %v of %s needs %d", n, len(t.Data), t.Shape, t.DType, want)
		}
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := w.Write(tensors[n].Data); err != nil {
			return err
		}
	}
	return nil
}

// EncodeHeader is what Encode writes before the data: the 8-byte length
// and the header padded with spaces so the data starts 8-byte aligned,
// from the tensors' dtypes and shapes alone (Data is not read), and the
// names in the order their data follows. A caller sizes a buffer for the
// whole file with it before reading any tensor from its device.
func EncodeHeader(tensors map[string]Tensor, metadata map[string]string) ([]byte, []string, error) {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		if n == "__metadata__" {
			return nil, nil, fmt.Errorf("safetensors: tensor name %q is reserved", n)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	off := 0
	for _, n := range names {
		t := tensors[n]
		dn, ok := dtypeNames[t.DType]
		if !ok {
			return nil, nil, fmt.Errorf("safetensors: tensor %q has unsupported dtype %v", n, t.DType)
		}
		size := t.Shape.Numel() * t.DType.Size()
		shape := []int(t.Shape)
		if shape == nil {
			shape = []int{}
		}
		header[n] = entry{DType: dn, Shape: shape, Offsets: [2]int{off, off + size}}
		off += size
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return nil, nil, err
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	for (8+len(hj))%8 != 0 {
		hj = append(hj, ' ')
	}
	out := make([]byte, 8, 8+len(hj))
	binary.LittleEndian.PutUint64(out, uint64(len(hj)))
	return append(out, hj...), names, nil
}

// Decode parses a whole safetensors file held in memory (ParseHeader checks
// it). Tensor data aliases buf.
func Decode(buf []byte) (*File, error) {
	h, err := ParseHeader(buf, int64(len(buf)))
	if err != nil {
		return nil, err
	}
	data := buf[h.DataStart:]
	f := &File{Tensors: make(map[string]Tensor, len(h.Entries)), Metadata: h.Metadata}
	for _, e := range h.Entries {
		f.Tensors[e.Name] = Tensor{DType: e.DType, Shape: e.Shape, Data: data[e.Begin:e.End:e.End]}
		f.Names = append(f.Names, e.Name)
	}
	return f, nil
}

// ReadFile reads and decodes a safetensors file.
func ReadFile(path string) (*File, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Decode(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// FromTensor copies a core tensor's values (waiting for the device).
func FromTensor(t *core.Tensor) (Tensor, error) {
	b, err := t.Bytes()
	if err != nil {
		return Tensor{}, err
	}
	return Tensor{DType: t.DType(), Shape: t.Shape(), Data: b}, nil
}

// ToTensor uploads a decoded tensor to a device (the default when omitted).
func (t Tensor) ToTensor(dev ...core.Device) *core.Tensor {
	return core.FromBytes(t.DType, t.Shape, t.Data, dev...)
}
