package core

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/webtensor/webtensor/core/numerics"
)

// Tensor is an n-dimensional array on a device. Several tensors may share one
// storage (views): shape, strides (in elements) and offset say which elements
// a tensor sees. A Tensor may instead carry an error (see Err).
type Tensor struct {
	shape   Shape
	strides []int
	offset  int
	dtype   DType
	storage Storage
	backend Backend
	err     error

	requiresGrad bool
	grad         *Tensor
	node         *node // the op that made this tensor, when recorded for autograd
	outIndex     int
}

// Err is the error the tensor carries, if an op that made it failed.
func (t *Tensor) Err() error {
	if t == nil {
		return fmt.Errorf("nil tensor")
	}
	return t.err
}

// Shape is a copy of the tensor's shape.
func (t *Tensor) Shape() Shape { return t.shape.Clone() }

// Strides is a copy of the strides, in elements.
func (t *Tensor) Strides() []int { return append([]int{}, t.strides...) }

// Offset is the index of the first element in the storage, in elements.
func (t *Tensor) Offset() int { return t.offset }

// DType is the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Rank is the number of dimensions.
func (t *Tensor) Rank() int { return len(t.shape) }

// Numel is the number of elements.
func (t *Tensor) Numel() int { return t.shape.Numel() }

// Storage is the backing buffer (shared by views).
func (t *Tensor) Storage() Storage { return t.storage }

// Backend is the backend that owns the storage.
func (t *Tensor) Backend() Backend { return t.backend }

// Device is where the tensor lives.
func (t *Tensor) Device() Device {
	if t.backend == nil {
		return Device{}
	}
	return t.backend.Device()
}

// Meta is the tensor's shape and dtype. The shape is the tensor's own, not
// a copy: read it, do not keep it (it lives in the tensor's allocation, so
// keeping it keeps the tensor's storage alive); Shape returns a copy.
func (t *Tensor) Meta() Meta { return Meta{Shape: t.shape, DType: t.dtype} }

// IsContiguous reports whether elements are laid out row-major without gaps.
// Size-1 dimensions may have any stride.
func (t *Tensor) IsContiguous() bool {
	acc := 1
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.strides[i] != acc {
			return false
		}
		acc *= t.shape[i]
	}
	return true
}

func (t *Tensor) String() string {
	if t == nil {
		return "Tensor(nil)"
	}
	if t.err != nil {
		return fmt.Sprintf("Tensor(error: %v)", t.err)
	}
	s := fmt.Sprintf("Tensor(shape=%v, dtype=%s, device=%s", t.shape, t.dtype, t.Device())
	if t.Numel() <= 16 {
		if v, err := t.Float64s(); err == nil {
			s += fmt.Sprintf(", values=%v", v)
		}
	}
	return s + ")"
}

// Release frees the storage now rather than at garbage collection. Views
// sharing the storage must not be used afterwards.
func (t *Tensor) Release() {
	if t == nil || t.storage == nil {
		return
	}
	t.storage.Release()
	t.storage = nil
	t.err = ErrReleased
}

// Empty allocates an uninitialised contiguous tensor on a backend.
func Empty(b Backend, shape Shape, dtype DType) (*Tensor, error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	if !dtype.Valid() {
		return nil, fmt.Errorf("invalid dtype %v", dtype)
	}
	s, err := b.Alloc(storedDType(dtype), storedCount(dtype, shape.Numel()))
	if err != nil {
		return nil, complexStorageErr(dtype, err)
	}
	t := newHeader(shape, nil)
	t.dtype, t.storage, t.backend = dtype, s, b
	return t, nil
}

// storedDType is the dtype a backend stores d as: a complex element is two
// of its real dtype's (see types.C64), so no backend knows complex dtypes.
func storedDType(d DType) DType { return d.RealDType() }

// storedCount is how many stored elements numel elements of d take.
func storedCount(d DType, numel int) int {
	if d.IsComplex() {
		return 2 * numel
	}
	return numel
}

// complexStorageErr says that a backend's refusal of a real dtype came
// from a complex one stored as its parts.
func complexStorageErr(d DType, err error) error {
	if d.IsComplex() {
		return fmt.Errorf("%v is stored as pairs of %v: %w", d, d.RealDType(), err)
	}
	return err
}

// NewView makes a tensor that shares base's storage with another layout.
// Backends use it; user code gets views from the view ops.
func NewView(base *Tensor, shape Shape, strides []int, offset int) *Tensor {
	t := newHeader(shape, strides)
	t.offset, t.dtype, t.storage, t.backend = offset, base.dtype, base.storage, base.backend
	return t
}

// WrapStorage makes a tensor over existing storage (used by backends and the
// C ABI to adopt memory).
func WrapStorage(b Backend, s Storage, shape Shape, strides []int, offset int, dtype DType) *Tensor {
	t := newHeader(shape, strides)
	t.offset, t.dtype, t.storage, t.backend = offset, dtype, s, b
	return t
}

// Number is the set of Go element types a tensor can be built from.
type Number interface {
	~float32 | ~float64 | ~int64 | ~int32 | ~uint32 | ~int16 | ~int8 | ~uint8 | ~int | ~bool | ~uint16 | ~uint64
}

func dtypeOf[T Number]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return F32
	case float64:
		return F64
	case int64, int:
		return I64
	case int32:
		return I32
	case uint32:
		return U32
	case int16:
		return I16
	case int8:
		return I8
	case uint8:
		return U8
	case uint16:
		return U16
	case uint64:
		return U64
	case bool:
		return Bool
	}
	return Invalid
}

