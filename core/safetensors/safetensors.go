package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	return core.Invalid, fmt.Errorf("unsupported safetensors dtype %q", s)
}

type entry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// Encode writes tensors (sorted by name, as the reference writer does) and
// metadata to w.
func Encode(w io.Writer, tensors map[string]Tensor, metadata map[string]string) error {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		if n == "__metadata__" {
			return fmt.Errorf("safetensors: tensor name %q is reserved", n)
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
			return fmt.Errorf("safetensors: tensor %q has unsupported dtype %v", n, t.DType)
		}
		if want := t.Shape.Numel() * t.DType.Size(); want != len(t.Data) {
			return fmt.Errorf("safetensors: tensor %q has %d bytes, shape %v of %s needs %d", n, len(t.Data), t.Shape, t.DType, want)
		}
		shape := []int(t.Shape)
		if shape == nil {
			shape = []int{}
		}
		header[n] = entry{DType: dn, Shape: shape, Offsets: [2]int{off, off + len(t.Data)}}
		off += len(t.Data)
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return err
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	for (8+len(hj))%8 != 0 {
		hj = append(hj, ' ')
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hj)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return err
	}
	if _, err := w.Write(hj); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := w.Write(tensors[n].Data); err != nil {
			return err
		}
	}
	return nil
}

// Decode parses a whole safetensors file held in memory. Tensor data
// aliases buf.
func Decode(buf []byte) (*File, error) {
	if len(buf) < 8 {
		return nil, fmt.Errorf("safetensors: file is %d bytes, too short for the 8-byte header length", len(buf))
	}
	hl := binary.LittleEndian.Uint64(buf[:8])
	if hl > maxHeader || hl > uint64(len(buf)-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds the file (%d bytes) or the %d-byte limit: file truncated or not safetensors", hl, len(buf), maxHeader)
	}
	data := buf[8+hl:]
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(buf[8 : 8+hl]))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("safetensors: header is not valid JSON: %v", err)
	}
	f := &File{Tensors: map[string]Tensor{}, Metadata: map[string]string{}}
	type span struct {
		name     string
		from, to int
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("safetensors: __metadata__ must map strings to strings: %v", err)
			}
			continue
		}
		var e entry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: bad header entry: %v", name, err)
		}
		d, err := ParseDType(e.DType)
		if err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %v", name, err)
		}
		shape := core.Shape(e.Shape)
		if err := shape.Validate(); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %v", name, err)
		}
		from, to := e.Offsets[0], e.Offsets[1]
		if from < 0 || to < from || to > len(data) {
			return nil, fmt.Errorf("safetensors: tensor %q: data offsets [%d, %d] outside the %d data bytes (truncated file?)", name, from, to, len(data))
		}
		if want := shape.Numel() * d.Size(); to-from != want {
			return nil, fmt.Errorf("safetensors: tensor %q: %d data bytes, shape %v of %s needs %d", name, to-from, shape, d, want)
		}
		f.Tensors[name] = Tensor{DType: d, Shape: shape, Data: data[from:to:to]}
		spans = append(spans, span{name, from, to})
	}
	sort.Slice(spans, func(i, j int) bool {
		return spans[i].from < spans[j].from || (spans[i].from == spans[j].from && spans[i].to < spans[j].to)
	})
	end := 0
	for _, s := range spans {
		if s.from < end {
			return nil, fmt.Errorf("safetensors: tensor %q overlaps another tensor's data", s.name)
		}
		end = s.to
		f.Names = append(f.Names, s.name)
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

// WriteFile writes atomically: a temporary file in the same directory is
// written, synced and renamed over path, so a failed save never leaves a
// broken file where a good one was.
func WriteFile(path string, tensors map[string]Tensor, metadata map[string]string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = Encode(tmp, tensors, metadata); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if dir, derr := os.Open(filepath.Dir(path)); derr == nil {
		dir.Sync() // make the rename durable; best effort on filesystems without directory sync
		dir.Close()
	}
	return nil
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
