package numerics

import (
	"math"

	"github.com/x448/float16"
)

// F16Bits converts to IEEE half precision, rounding to nearest even.
func F16Bits(f float32) uint16 { return uint16(float16.Fromfloat32(f)) }

// F16Float converts IEEE half precision to float32.
func F16Float(b uint16) float32 { return float16.Frombits(b).Float32() }

// BF16Bits converts to bfloat16, rounding to nearest even; NaN stays NaN.
func BF16Bits(f float32) uint16 {
	u := math.Float32bits(f)
	if f != f {
		return uint16(u>>16) | 0x40
	}
	u += 0x7FFF + (u>>16)&1
	return uint16(u >> 16)
}

// BF16Float converts bfloat16 to float32.
func BF16Float(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }
