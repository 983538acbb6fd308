package wtplugin

import (
	"fmt"
	"reflect"
	"unsafe"
)

// DType is an element type, numbered as in the call record.
type DType uint32

// The dtypes of ABI version 1.
const (
	F32 DType = iota + 1
	F16
	BF16
	F64
	I64
	I32
	U32
	I16
	I8
	U8
	Bool
)

var dtypeNames = [...]string{"invalid", "f32", "f16", "bf16", "f64", "i64", "i32", "u32", "i16", "i8", "u8", "bool"}
var dtypeSizes = [...]int{0, 4, 2, 2, 8, 8, 4, 4, 2, 1, 1, 1}

// String is webtensor's name of the dtype, as the manifest spells it.
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint32(d))
}

// Size is the element size in bytes (0 for an unknown dtype).
func (d DType) Size() int {
	if int(d) < len(dtypeSizes) {
		return dtypeSizes[d]
	}
	return 0
}

// ParseDType is the inverse of String.
func ParseDType(name string) (DType, error) {
	for i, n := range dtypeNames[1:] {
		if n == name {
			return DType(i + 1), nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q (want one of %v)", name, dtypeNames[1:])
}

// Tensor is one input or output of a call. In a plugin, Data is the host's
// buffer in linear memory itself: writing an output's views fills the result.
type Tensor struct {
	DType DType
	Shape []int
	Data  []byte // nil for an absent optional input
}

// Present reports whether the tensor was passed (optional inputs may not be).
func (t Tensor) Present() bool { return t.Data != nil }

// Numel is the number of elements.
func (t Tensor) Numel() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Number is an element type with a typed view.
type Number interface {
	~float32 | ~float64 | ~int64 | ~int32 | ~uint32 | ~int16 | ~int8 | ~uint8
}

// dtypeOfKind is the dtype of each kind of Number: by kind, not type, as
// Number admits named element types (~float32), which a type switch on
// float32 would refuse.
var dtypeOfKind = map[reflect.Kind]DType{
	reflect.Float32: F32, reflect.Float64: F64, reflect.Int64: I64, reflect.Int32: I32,
	reflect.Uint32: U32, reflect.Int16: I16, reflect.Int8: I8, reflect.Uint8: U8,
}

func dtypeOf[T Number]() DType {
	var z T
	if d, ok := dtypeOfKind[reflect.TypeOf(z).Kind()]; ok {
		return d
	}
	panic(fmt.Sprintf("wtplugin: no dtype for %T", z))
}

// View is the tensor's elements as a []T sharing its memory. It panics when
// T does not match the dtype; a panicking kernel fails its call with that
// message, so the host reports it instead of reading garbage.
func View[T Number](t Tensor) []T {
	want := dtypeOf[T]()
	if t.DType != want {
		panic(fmt.Sprintf("tensor %v is %s, viewed as %s", t.Shape, t.DType, want))
	}
	if len(t.Data) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), len(t.Data)/int(unsafe.Sizeof(z)))
}

// Float32s is View[float32].
func (t Tensor) Float32s() []float32 { return View[float32](t) }

// Float64s is View[float64].
func (t Tensor) Float64s() []float64 { return View[float64](t) }

// Int64s is View[int64].
func (t Tensor) Int64s() []int64 { return View[int64](t) }

// Int32s is View[int32].
func (t Tensor) Int32s() []int32 { return View[int32](t) }

// Make returns a tensor holding a copy of values, for tests. Its buffer is
// 8-byte aligned, as the host's are, so every view of it is aligned.
func Make[T Number](shape []int, values []T) Tensor {
	t := Zeros(dtypeOf[T](), shape)
	if n := t.Numel(); n != len(values) {
		panic(fmt.Sprintf("wtplugin.Make: shape %v holds %d elements, got %d values", shape, n, len(values)))
	}
	copy(View[T](t), values)
	return t
}

// Zeros returns a zeroed tensor, the way the host allocates outputs.
func Zeros(dt DType, shape []int) Tensor {
	t := Tensor{DType: dt, Shape: append([]int{}, shape...)}
	n := t.Numel() * dt.Size()
	words := make([]uint64, (n+7)/8+1) // +1: a non-nil buffer even for zero elements
	t.Data = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)[:n]
	return t
}
