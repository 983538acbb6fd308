package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
)

// The one rule for a float becoming an integer (issue 26, item 10): NaN is
// 0, other values truncate toward zero and saturate at the dtype's ends. It
// used to go through i64 and then wrap to the width (300.0 as u8 was 44,
// 3e9 as i32 was -1294967296), while the GPU saturated at i32.
func TestFloatToIntSaturatesAndMapsNaNToZero(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		d    core.DType
		in   float64
		want int64
	}{
		{core.I32, nan, 0}, {core.I32, inf, math.MaxInt32}, {core.I32, -inf, math.MinInt32},
		{core.I32, 3e9, math.MaxInt32}, {core.I32, -3e9, math.MinInt32}, {core.I32, -1.9, -1}, {core.I32, 2147483647.9, math.MaxInt32},
		{core.I64, inf, math.MaxInt64}, {core.I64, -inf, math.MinInt64}, {core.I64, 1e19, math.MaxInt64}, {core.I64, nan, 0},
		{core.I64, 9007199254740993, 9007199254740992}, {core.I64, -9.2233720368547758e18, math.MinInt64},
		{core.U8, 300, 255}, {core.U8, -5, 0}, {core.U8, -0.9, 0}, {core.U8, 255.9, 255},
		{core.I8, 200, 127}, {core.I8, -200, -128}, {core.I16, 40000, 32767},
		{core.U32, 5e9, math.MaxUint32}, {core.U32, -1, 0},
		{core.U16, 70000, math.MaxUint16}, {core.U16, -1, 0}, {core.U16, 65535.5, 65535},
		// u64 results are their bit pattern: 2^63 is MinInt64, 2^64-1 is -1.
		{core.U64, nan, 0}, {core.U64, -inf, 0}, {core.U64, -0.5, 0}, {core.U64, inf, -1}, {core.U64, 1e20, -1},
		{core.U64, 9223372036854775808, math.MinInt64}, {core.U64, 1.8446744073709550e19, -2048},
		{core.U64, 9007199254740993, 9007199254740992}, {core.U64, 3.9, 3},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, numerics.FloatToInt(c.d, c.in), "%v %v", c.d, c.in)
		// Storing a float into an integer element follows the same rule.
		b := make([]byte, c.d.Size())
		numerics.PutF64(c.d, b, 0, c.in)
		assert.Equal(t, c.want, numerics.GetI64(c.d, b, 0), "PutF64 %v %v", c.d, c.in)
	}
	// A cast follows it on the CPU backend's tensors too.
	x := core.FromFloat64s(core.F32, core.Shape{4}, []float64{nan, inf, 300, -7.5})
	v, err := x.Cast(core.U8).Int64s()
	assert.NoError(t, err)
	assert.Equal(t, []int64{0, 255, 255, 0}, v)
}

// A u64 reads back as itself through every exact path: GetF64 rounds once
// to nearest, Uint64s is exact, Int64s gives the bits.
func TestU64ValuesPast2To63(t *testing.T) {
	x := core.FromSlice([]uint64{1<<63 + 1, math.MaxUint64, 1<<53 + 1}, core.Shape{3})
	u, err := x.Uint64s()
	assert.NoError(t, err)
	assert.Equal(t, []uint64{1<<63 + 1, math.MaxUint64, 1<<53 + 1}, u)
	i, err := x.Int64s()
	assert.NoError(t, err)
	assert.Equal(t, []int64{math.MinInt64 + 1, -1, 1<<53 + 1}, i)
	f, err := x.Float64s()
	assert.NoError(t, err)
	assert.Equal(t, []float64{9223372036854775808, 18446744073709551616, 9007199254740992}, f)
	h := core.FromSlice([]uint16{65535, 1}, core.Shape{2})
	assert.Equal(t, core.U16, h.DType())
	hv, err := h.Uint64s()
	assert.NoError(t, err)
	assert.Equal(t, []uint64{65535, 1}, hv)
}