// FromSlice copies data into a new tensor of the given shape on dev (the
// default device when dev is omitted). The dtype follows the Go type
// (int becomes i64).
func FromSlice[T Number](data []T, shape Shape, dev ...Device) *Tensor {
	d := dtypeOf[T]()
	var raw []byte
	var z T
	if _, isInt := any(z).(int); isInt {
		raw = make([]byte, 8*len(data))
		for i, v := range data {
			numerics.PutI64(I64, raw, i, int64(any(v).(int)))
		}
	} else if len(data) > 0 {
		raw = append([]byte{}, unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*d.Size())...)
	}
	return FromBytes(d, shape, raw, dev...)
}

// FromBytes copies little-endian element bytes into a new tensor.
func FromBytes(d DType, shape Shape, raw []byte, dev ...Device) *Tensor {
	if err := shape.Validate(); err != nil {
		return errTensor(err)
	}
	if !d.Valid() {
		return errTensor(fmt.Errorf("invalid dtype %v", d))
	}
	if len(raw) != shape.Numel()*d.Size() {
		return errTensor(fmt.Errorf("data has %d bytes, shape %v of %s needs %d", len(raw), shape, d, shape.Numel()*d.Size()))
	}
	b, err := pickBackend(dev)
	if err != nil {
		return errTensor(err)
	}
	s, err := b.Upload(storedDType(d), raw)
	if err != nil {
		return errTensor(complexStorageErr(d, err))
	}
	t := newHeader(shape, nil)
	t.dtype, t.storage, t.backend = d, s, b
	return t
}

// FromFloat64s converts values to dtype d.
func FromFloat64s(d DType, shape Shape, vals []float64, dev ...Device) *Tensor {
	if d.Size() == 0 {
		return errTensor(fmt.Errorf("invalid dtype %v", d))
	}
	return FromBytes(d, shape, EncodeF64(d, vals), dev...)
}

// Scalar makes a rank-0 tensor.
func Scalar(v float64, d DType, dev ...Device) *Tensor {
	return FromFloat64s(d, nil, []float64{v}, dev...)
}

func pickBackend(dev []Device) (Backend, error) {
	if len(dev) > 0 { // DefaultDevice probes the backends: not when a device is given
		return BackendFor(dev[0])
	}
	return BackendFor(DefaultDevice())
}

// Bytes returns the elements in row-major order as little-endian bytes,
// waiting for pending work on the device.
func (t *Tensor) Bytes() ([]byte, error) {
	if err := t.Err(); err != nil {
		return nil, err
	}
	c := t
	if !t.IsContiguous() {
		c = t.Contiguous()
		if err := c.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]byte, c.Numel()*c.dtype.Size())
	if len(out) == 0 {
		return out, nil
	}
	if err := c.backend.Download(c.storage, c.offset*c.dtype.Size(), out); err != nil {
		return nil, err
	}
	return out, nil
}

// Float64s returns the values converted to float64.
func (t *Tensor) Float64s() ([]float64, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	return DecodeF64(t.dtype, b), nil
}

// Float32s returns the values converted to float32.
func (t *Tensor) Float32s() ([]float32, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	if t.dtype == F32 {
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4), nil
	}
	f := DecodeF64(t.dtype, b)
	out := make([]float32, len(f))
	for i, v := range f {
		out[i] = float32(v)
	}
	return out, nil
}

// Int64s returns the values converted to int64 (floats truncate). A u64
// comes back as its bit pattern (values above 2^63 are negative): Uint64s
// reads it as itself.
func (t *Tensor) Int64s() ([]int64, error) {
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	out := make([]int64, t.Numel())
	for i := range out {
		out[i] = numerics.GetI64(t.dtype, b, i)
	}
	return out, nil
}

// Uint64s returns the values converted to uint64, exactly for every
// integer dtype (a negative one wraps, as a C cast does), so a u64 above
// 2^53 survives where Float64s would round it; floats truncate and
// saturate by numerics.FloatToInt.
func (t *Tensor) Uint64s() ([]uint64, error) {
	v, err := t.Int64s()
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(v))
	if t.dtype.IsFloat() {
		f, err := t.Float64s()
		if err != nil {
			return nil, err
		}
		for i, x := range f {
			out[i] = uint64(numerics.FloatToInt(U64, x))
		}
		return out, nil
	}
	for i, x := range v {
		out[i] = uint64(x)
	}
	return out, nil
}

// Item returns the value of a one-element tensor.
func (t *Tensor) Item() (float64, error) {
	if err := t.Err(); err != nil {
		return math.NaN(), err
	}
	if t.Numel() != 1 {
		return math.NaN(), fmt.Errorf("item: tensor has %d elements (shape %v), want 1", t.Numel(), t.shape)
	}
	v, err := t.Float64s()
	if err != nil {
		return math.NaN(), err
	}
	return v[0], nil
}

// To copies the tensor to another device (itself if already there).
func (t *Tensor) To(d Device) *Tensor {
	if t.Err() != nil {
		return t
	}
	if t.Device() == d {
		return t
	}
	raw, err := t.Bytes()
	if err != nil {
		return errTensor(err)
	}
	out := FromBytes(t.dtype, t.shape, raw, d)
	if out.err == nil && t.requiresGrad && GradEnabled() {
		out = recordTransfer(t, out)
	}
	return out
}
