package webgpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// physical is the WGSL element type that holds a dtype on the GPU.
func physical(d core.DType) string {
	switch d {
	case core.F32, core.F16, core.BF16:
		return "f32"
	case core.U32, core.U16, core.U8, core.Bool:
		return "u32"
	}
	return "i32"
}

// toPhysical widens numel little-endian elements of d to 32-bit words.
// i64 values outside the i32 range are refused: the GPU holds i64 as i32.
func toPhysical(d core.DType, data []byte) ([]byte, error) {
	size := d.Size()
	if len(data)%size != 0 {
		return nil, fmt.Errorf("webgpu: %d bytes is not a whole number of %v elements", len(data), d)
	}
	n := len(data) / size
	le := binary.LittleEndian
	switch d {
	case core.F32, core.I32, core.U32:
		return data, nil
	}
	out := make([]byte, 4*n)
	for i := range n {
		var w uint32
		switch d {
		case core.F16:
			w = math.Float32bits(numerics.F16Float(le.Uint16(data[2*i:])))
		case core.BF16:
			w = uint32(le.Uint16(data[2*i:])) << 16
		case core.I16:
			w = uint32(int32(int16(le.Uint16(data[2*i:]))))
		case core.I8:
			w = uint32(int32(int8(data[i])))
		case core.U8:
			w = uint32(data[i])
		case core.U16:
			w = uint32(le.Uint16(data[2*i:]))
		case core.Bool:
			if data[i] != 0 {
				w = 1
			}
		case core.I64:
			v := int64(le.Uint64(data[8*i:]))
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, fmt.Errorf("webgpu: i64 value %d (element %d) does not fit in i32, which is how the GPU holds i64; keep it on device cpu", v, i)
			}
			w = uint32(int32(v))
		default:
			return nil, fmt.Errorf("webgpu: dtype %v has no GPU layout", d)
		}
		le.PutUint32(out[4*i:], w)
	}
	return out, nil
}

// fromPhysical narrows 32-bit words back to d into dst (len(words)/4 elements).
func fromPhysical(d core.DType, words, dst []byte) error {
	n := len(words) / 4
	if len(dst) != n*d.Size() {
		return fmt.Errorf("webgpu: %d words do not fill %d bytes of %v", n, len(dst), d)
	}
	le := binary.LittleEndian
	switch d {
	case core.F32, core.I32, core.U32:
		copy(dst, words)
		return nil
	}
	for i := range n {
		w := le.Uint32(words[4*i:])
		switch d {
		case core.F16:
			le.PutUint16(dst[2*i:], numerics.F16Bits(math.Float32frombits(w)))
		case core.BF16:
			le.PutUint16(dst[2*i:], numerics.BF16Bits(math.Float32frombits(w)))
		case core.I16, core.U16:
			le.PutUint16(dst[2*i:], uint16(w))
		case core.I8, core.U8:
			dst[i] = byte(w)
		case core.Bool:
			dst[i] = 0
			if w != 0 {
				dst[i] = 1
			}
		case core.I64:
			le.PutUint64(dst[8*i:], uint64(int64(int32(w))))
		default:
			return fmt.Errorf("webgpu: dtype %v has no GPU layout", d)
		}
	}
	return nil
}
