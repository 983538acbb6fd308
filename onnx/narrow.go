package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// ONNX element types webtensor has no dtype for are held widened into one
// it has, exactly: every value of the narrow type is a value of the held
// dtype, and a tensor of the narrow type carries only such values (see the
// package doc). The narrow type of each value travels beside the tensor
// (runState.types), so operators that produce one (Cast, CastLike,
// QuantizeLinear) round or wrap onto it, and operators that merely compute
// on it (Add on uint16) wrap their result back into its range.

// elemType is an ONNX element type (TensorProto.DataType).
type elemType = pb.TensorProto_DataType

// narrowType says how the importer holds one narrow element type.
type narrowType struct {
	held core.DType
	// bits is the storage width of one element in a TensorProto: 4- and
	// 2-bit types pack two or four elements a byte, low bits first.
	bits int
	// lo and hi bound an integer type's values.
	lo, hi int64
	// float is the encoding of a float type (nil for integer types).
	float *floatFormat
}

var narrowTypes = map[elemType]*narrowType{
	pb.TensorProto_UINT16:         {held: core.I32, bits: 16, lo: 0, hi: math.MaxUint16},
	pb.TensorProto_UINT64:         {held: core.I64, bits: 64, lo: 0, hi: math.MaxInt64},
	pb.TensorProto_INT4:           {held: core.I8, bits: 4, lo: -8, hi: 7},
	pb.TensorProto_UINT4:          {held: core.U8, bits: 4, lo: 0, hi: 15},
	pb.TensorProto_INT2:           {held: core.I8, bits: 2, lo: -2, hi: 1},
	pb.TensorProto_UINT2:          {held: core.U8, bits: 2, lo: 0, hi: 3},
	pb.TensorProto_FLOAT8E4M3FN:   {held: core.F32, bits: 8, float: newFloatFormat("FLOAT8E4M3FN", 4, 3, 7, nanAllOnes)},
	pb.TensorProto_FLOAT8E4M3FNUZ: {held: core.F32, bits: 8, float: newFloatFormat("FLOAT8E4M3FNUZ", 4, 3, 8, nanNegZero)},
	pb.TensorProto_FLOAT8E5M2:     {held: core.F32, bits: 8, float: newFloatFormat("FLOAT8E5M2", 5, 2, 15, ieee)},
	pb.TensorProto_FLOAT8E5M2FNUZ: {held: core.F32, bits: 8, float: newFloatFormat("FLOAT8E5M2FNUZ", 5, 2, 16, nanNegZero)},
	pb.TensorProto_FLOAT8E8M0:     {held: core.F32, bits: 8, float: newFloatFormat("FLOAT8E8M0", 8, 0, 127, exponentOnly)},
	pb.TensorProto_FLOAT4E2M1:     {held: core.F32, bits: 4, float: newFloatFormat("FLOAT4E2M1", 2, 1, 1, finiteOnly)},
}

// narrowOf is the narrow type et, or nil when et is a type webtensor has.
func narrowOf(et elemType) *narrowType { return narrowTypes[et] }

func typeName(et elemType) string {
	if name, ok := pb.TensorProto_DataType_name[int32(et)]; ok {
		return name
	}
	return fmt.Sprint(int32(et))
}

// heldType maps any element type the importer accepts to the dtype that
// holds it: a webtensor dtype of its own, or the widened one.
func heldType(t int32) (core.DType, error) {
	if nt := narrowOf(elemType(t)); nt != nil {
		return nt.held, nil
	}
	return dtypeOf(t)
}

// naturalType is the element type a dtype stands for when no narrow type
// is attached to the value.
func naturalType(dt core.DType) elemType {
	t, err := onnxType(dt)
	if err != nil {
		return pb.TensorProto_UNDEFINED
	}
	return t
}

// floatKind is how a small float format spends its special encodings.
type floatKind int

const (
	ieee         floatKind = iota // exponent all ones: infinities and NaNs (E5M2)
	nanAllOnes                    // only all ones (S.1111.111) is NaN, no infinities (E4M3FN)
	nanNegZero                    // the pattern of -0 is the only NaN (the FNUZ types)
	finiteOnly                    // every pattern a finite number (FLOAT4E2M1)
	exponentOnly                  // 2^(bits-127), 0xFF NaN, no sign, no zero (E8M0)
)

