package data

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// Field is one value of every record: its name, dtype and one record's
// shape (a batch of it has shape [batch, Shape...]).
type Field struct {
	Name  string
	DType core.DType
	Shape core.Shape
}

// Bytes is the size of one record's value.
func (f Field) Bytes() int { return f.Shape.Numel() * f.DType.Size() }

func (f Field) String() string { return fmt.Sprintf("%s %s%v", f.Name, f.DType, []int(f.Shape)) }

// Dataset is a map-style dataset of fixed-shape records, PyTorch's
// Dataset with __len__ and __getitem__.
type Dataset interface {
	// Len is the number of records.
	Len() int
	// Fields lists a record's values, in order.
	Fields() []Field
	// Read copies record i into dst: dst[f] has exactly Fields()[f].Bytes()
	// bytes. It is called from several goroutines at once. An error names
	// the file and the record.
	Read(i int, dst [][]byte) error
}

// recordError is the error of a record that could not be read: the
// source (a file, usually) and the record's index come first, so the
// message points at the bad data.
func recordError(source string, i int, err error) error {
	return fmt.Errorf("%s: record %d: %w", source, i, err)
}

// Get reads record i as one tensor per field, on dev (the default device
// when omitted): a dataset's __getitem__.
func Get(ds Dataset, i int, dev ...core.Device) ([]*core.Tensor, error) {
	if i < 0 || i >= ds.Len() {
		return nil, fmt.Errorf("data: record %d out of range (dataset has %d)", i, ds.Len())
	}
	fields := ds.Fields()
	dst := make([][]byte, len(fields))
	for f, fd := range fields {
		dst[f] = make([]byte, fd.Bytes())
	}
	if err := ds.Read(i, dst); err != nil {
		return nil, err
	}
	out := make([]*core.Tensor, len(fields))
	for f, fd := range fields {
		out[f] = core.FromBytes(fd.DType, fd.Shape, dst[f], dev...)
		if err := out[f].Err(); err != nil {
			return nil, fmt.Errorf("data: field %s of record %d: %w", fd.Name, i, err)
		}
	}
	return out, nil
}

// arrays is a dataset over whole arrays in host memory, a record being
// one index along each array's first dim: what the tensor, NumPy,
// safetensors and Parquet readers all come down to.
type arrays struct {
	source string
	n      int
	fields []Field
	data   [][]byte // data[f]: n records of fields[f].Bytes() each
}

func (a *arrays) Len() int        { return a.n }
func (a *arrays) Fields() []Field { return a.fields }

func (a *arrays) Read(i int, dst [][]byte) error {
	if i < 0 || i >= a.n {
		return recordError(a.source, i, fmt.Errorf("out of range (%d records)", a.n))
	}
	for f, fd := range a.fields {
		sz := fd.Bytes()
		copy(dst[f], a.data[f][i*sz:(i+1)*sz])
	}
	return nil
}

// column is one named array before it joins a dataset: its dtype, full
// shape (records first) and bytes.
type column struct {
	name  string
	dtype core.DType
	shape core.Shape
	data  []byte
}

// newArrays checks that the columns agree on the record count and makes
// the dataset; source names where they came from, for errors.
func newArrays(source string, cols []column) (*arrays, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("%s: no arrays to make a dataset of", source)
	}
	a := &arrays{source: source, n: -1}
	seen := map[string]bool{}
	for _, c := range cols {
		if len(c.shape) == 0 {
			return nil, fmt.Errorf("%s: array %q is a scalar: a dataset's arrays need a first dim of records", source, c.name)
		}
		if seen[c.name] {
			return nil, fmt.Errorf("%s: two arrays are named %q", source, c.name)
		}
		seen[c.name] = true
		if a.n >= 0 && c.shape[0] != a.n {
			return nil, fmt.Errorf("%s: array %q has %d records, %q has %d", source, c.name, c.shape[0], a.fields[0].Name, a.n)
		}
		a.n = c.shape[0]
		fd := Field{Name: c.name, DType: c.dtype, Shape: c.shape[1:].Clone()}
		if want := a.n * fd.Bytes(); len(c.data) != want {
			return nil, fmt.Errorf("%s: array %q has %d bytes, shape %v of %s needs %d", source, c.name, len(c.data), c.shape, c.dtype, want)
		}
		a.fields = append(a.fields, fd)
		a.data = append(a.data, c.data)
	}
	return a, nil
}

// FromTensors is PyTorch's TensorDataset: record i is t[i] of each tensor,
// all of which must have the same first dim. Fields are named by names
// (default "0", "1", ...). The values are copied to host memory once.
func FromTensors(ts []*core.Tensor, names ...string) (Dataset, error) {
	if len(names) != 0 && len(names) != len(ts) {
		return nil, fmt.Errorf("data: %d names for %d tensors", len(names), len(ts))
	}
	cols := make([]column, len(ts))
	for i, t := range ts {
		name := fmt.Sprint(i)
		if len(names) != 0 {
			name = names[i]
		}
		raw, err := t.Bytes()
		if err != nil {
			return nil, fmt.Errorf("data: tensor %q: %w", name, err)
		}
		cols[i] = column{name: name, dtype: t.DType(), shape: t.Shape(), data: raw}
	}
	return newArrays("tensors", cols)
}
