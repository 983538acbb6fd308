package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The connectives' byte path (logicalBytes: bool, u8 and i8 operands,
// broadcast and strided in place) gives what the general path, which widens
// both operands to int64 first, gives: for broadcast shapes as an attention
// mask builds them, a transposed view, nonzero bytes other than 1, and a
// byte operand beside a float one (the general path's).
func TestLogicalBytesMatchesTheGeneralPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	bytes := func(dt core.DType, shape core.Shape) *core.Tensor {
		v := make([]int64, shape.Numel())
		for i := range v {
			v[i] = int64(rng.IntN(3)) * int64(rng.IntN(2)*2-1) // -2..2 with zeros, -1 and 2 among the nonzeros
		}
		return core.FromSlice(v, shape).Cast(dt)
	}
	cases := []struct {
		a, b core.Shape
		dts  [2]core.DType
	}{
		{core.Shape{1, 1, 128, 1}, core.Shape{8, 1, 1, 128}, [2]core.DType{core.Bool, core.Bool}},
		{core.Shape{5, 7}, core.Shape{5, 7}, [2]core.DType{core.U8, core.I8}},
		{core.Shape{}, core.Shape{3, 4}, [2]core.DType{core.Bool, core.I8}},
		{core.Shape{4, 1}, core.Shape{6}, [2]core.DType{core.I8, core.F32}},
	}
	for _, op := range []string{"logical_and", "logical_or", "logical_xor"} {
		for _, c := range cases {
			for _, transpose := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v%v/%v/transposed=%v", op, c.a, c.b, c.dts, transpose), func(t *testing.T) {
					a, b := bytes(c.dts[0], c.a), bytes(c.dts[1], c.b)
					if transpose && len(c.b) == 2 {
						b = bytes(c.dts[1], core.Shape{c.b[1], c.b[0]}).Permute(core.Attrs{"dims": []int{1, 0}})
					}
					got, err := core.Call(op, []*core.Tensor{a, b}, nil)
					require.NoError(t, err)
					// The general path's answer: the same op on the operands widened to i64.
					want, err := core.Call(op, []*core.Tensor{a.Cast(core.I64), b.Cast(core.I64)}, nil)
					require.NoError(t, err)
					gv, err := got[0].Int64s()
					require.NoError(t, err)
					wv, err := want[0].Int64s()
					require.NoError(t, err)
					require.Equal(t, wv, gv)
					require.Equal(t, want[0].Shape(), got[0].Shape())
				})
			}
		}
	}
}