// floatFormat is a float type of 8 bits or fewer: its decoding table and
// the parameters the rounding in narrow_cast.go needs.
type floatFormat struct {
	name                string
	expBits, mantBits   int
	bias                int
	kind                floatKind
	values              []float64 // by bit pattern
	max                 float64   // largest finite value
	emin, emax          int       // exponents of the smallest normal and the largest binade
	representable       map[float64]bool
	hasNaN, hasInf, neg bool // neg: has a negative zero
}

func newFloatFormat(name string, expBits, mantBits, bias int, kind floatKind) *floatFormat {
	f := &floatFormat{name: name, expBits: expBits, mantBits: mantBits, bias: bias, kind: kind,
		representable: map[float64]bool{}}
	width := 1 + expBits + mantBits
	if kind == exponentOnly {
		width = expBits
	}
	f.values = make([]float64, 1<<width)
	for b := range f.values {
		v := f.decode(uint8(b))
		f.values[b] = v
		switch {
		case math.IsNaN(v):
			f.hasNaN = true
		case math.IsInf(v, 0):
			f.hasInf = true
		default:
			f.representable[v] = true
			f.max = max(f.max, v)
			if v == 0 && math.Signbit(v) {
				f.neg = true
			}
		}
	}
	f.emin = 1 - bias
	_, e := math.Frexp(f.max)
	f.emax = e - 1
	if kind == exponentOnly {
		f.emin = -bias
	}
	return f
}

// decode is the value of one bit pattern, following the format tables of
// ONNX's float8.md and float4.md.
func (f *floatFormat) decode(b uint8) float64 {
	if f.kind == exponentOnly {
		if b == 0xFF {
			return math.NaN()
		}
		return math.Ldexp(1, int(b)-f.bias)
	}
	signBit := uint8(1) << (f.expBits + f.mantBits)
	if f.kind == nanNegZero && b == signBit {
		return math.NaN()
	}
	e := int(b>>f.mantBits) & (1<<f.expBits - 1)
	m := int(b) & (1<<f.mantBits - 1)
	allOnes := e == 1<<f.expBits-1
	var v float64
	switch {
	case f.kind == ieee && allOnes && m == 0:
		v = math.Inf(1)
	case f.kind == ieee && allOnes, f.kind == nanAllOnes && allOnes && m == 1<<f.mantBits-1:
		return math.NaN()
	case e == 0:
		v = math.Ldexp(float64(m), 1-f.bias-f.mantBits)
	default:
		v = math.Ldexp(float64(1<<f.mantBits+m), e-f.bias-f.mantBits)
	}
	if b&signBit != 0 {
		v = -v
	}
	return v
}

// holds says whether v is a value of the format.
func (f *floatFormat) holds(v float64) bool {
	switch {
	case math.IsNaN(v):
		return f.hasNaN
	case math.IsInf(v, 0):
		return f.hasInf
	case v == 0 && math.Signbit(v):
		return f.neg
	}
	return f.representable[v]
}

// storageBytes is the size of n elements of et in a TensorProto.
func (nt *narrowType) storageBytes(n int) int {
	return (n*nt.bits + 7) / 8
}

// element reads element i of a narrow TensorProto's storage as an int64
// (integer types, sign-extended) or a bit pattern (float types).
func (nt *narrowType) element(raw []byte, i int) int64 {
	switch nt.bits {
	case 64:
		return int64(binary.LittleEndian.Uint64(raw[8*i:]))
	case 16:
		return int64(binary.LittleEndian.Uint16(raw[2*i:]))
	case 8:
		return int64(raw[i])
	}
	per := 8 / nt.bits
	v := int64(raw[i/per]>>(nt.bits*(i%per))) & (1<<nt.bits - 1)
	if nt.float == nil && nt.lo < 0 && v >= 1<<(nt.bits-1) {
		v -= 1 << nt.bits
	}
	return v
}

