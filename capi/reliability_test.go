package main

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Integer bounds passed as WT_ATTR_INT reach arange exactly (issue 26: as
// floats, arange(2^53+1, 2^53+4) repeated values).
func TestArangeIntBoundsThroughTheABI(t *testing.T) {
	pinThread(t)
	const big = 1 << 53
	st, outs, _ := callOp("arange", false, nil, []goAttr{{Name: "start", Kind: 1, I: big + 1}, {Name: "stop", Kind: 1, I: big + 4}}, 1)
	require.Equal(t, int32(statusOK), st, lastError())
	defer callFree(outs[0])
	st, raw := callToHost(outs[0], 24)
	require.Equal(t, int32(statusOK), st, lastError())
	for i := range 3 {
		assert.Equal(t, uint64(big+1+i), binary.LittleEndian.Uint64(raw[8*i:]))
	}
}

// A sum over a broadcast view of 1e11 elements is answered through the ABI
// (it used to abort the process), and nonzero, whose answer does not fit,
// is WT_ERR_OUT_OF_MEMORY with the size in the message.
func TestHugeBroadcastViewThroughTheABI(t *testing.T) {
	pinThread(t)
	one := mustTensor(t, []float32{1}, 1)
	defer callFree(one)
	st, outs, _ := callOp("expand", false, []int64{one}, []goAttr{{Name: "shape", Kind: 5, Ints: []int64{1e11}}}, 1)
	require.Equal(t, int32(statusOK), st, lastError())
	view := outs[0]
	defer callFree(view)
	st, outs, _ = callOp("sum", false, []int64{view}, nil, 1)
	require.Equal(t, int32(statusOK), st, lastError())
	defer callFree(outs[0])
	_, raw := callToHost(outs[0], 4)
	assert.Equal(t, []float32{1e11}, f32s(raw))

	st, _, _ = callOp("nonzero", false, []int64{view}, nil, 1)
	assert.Equal(t, int32(statusOOM), st, lastError())
	assert.Contains(t, lastError(), "800000000000 bytes")
}
