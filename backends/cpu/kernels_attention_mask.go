package cpu

import (
	"math"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// attentionMask is an attention mask for the f32 path, kept at its own
// (broadcastable) shape: a padding mask [B, 1, 1, S] is S values per batch
// item, where broadcasting it to the scores [B, H, L, S] first (as the
// float64 kernels do) was H*L times more memory than the scores it masks,
// and sent every BERT-style encoder to the float64 loops.
type attentionMask struct {
	add              []float32 // additive: a false bool is -inf (read only: may be the mask tensor's own storage)
	base             []int     // per batch entry, the offset of its L x S plane
	strideL, strideS int       // 0 along a broadcast dim
}

// newAttentionMask reads an f32 or bool mask that broadcasts to sh's
// scores; false when it does not (the float64 kernels then say why).
func newAttentionMask(m *core.Tensor, sh oprules.SDPAShapes) (*attentionMask, bool) {
	if m.DType() != core.F32 && m.DType() != core.Bool {
		return nil, false
	}
	full, shape := sh.Scores(), m.Shape()
	if len(shape) > len(full) {
		return nil, false
	}
	vals := maskAdditive(m)
	// A mask whose query rows are all one row is kept as that row:
	// transformers expands a padding mask [B, 1, 1, S] to [B, 1, L, S]
	// before an ONNX export, and the expanded form missed the small-head
	// tiles (they take a mask that depends on the key alone) and converted
	// L times the values.
	if r := len(shape) - 2; r >= 0 && shape[r] > 1 && shape[r+1] > 0 && rowsRepeat(vals, shape[r], shape[r+1]) {
		vals = firstRows(vals, shape[r], shape[r+1])
		shape = shape.Clone()
		shape[r] = 1
	}
	// Strides of the mask's dense copy, aligned right against the scores,
	// 0 where the mask has size 1 (or no dim at all).
	strides := make([]int, len(full))
	acc := 1
	for d := len(full) - 1; d >= 0; d-- {
		md := len(shape) - len(full) + d
		if md < 0 {
			continue
		}
		switch shape[md] {
		case full[d]:
			if shape[md] != 1 {
				strides[d] = acc
			}
		case 1:
		default:
			return nil, false
		}
		acc *= shape[md]
	}
	am := &attentionMask{add: vals, strideL: strides[len(full)-2], strideS: strides[len(full)-1]}
	nb := sh.Batch.Numel()
	am.base = make([]int, nb)
	idx := make([]int, len(sh.Batch))
	for b := range nb {
		off := 0
		for d, i := range idx {
			off += i * strides[d]
		}
		am.base[b] = off
		for d := len(idx) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < sh.Batch[d] {
				break
			}
			idx[d] = 0
		}
	}
	return am, true
}

// maskAdditive is m's values in logical order as what they add to the
// scores (a false bool: -inf). A dense f32 mask is read in place - the
// tensor is immutable and outlives the kernel call - where a float64 copy
// and a float32 one were made for every attention call (a 128-token
// encoder's expanded mask: 1.5 MB of fresh pages each layer).
func maskAdditive(m *core.Tensor) []float32 {
	n := m.Shape().Numel()
	if m.DType() == core.F32 && m.IsContiguous() {
		return f32view(host(m))[m.Offset():][:n:n]
	}
	vals := readF64(m)
	add := make([]float32, n)
	for i, v := range vals {
		switch {
		case m.DType() == core.Bool && v == 0:
			add[i] = float32(math.Inf(-1))
		case m.DType() == core.Bool:
		default:
			add[i] = float32(v)
		}
	}
	return add
}

// rowsRepeat reports whether, in each block of rows x cols values (both
// above zero), every row equals the first (NaN never does).
func rowsRepeat(vals []float32, rows, cols int) bool {
	for b := 0; b+rows*cols <= len(vals); b += rows * cols {
		first := vals[b : b+cols]
		for r := 1; r < rows; r++ {
			for j, v := range vals[b+r*cols : b+(r+1)*cols] {
				if v != first[j] {
					return false
				}
			}
		}
	}
	return true
}

// firstRows keeps the first row of each block of rows x cols values.
func firstRows(vals []float32, rows, cols int) []float32 {
	out := make([]float32, 0, len(vals)/rows)
	for b := 0; b+rows*cols <= len(vals); b += rows * cols {
		out = append(out, vals[b:b+cols]...)
	}
	return out
}

// none reports whether the mask adds zero everywhere (a padding mask of a
// batch without padding, as BERT-style encoders pass one for every batch).
func (am *attentionMask) none() bool {
	for _, v := range am.add {
		if v != 0 {
			return false
		}
	}
	return true
}

// apply adds the mask to the scores of batch entry b, query row i, over
// the first len(row) keys.
func (am *attentionMask) apply(b, i int, row []float32) {
	at := am.base[b] + i*am.strideL
	if am.strideS == 0 {
		c := am.add[at]
		for j := range row {
			row[j] += c
		}
		return
	}
	// The vector add: the Go loop was 3% of a MiniLM forward, whose
	// padding mask is one value a key.
	binF32(binAdd, row, row, am.add[at:at+len(row)])
}

// softmaxSafeF32 turns row into its softmax and returns its sum of
// exponentials before normalising (normalise false: the caller scales
// later). A row with every score -inf (every key masked) becomes zeros, as
// torch's safe softmax and the float64 kernels give; the sum is then 1 so
// that a later scaling leaves it zeros.
func softmaxSafeF32(row []float32, normalise bool) float64 {
	if hostKernels && len(row) > 0 {
		if s, ok := hostSoftmaxRowF32(row, row, normalise, true); ok {
			return s
		}
	}
	m, nan := extremeF32(true, false, row)
	if nan {
		m = float32(math.NaN())
	} else if math.IsInf(float64(m), -1) {
		clear(row)
		return 1
	}
	s := expSumF32(row, row, m)
	if normalise {
		axpbF32(row, row, float32(1/s), 0)
	}
	return s
}