// widen turns a narrow TensorProto's storage (raw_data's layout) into the
// held dtype's little-endian bytes. A uint64 above 2^63-1, which i64
// cannot hold, is an error naming the element and its value.
func (nt *narrowType) widen(et elemType, raw []byte, n int) ([]byte, error) {
	out := make([]byte, n*nt.held.Size())
	for i := range n {
		v := nt.element(raw, i)
		switch nt.held {
		case core.F32:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(nt.float.values[v])))
		case core.I64:
			if v < 0 {
				return nil, fmt.Errorf("element %d of a %s tensor is %d, above 2^63-1: the importer holds %s as i64",
					i, typeName(et), uint64(v), typeName(et))
			}
			binary.LittleEndian.PutUint64(out[8*i:], uint64(v))
		case core.I32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		default: // i8, u8
			out[i] = byte(v)
		}
	}
	return out, nil
}

// narrowStorage is the storage of a narrow TensorProto given in typed
// fields: uint64_data for UINT64, int32_data otherwise, one element per
// entry for 8- and 16-bit types and one packed byte per entry for 4- and
// 2-bit types (as onnx.numpy_helper reads them).
func narrowStorage(tp *pb.TensorProto, nt *narrowType, n int) ([]byte, error) {
	size := nt.storageBytes(n)
	if nt.bits == 64 {
		v := tp.GetUint64Data()
		if len(v) != n {
			return nil, fmt.Errorf("uint64_data has %d values, shape %v needs %d", len(v), tp.GetDims(), n)
		}
		out := make([]byte, size)
		for i, x := range v {
			binary.LittleEndian.PutUint64(out[8*i:], x)
		}
		return out, nil
	}
	v := tp.GetInt32Data()
	entries, per := n, nt.bits/8
	if nt.bits < 8 {
		entries, per = size, 1
	}
	if len(v) != entries {
		return nil, fmt.Errorf("int32_data has %d values, shape %v of %s needs %d", len(v), tp.GetDims(), typeName(elemType(tp.GetDataType())), entries)
	}
	out := make([]byte, size)
	for i, x := range v {
		if per == 2 {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
		} else {
			out[i] = byte(x)
		}
	}
	return out, nil
}

// checkHeld says whether a held tensor carries only values of et: the
// check on graph inputs declared with a narrow type, which a caller
// passes in the held dtype. It reads the values on the host.
func checkHeld(t *core.Tensor, et elemType) error {
	nt := narrowOf(et)
	if nt == nil {
		return nil
	}
	if t.DType() != nt.held {
		return fmt.Errorf("dtype %s, the model declares %s (held as %s)", t.DType(), typeName(et), nt.held)
	}
	if nt.held == core.I64 {
		v, err := t.Int64s()
		if err != nil {
			return err
		}
		for i, x := range v {
			if x < 0 {
				return fmt.Errorf("element %d is %d: %s is held as i64, so values above 2^63-1 and negative ones cannot be passed",
					i, x, typeName(et))
			}
		}
		return nil
	}
	v, err := t.Float64s()
	if err != nil {
		return err
	}
	for i, x := range v {
		ok := nt.float != nil && nt.float.holds(x)
		if nt.float == nil {
			ok = x >= float64(nt.lo) && x <= float64(nt.hi)
		}
		if !ok {
			return fmt.Errorf("element %d is %v, which %s (held as %s) cannot hold", i, x, typeName(et), nt.held)
		}
	}
	return nil
}

// narrowNames lists the narrow types with their held dtypes, for errors.
func narrowNames() string {
	order := []elemType{pb.TensorProto_UINT16, pb.TensorProto_UINT64, pb.TensorProto_INT4, pb.TensorProto_UINT4,
		pb.TensorProto_INT2, pb.TensorProto_UINT2, pb.TensorProto_FLOAT8E4M3FN, pb.TensorProto_FLOAT8E4M3FNUZ,
		pb.TensorProto_FLOAT8E5M2, pb.TensorProto_FLOAT8E5M2FNUZ, pb.TensorProto_FLOAT8E8M0, pb.TensorProto_FLOAT4E2M1}
	s := ""
	for i, et := range order {
		if i > 0 {
			s += ", "
		}
		s += typeName(et) + " as " + narrowOf(et).held.String()
	}
	return s
}
