package onnx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	pb "github.com/webtensor/webtensor/onnx/internal/onnxpb"
)

// Unique counts -0 and 0 as one value, and reports first occurrences
// when unsorted.
func TestUniqueEdgeCases(t *testing.T) {
	x := core.FromSlice([]float32{3, float32(math.Copysign(0, -1)), 0, 3, 1}, core.Shape{5}, core.CPU)
	out, err := runOne(t, "Unique", []*pb.AttributeProto{intAttribute("sorted", 0)}, 4, x)
	require.NoError(t, err)
	y, _ := out[0].Float64s()
	first, _ := out[1].Int64s()
	inverse, _ := out[2].Int64s()
	counts, _ := out[3].Int64s()
	assert.Equal(t, []float64{3, 0, 1}, y)
	assert.Equal(t, []int64{0, 1, 4}, first)
	assert.Equal(t, []int64{0, 1, 1, 0, 2}, inverse)
	assert.Equal(t, []int64{2, 2, 1}, counts)
}

func TestBitCastAndScatterErrorsNameTheNode(t *testing.T) {
	f := core.FromSlice([]float32{1, 2}, core.Shape{2}, core.CPU)
	_, err := runOne(t, "BitCast", []*pb.AttributeProto{intAttribute("to", int64(pb.TensorProto_INT64))}, 1, f)
	assert.ErrorContains(t, err, `node "n1" (BitCast): BitCast from FLOAT (32 bits) to INT64 (64 bits): the widths differ`)
	_, err = runOne(t, "BitCast", []*pb.AttributeProto{intAttribute("to", int64(pb.TensorProto_FLOAT8E4M3FN))}, 1, f)
	assert.ErrorContains(t, err, `node "n1" (BitCast): BitCast to FLOAT8E4M3FN is not supported`)
	cache := core.Zeros(core.Shape{1, 4, 2}, core.F32, core.CPU)
	_, err = runOne(t, "TensorScatter", []*pb.AttributeProto{strAttribute("mode", "ring")}, 1, cache, cache)
	assert.ErrorContains(t, err, `node "n1" (TensorScatter): mode "ring" is not linear or circular`)
	_, err = runOne(t, "TensorScatter", nil, 1, cache, core.Zeros(core.Shape{1, 5, 2}, core.F32, core.CPU))
	assert.ErrorContains(t, err, `node "n1" (TensorScatter): past_cache has shape [1 4 2] and update [1 5 2]`)
	_, err = runOne(t, "SwiGLU", nil, 1, f, core.Zeros(core.Shape{1, 2}, core.F32, core.CPU))
	assert.ErrorContains(t, err, `node "n1" (SwiGLU): A has shape [2] and B [1 2]: SwiGLU does not broadcast`)
}

// TensorScatter's circular mode wraps the write past the cache's end.
func TestTensorScatterCircularWraps(t *testing.T) {
	cache := core.Zeros(core.Shape{1, 3, 1}, core.F32, core.CPU)
	upd := core.FromSlice([]float32{7, 8}, core.Shape{1, 2, 1}, core.CPU)
	at := core.FromSlice([]int64{2}, core.Shape{1}, core.CPU)
	out, err := runOne(t, "TensorScatter", []*pb.AttributeProto{strAttribute("mode", "circular"), intAttribute("axis", 1)}, 1, cache, upd, at)
	require.NoError(t, err)
	got, _ := out[0].Float64s()
	assert.Equal(t, []float64{8, 0, 7}, got)
}

// An operator that decides on the host refuses to be traced rather than
// leave its example result in the graph as a constant.
func TestHostOperatorsRefuseTracing(t *testing.T) {
	x := core.FromSlice([]float32{2, 1, 2}, core.Shape{3}, core.CPU)
	mp := modelProto([]*pb.NodeProto{nodeProto("Unique", "u1", []string{"x"}, []string{"y"})},
		[]*pb.ValueInfoProto{vi("x", pb.TensorProto_FLOAT, 3)}, []*pb.ValueInfoProto{vi("y", pb.TensorProto_FLOAT)})
	m, err := loadCPU(t, mp)
	require.NoError(t, err)
	_, err = m.Compile(x)
	assert.ErrorContains(t, err, `node "u1" (Unique): Unique finds its values on the host, so it cannot be traced`)
}

func TestSTFTErrorsNameTheNode(t *testing.T) {
	x := core.Zeros(core.Shape{1, 8, 1}, core.F32, core.CPU)
	hop := core.FromSlice([]int64{0}, core.Shape{}, core.CPU)
	win := core.Zeros(core.Shape{4}, core.F32, core.CPU)
	_, err := runOne(t, "STFT", nil, 1, x, hop, win)
	assert.ErrorContains(t, err, `node "n1" (STFT): frame_step 0 and frame length 4 do not frame a signal of length 8`)
}
