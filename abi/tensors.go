package abi

import (
	"github.com/webtensor/webtensor/core"
)

// ParseDType checks a wt_dtype code.
func ParseDType(code int64) (core.DType, error) {
	dt := core.DType(code)
	if code < 0 || code > 255 || !dt.Valid() {
		return core.Invalid, Invalidf("unknown dtype code %d (valid: 1=f32 ... 11=bool, 12=c64, 13=c128, 14=u16, 15=u64, see wt_dtype)", code)
	}
	return dt, nil
}

// PromoteTypes is wt_promote_types: the dtype an op with promoting inputs
// (add, where, ...) computes two operands of dtypes a and b in, so an SDK's
// result_type agrees with what the ops do.
func PromoteTypes(a, b int64) (int64, error) {
	da, err := ParseDType(a)
	if err != nil {
		return 0, err
	}
	db, err := ParseDType(b)
	if err != nil {
		return 0, err
	}
	d, err := core.Promote(da, db)
	if err != nil {
		return 0, Invalidf("%v", err)
	}
	return int64(d), nil
}

// parseShape checks extents: at most MaxRank of them, each 0..2^40, and
// an element count a tensor can hold.
func parseShape(dims []int64) (core.Shape, error) {
	if err := CheckCount("ndim", int64(len(dims)), MaxRank); err != nil {
		return nil, err
	}
	s := make(core.Shape, len(dims))
	for i, d := range dims {
		if d < 0 || d > 1<<40 {
			return nil, Invalidf("dimension %d of the shape is %d", i, d)
		}
		s[i] = int(d)
	}
	if err := s.Validate(); err != nil {
		return nil, Invalidf("%v", err)
	}
	return s, nil
}

// parseDevice reads an optional device name: "" is the default (nil).
func parseDevice(name string) ([]core.Device, error) {
	if name == "" {
		return nil, nil
	}
	d, err := core.ParseDevice(name)
	if err != nil {
		return nil, Invalidf("%v", err)
	}
	if _, err := core.BackendFor(d); err != nil {
		return nil, Errorf(StatusUnsupported, "device %q: %v", name, err)
	}
	return []core.Device{d}, nil
}

// Layout is what the constructors validate: dtype, shape and device.
type Layout struct {
	DType  core.DType
	Shape  core.Shape
	Device []core.Device // none: the default device
}

// ParseLayout checks a constructor's dtype code, extents and device name.
func ParseLayout(dtype int64, dims []int64, device string) (Layout, error) {
	d, err := ParseDType(dtype)
	if err != nil {
		return Layout{}, err
	}
	s, err := parseShape(dims)
	if err != nil {
		return Layout{}, err
	}
	dev, err := parseDevice(device)
	return Layout{DType: d, Shape: s, Device: dev}, err
}

// DataSize checks that a caller's nbytes is what the layout holds, and
// returns it, before the caller's memory is read.
func (l Layout) DataSize(nbytes uint64) (int, error) {
	want := l.Shape.Numel() * l.DType.Size()
	if nbytes != uint64(want) {
		return 0, Invalidf("data has %d bytes, shape %v of %s needs %d", nbytes, l.Shape, l.DType, want)
	}
	return want, nil
}

// TensorFromData is wt_tensor_from_data: a tensor holding a copy of data
// (row-major, little-endian, DataSize bytes).
func TensorFromData(l Layout, data []byte) (int64, error) {
	if _, err := l.DataSize(uint64(len(data))); err != nil {
		return 0, err
	}
	return NewOutput(core.FromBytes(l.DType, l.Shape, data, l.Device...))
}

// TensorZeros is wt_tensor_zeros.
func TensorZeros(l Layout) (int64, error) {
	return NewOutput(core.Zeros(l.Shape, l.DType, l.Device...))
}

// TensorNDim is wt_tensor_ndim.
func TensorNDim(h int64) (int, error) {
	t, err := TensorOf(h)
	if err != nil {
		return 0, err
	}
	return t.Rank(), nil
}

// TensorShape is wt_tensor_shape.
func TensorShape(h int64) ([]int, error) {
	t, err := TensorOf(h)
	if err != nil {
		return nil, err
	}
	return t.Shape(), nil
}

// TensorStrides is wt_tensor_strides (in elements).
func TensorStrides(h int64) ([]int, error) {
	t, err := TensorOf(h)
	if err != nil {
		return nil, err
	}
	return t.Strides(), nil
}

// TensorNumel is wt_tensor_numel.
func TensorNumel(h int64) (int, error) {
	t, err := TensorOf(h)
	if err != nil {
		return 0, err
	}
	return t.Numel(), nil
}

// TensorDType is wt_tensor_dtype.
func TensorDType(h int64) (core.DType, error) {
	t, err := TensorOf(h)
	if err != nil {
		return core.Invalid, err
	}
	return t.DType(), nil
}

// TensorDevice is wt_tensor_device.
func TensorDevice(h int64) (string, error) {
	t, err := TensorOf(h)
	if err != nil {
		return "", err
	}
	return t.Device().String(), nil
}

// TensorIsContiguous is wt_tensor_is_contiguous.
func TensorIsContiguous(h int64) (bool, error) {
	t, err := TensorOf(h)
	if err != nil {
		return false, err
	}
	return t.IsContiguous(), nil
}

// TensorHostSize is the byte count wt_tensor_to_host writes, for checking a
// caller's buffer before the device is waited for.
func TensorHostSize(h int64) (int, error) {
	t, err := TensorOf(h)
	if err != nil {
		return 0, err
	}
	return t.Numel() * t.DType().Size(), nil
}

// TensorToHost is wt_tensor_to_host: the elements, row-major, after the
// device's queued work. The bytes may be the tensor's own: copy them out.
func TensorToHost(h int64) ([]byte, error) {
	t, err := TensorOf(h)
	if err != nil {
		return nil, err
	}
	return t.Bytes()
}

// TensorContiguous is wt_tensor_contiguous.
func TensorContiguous(h int64, noGrad bool) (int64, error) {
	t, readOnly, err := Lookup(h)
	if err != nil {
		return 0, err
	}
	var res *core.Tensor
	underGrad(noGrad, func() { res = t.Contiguous() })
	return outputShared(t, readOnly, res)
}

// TensorToDevice is wt_tensor_to_device.
func TensorToDevice(h int64, device string, noGrad bool) (int64, error) {
	t, readOnly, err := Lookup(h)
	if err != nil {
		return 0, err
	}
	if device == "" {
		return 0, Invalidf("wt_tensor_to_device: device is NULL or empty")
	}
	dev, err := parseDevice(device)
	if err != nil {
		return 0, err
	}
	var res *core.Tensor
	underGrad(noGrad, func() { res = t.To(dev[0]) })
	return outputShared(t, readOnly, res)
}

// outputShared is NewOutput for a result that may share src's storage (a
// contiguous or same-device tensor is returned as is): memory imported
// read-only stays read-only through the new handle, so exporting it again
// cannot hand out a writable view of it.
func outputShared(src *core.Tensor, srcReadOnly bool, res *core.Tensor) (int64, error) {
	if err := res.Err(); err != nil {
		return 0, err
	}
	return NewHandle(res, srcReadOnly && res.Storage() == src.Storage()), nil
}
