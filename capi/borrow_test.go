package main

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBorrowedImportSharesMemoryAndSignalsRelease(t *testing.T) {
	pinThread(t)
	b := newCBlock(16)
	defer b.free()
	mem := b.bytes(16)
	for i, v := range []float32{1, 2, 3, 4} {
		binary.LittleEndian.PutUint32(mem[4*i:], math.Float32bits(v))
	}
	st, h := callBorrow(b, 0, 16, 1, []int64{2, 2}, false)
	require.Equal(t, int32(0), st, lastError())
	assert.Equal(t, int32(0), b.released())
	_, raw := callToHost(h, 16)
	assert.Equal(t, []float32{1, 2, 3, 4}, f32s(raw))

	binary.LittleEndian.PutUint32(mem[0:], math.Float32bits(10)) // the caller writes: the tensor sees it
	_, raw = callToHost(h, 16)
	assert.Equal(t, float32(10), f32s(raw)[0])

	st, outs, _ := callOp("add", false, []int64{h, h}, nil, 1)
	require.Equal(t, int32(0), st, lastError())
	_, raw = callToHost(outs[0], 16)
	assert.Equal(t, []float32{20, 4, 6, 8}, f32s(raw))
	require.Equal(t, int32(0), callFree(outs[0]))
	require.Equal(t, int32(0), callFree(h))
	dlEventually(t, "the released flag", func() bool { return b.released() == 1 })
}

func TestBorrowedImportRefusesBadInput(t *testing.T) {
	pinThread(t)
	b := newCBlock(16)
	defer b.free()
	cases := []struct {
		name           string
		offset, nbytes int
		dtype          int32
		shape          []int64
		noFlag         bool
		want           string
	}{
		{"no flag", 0, 16, 1, []int64{4}, true, "out or released is NULL"},
		{"size mismatch", 0, 12, 1, []int64{4}, false, "data has 12 bytes, shape [4] of f32 needs 16"},
		{"misaligned", 2, 8, 1, []int64{2}, false, "is not aligned to 4 bytes for f32"},
		{"bad dtype", 0, 16, 99, []int64{4}, false, "unknown dtype code 99"},
		{"negative dim", 0, 16, 1, []int64{-4}, false, "dimension 0 of the shape is -4"},
	}
	for _, c := range cases {
		st, _ := callBorrow(b, c.offset, c.nbytes, c.dtype, c.shape, c.noFlag)
		assert.Equal(t, int32(statusInvalid), st, c.name)
		assert.Contains(t, lastError(), c.want, c.name)
	}
	st, h := callBorrow(b, 0, 0, 1, []int64{0, 3}, false)
	require.Equal(t, int32(0), st, lastError())
	assert.Equal(t, int32(1), b.released(), "nothing borrowed for an empty tensor")
	require.Equal(t, int32(0), callFree(h))
}
