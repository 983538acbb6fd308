package kernelkit

import (
	"encoding/binary"

	"github.com/webtensor/webtensor/core"
)

// Int8x4Expr is dequantize_int8x4 as an elementwise expression in the GPU
// backends' dialect (backends/lower) over the operands Int8x4Operands
// gives: the word x0 shifted so that the element's byte is on top, then
// arithmetically back down (which sign-extends it), times the scale x2.
const Int8x4Expr = "(f32(bitcast<i32>(x0 << (24u - x1)) >> 24u) * x2)"

// Int8x4Operands lays dequantize_int8x4 out as a map over its output seen
// as (rows, words, 4): the packed words through a view that repeats each
// word 4 times, the byte shifts (0, 8, 16, 24) uploaded to b as a 4-element
// u32 tensor, the row scales broadcast along a row, and the output view.
// The caller releases the shift tensor (ops[1]) after the launch.
func Int8x4Operands(b core.Backend, packed, scale, out *core.Tensor) (ops [4]*core.Tensor, err error) {
	rows, words := packed.Shape()[0], packed.Shape()[1]
	shape := core.Shape{rows, words, 4}
	ps, ss := packed.Strides(), scale.Strides()
	raw := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(8*i))
	}
	st, err := b.Upload(core.U32, raw)
	if err != nil {
		return ops, err
	}
	ops[0] = core.WrapStorage(b, packed.Storage(), shape, []int{ps[0], ps[1], 0}, packed.Offset(), core.U32)
	ops[1] = core.WrapStorage(b, st, core.Shape{1, 1, 4}, []int{0, 0, 1}, 0, core.U32)
	ops[2] = core.WrapStorage(b, scale.Storage(), core.Shape{rows, 1, 1}, []int{ss[0], 0, 0}, scale.Offset(), core.F32)
	ops[3] = core.WrapStorage(b, out.Storage(), shape, []int{4 * words, 4, 1}, out.Offset(), core.F32)
	return ops, nil
}
