package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Integer aranges are exact in int64, beyond 2^53 and across the whole
// int64 range, and refuse values their dtype cannot hold (issue 26: they
// went through float64 and repeated values, came out empty or clamped).
func TestArangeIntegersAreExact(t *testing.T) {
	const big = 1 << 53
	cases := []struct {
		attrs core.Attrs
		want  []int64
	}{
		{core.Attrs{"start": big + 1, "stop": big + 4}, []int64{big + 1, big + 2, big + 3}},
		{core.Attrs{"start": 1 << 60, "stop": 1<<60 + 3}, []int64{1 << 60, 1<<60 + 1, 1<<60 + 2}},
		{core.Attrs{"start": int64(math.MinInt64), "stop": int64(math.MaxInt64), "step": 1 << 62},
			[]int64{math.MinInt64, -1 << 62, 0, 1 << 62}},
		{core.Attrs{"start": int64(math.MaxInt64), "stop": int64(math.MaxInt64 - 5), "step": -2},
			[]int64{math.MaxInt64, math.MaxInt64 - 2, math.MaxInt64 - 4}},
		{core.Attrs{"start": 5, "stop": -4, "step": -2}, []int64{5, 3, 1, -1, -3}},
		{core.Attrs{"start": 2.0, "stop": 5.0}, []int64{2, 3, 4}}, // floats holding integers
		{core.Attrs{"start": 3, "stop": 3}, []int64{}},
	}
	for _, c := range cases {
		x := core.Call1("arange", c.attrs)
		require.NoError(t, x.Err(), "%v", c.attrs)
		assert.Equal(t, core.I64, x.DType(), "%v", c.attrs)
		got, err := x.Int64s()
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%v", c.attrs)
	}
	f := core.Call1("arange", core.Attrs{"start": big + 1, "stop": big + 3, "dtype": core.F64})
	vals, err := f.Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{big + 1, big + 2}, vals, "rounded once from the exact integers")
}

func TestArangeRefusesWhatItCannotHold(t *testing.T) {
	for _, c := range []struct {
		attrs core.Attrs
		msg   string
	}{
		{core.Attrs{"start": 0, "stop": 1<<31 + 1, "step": 1 << 30, "dtype": core.I32}, "values from 0 to 2147483648 do not fit i32"},
		{core.Attrs{"start": -1, "stop": 2, "dtype": core.U8}, "values from -1 to 1 do not fit u8"},
		{core.Attrs{"start": 0, "stop": uint64(1 << 63), "step": 1 << 62}, `attribute "stop"`},
		{core.Attrs{"start": 0, "stop": 10, "step": 0}, "step must be non-zero"},
		{core.Attrs{"start": 0, "stop": -10, "step": 1}, "goes away from stop"},
		{core.Attrs{"start": 0, "stop": int64(math.MaxInt64)}, "too many elements"},
	} {
		_, err := core.Call("arange", nil, c.attrs)
		require.Error(t, err, "%v", c.attrs)
		assert.Contains(t, err.Error(), c.msg)
		assert.Contains(t, err.Error(), "arange")
	}
}
