package main

import (
	"github.com/webtensor/webtensor/abi"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// fuzzBytes hands out the fuzzer's bytes; past the end it gives zeros.
type fuzzBytes []byte

func (b *fuzzBytes) byte() byte {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return v
}

func (b *fuzzBytes) u64() uint64 {
	var v uint64
	for i := range 8 {
		v |= uint64(b.byte()) << (8 * i)
	}
	return v
}

var dlFuzzTypes = []struct {
	code, bits uint8
	d          core.DType
}{{dlFloat, 32, core.F32}, {dlFloat, 64, core.F64}, {dlFloat, 16, core.F16}, {dlBfloat, 16, core.BF16},
	{dlInt, 64, core.I64}, {dlInt, 32, core.I32}, {dlInt, 16, core.I16}, {dlInt, 8, core.I8},
	{dlUInt, 32, core.U32}, {dlUInt, 8, core.U8}, {dlUInt, 16, core.U16}, {dlUInt, 64, core.U64}, {dlBool, 8, core.Bool}}

func dlFuzzDType(code, bits uint8, lanes uint16) core.DType {
	for _, e := range dlFuzzTypes {
		if e.code == code && e.bits == bits && lanes == 1 {
			return e.d
		}
	}
	return core.Invalid
}

// outcome is what the library must do with a fuzzed struct.
type outcome int

const (
	mustAccept outcome = iota
	mustReject
	either // e.g. a huge extent next to a zero one: empty if accepted
)

// FuzzFromDLPack builds DLPack structs from fuzzer bytes. Layouts with small
// extents and strides get a real buffer covering exactly the elements they
// reach; huge or negative values are drawn only where the library must
// reject them (or where the tensor is empty), so nothing the library accepts
// can read outside the buffer.
func FuzzFromDLPack(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 3, 2, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 3, 0, 3, 0, 2, 0, 4, 0, 1, 1, 6, 1, 9, 0, 1, 0})
	f.Add([]byte{1, 1, 5, 3, 1, 0, 0, 3, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte{1, 0, 10, 0, 2, 9, 3, 2, 4, 1, 3, 2, 0, 0, 0})
	f.Add([]byte{0, 2, 0, 200, 7, 1, 2})
	f.Fuzz(func(t *testing.T, in []byte) {
		b := fuzzBytes(in)
		versioned := b.byte()&1 == 1
		want := mustAccept
		reject := func() { want = mustReject }

		// dtype: usually one we support, sometimes raw.
		spec := dlSpec{Major: 1, Minor: 1, DeviceType: dlCPU, Lanes: 1}
		if k := int(b.byte()); k < 4*len(dlFuzzTypes) {
			e := dlFuzzTypes[k%len(dlFuzzTypes)]
			spec.Code, spec.Bits = e.code, e.bits
		} else {
			spec.Code, spec.Bits, spec.Lanes = b.byte(), b.byte(), uint16(b.byte())
		}
		dtype := dlFuzzDType(spec.Code, spec.Bits, spec.Lanes)
		if dtype == core.Invalid {
			reject()
			dtype = core.U8 // still lay out a buffer
		}
		size := int64(dtype.Size())

		// flags: device, version, NULL shape/strides/data, read-only.
		fl := b.byte()
		if fl&1 != 0 {
			spec.DeviceType = uint32(b.byte() % 20)
			if spec.DeviceType != dlCPU && spec.DeviceType != dlCUDAHost {
				reject()
			}
		}
		if fl&2 != 0 && versioned {
			spec.Major = uint32(b.byte() % 4)
			if spec.Major != 1 {
				reject()
			}
		}
		if fl&64 != 0 {
			spec.Flags = flagReadOnly
		}

		ndim := int(b.byte() % 8)
		if fl&4 != 0 {
			ndim = int(int32(b.u64()))
		}
		spec.Ndim = int32(ndim)
		if ndim < 0 || ndim > abi.MaxRank {
			reject()
			ndim = 0
		}
		shape, strides := make([]int64, ndim), make([]int64, ndim)
		huge, empty, hugeStride := false, false, false
		for i := range ndim {
			x := b.byte()
			switch {
			case x < 250:
				shape[i] = int64(x % 5)
			case x < 253:
				shape[i] = -int64(b.u64()>>1) - 1 // negative
				reject()
			default:
				shape[i] = int64(1<<38 + b.u64()>>2) // too many elements unless the tensor is empty
				huge = true
			}
			empty = empty || shape[i] == 0
			s := b.byte()
			switch {
			case s < 250:
				strides[i] = int64(s%13) - 6
			default:
				strides[i] = int64(1<<62 + b.u64()>>2) // past any address
				if s&1 == 1 {
					strides[i] = -strides[i]
				}
				if shape[i] > 1 {
					hugeStride = true
				}
			}
		}
		// Like NumPy, the extents other than zero must multiply to within the
		// element limit even when a zero extent makes the tensor empty:
		// small extents over many dimensions can pass it too.
		huge = huge || nonzeroProductExceeds(shape, math.MaxInt32*64)
		spec.Shape, spec.Strides = shape, strides
		if fl&8 != 0 {
			spec.Strides = nil
			strides = core64(core.ContiguousStrides(core.Shape(toInts(shape))))
			hugeStride = false
		}
		if fl&16 != 0 {
			spec.Shape = nil
			if ndim > 0 {
				reject()
			}
		}
		switch {
		case want == mustReject:
		case huge && empty:
			want = either
		case huge:
			reject()
		case empty:
			// Nothing is read: data, strides and offset are not looked at.
		case hugeStride:
			reject()
		}

		// Lay the buffer out so the lowest element position is its start.
		// (Only a layout the library must accept has extents and strides
		// small enough for this arithmetic; any other gets one element.)
		var lo, hi int64
		readable := want == mustAccept && !empty
		for i := range ndim {
			if readable && shape[i] > 1 {
				if strides[i] > 0 {
					hi += strides[i] * (shape[i] - 1)
				} else {
					lo += strides[i] * (shape[i] - 1)
				}
			}
		}
		span := hi - lo + 1
		if span > 1<<22 {
			// A contiguous layout of a large valid shape (strides left to
			// the library) needs a real buffer of every element: too big to
			// build per input (it stalled the fuzzer), and not a layout
			// question the small cases do not already ask.
			t.Skipf("layout spans %d elements, more than the harness lays out a buffer for", span)
		}
		extra := int64(b.byte() % 4)
		misalign := int64(b.byte()) % size
		if misalign != 0 && readable {
			reject()
			readable = false
		}
		buf := make([]float64, span+extra+1)
		for i := range buf {
			buf[i] = float64(i % 100)
		}
		enc := core.EncodeF64(dtype, buf)
		data := dlCAlloc(len(enc) + 8)
		defer dlCFree(data)
		copy(unsafe.Slice((*byte)(data), len(enc)), enc)
		spec.Data = data
		spec.ByteOffset = uint64((extra-lo)*size + misalign)
		if fl&32 != 0 {
			spec.Data = nil
			if readable {
				reject()
				readable = false
			}
		}

		p := dlNewProducer(spec)
		defer dlCFree(p)
		h, st := importDLPack(versioned, dlProducerManaged(p, versioned), false)
		if st == statusInternal {
			t.Fatalf("internal error: %s", lastError())
		}
		if st != int32(statusOK) {
			require.NotEqual(t, mustAccept, want, "rejected a valid tensor: %s (spec %+v)", lastError(), spec)
			require.Zero(t, dlProducerCalls(p), "deleter ran after a failed import")
			return
		}
		require.NotEqual(t, mustReject, want, "accepted a malformed tensor (spec %+v)", spec)
		x, err := abi.TensorOf(h)
		require.NoError(t, err)
		require.Equal(t, dtype, x.DType())
		switch {
		case readable && nonzeroProductExceeds(shape, 1<<20):
			// Overlapping strides over many small dims make a valid view of
			// billions of elements on a small buffer (4^17 through rank 17):
			// accepted, as NumPy does, but reading it all back as float64
			// would take more memory than the machine has. Its
			// element count is checked instead.
			require.Equal(t, int64(x.Numel()), productOf(shape))
		case readable:
			got, err := x.Float64s()
			require.NoError(t, err)
			require.Equal(t, dlFuzzExpected(dtype, shape, strides, extra), got)
		default:
			require.Zero(t, x.Numel())
		}
		x.Storage().Release()
		require.NoError(t, abi.TensorFree(h))
		require.Equal(t, int64(1), dlProducerCalls(p))
	})
}

// dlFuzzExpected reads the layout the DLPack way: element i sits at
// first + sum(idx*stride), and buffer element k holds k % 100 in dtype d
// (so 1 for every non-zero bool).
func dlFuzzExpected(d core.DType, shape, strides []int64, first int64) []float64 {
	n := int64(1)
	for _, e := range shape {
		n *= e
	}
	out := make([]float64, 0, n)
	idx := make([]int64, len(shape))
	lo := int64(0)
	for i, e := range shape {
		if e > 1 && strides[i] < 0 {
			lo += strides[i] * (e - 1)
		}
	}
	for range n {
		pos := first - lo
		for i := range idx {
			pos += idx[i] * strides[i]
		}
		out = append(out, float64(pos%100))
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return core.DecodeF64(d, core.EncodeF64(d, out))
}

func toInts(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func core64(v []int) []int64 { return dlInt64s(v) }

// nonzeroProductExceeds reports whether the extents other than zero
// multiply past limit; negative extents are left to the caller.
func productOf(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func nonzeroProductExceeds(shape []int64, limit int64) bool {
	n := int64(1)
	for _, d := range shape {
		if d <= 0 {
			continue
		}
		if n > limit/d {
			return true
		}
		n *= d
	}
	return false
}
