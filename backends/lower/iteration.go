package lower

import "github.com/webtensor/webtensor/core"

// Iteration is a shape walked in row-major order with one stride vector per
// operand, simplified: size-1 dims dropped and dims that are contiguous in
// every operand merged, so most elementwise launches index in one dim.
type Iteration struct {
	Shape   []int
	Strides [][]int
	Offsets []int
}

// BroadcastStrides gives t's strides for walking shape: dims t lacks or
// holds once step by 0.
func BroadcastStrides(t *core.Tensor, shape core.Shape) []int {
	ts, st := t.Shape(), t.Strides()
	out := make([]int, len(shape))
	lead := len(shape) - len(ts)
	for d := range shape {
		if d < lead {
			continue
		}
		if ts[d-lead] != 1 {
			out[d] = st[d-lead]
		}
	}
	return out
}

// NewIteration walks shape over the operands ts (each broadcast to it).
func NewIteration(shape core.Shape, ts ...*core.Tensor) Iteration {
	it := Iteration{Offsets: make([]int, len(ts))}
	full := make([][]int, len(ts))
	for i, t := range ts {
		full[i] = BroadcastStrides(t, shape)
		it.Offsets[i] = t.Offset()
	}
	it.Shape, it.Strides = Coalesce(shape, full)
	return it
}

// Coalesce drops size-1 dims and merges each dim into the one before it
// when every operand steps across both evenly, returning the simplified
// shape and each operand's strides for it. Row-major indexes are the same
// in both, and fewer dims mean fewer divisions per index.
func Coalesce(shape []int, strides [][]int) ([]int, [][]int) {
	var out []int
	outSt := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		last := len(out) - 1
		merge := last >= 0
		for i := range strides {
			if merge && outSt[i][last] != strides[i][d]*n {
				merge = false
			}
		}
		if merge {
			out[last] *= n
			for i := range strides {
				outSt[i][last] = strides[i][d]
			}
			continue
		}
		out = append(out, n)
		for i := range strides {
			outSt[i] = append(outSt[i], strides[i][d])
		}
	}
	return out, outSt
}
