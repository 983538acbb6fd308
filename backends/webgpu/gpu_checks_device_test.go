package webgpu_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// checkCase is one op call whose data the backend must check.
type checkCase struct {
	name  string
	op    string
	attrs core.Attrs
	ins   []*core.Tensor // on the CPU; the GPU call gets copies
	fails bool           // whether the CPU refuses it
}

// The data checks that run on the GPU (indices, class targets,
// probabilities) accept what the CPU accepts with the same results, and
// refuse what it refuses with its message, naming the first bad value.
func TestDeviceChecksAgreeWithTheCPU(t *testing.T) {
	webgputest.Need(t)
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{3, 2})
	i64 := func(v ...int64) *core.Tensor { return core.FromSlice(v, core.Shape{len(v)}) }
	i32 := func(v ...int32) *core.Tensor { return core.FromSlice(v, core.Shape{len(v)}) }
	u32 := func(v ...uint32) *core.Tensor { return core.FromSlice(v, core.Shape{len(v)}) }
	rows := func(v ...int64) *core.Tensor { return core.FromSlice(v, core.Shape{len(v) / 2, 2}) }
	logits := core.FromSlice([]float32{0.1, 0.2, 0.3, 1, 0, -1}, core.Shape{2, 3})
	probs := func(v ...float32) *core.Tensor { return core.FromSlice(v, core.Shape{len(v)}) }
	cases := []checkCase{
		{"index_select ok", "index_select", core.Attrs{"axis": 0}, []*core.Tensor{x, i64(2, 0, 1)}, false},
		{"index_select past the end", "index_select", core.Attrs{"axis": 0}, []*core.Tensor{x, i64(0, 3, 7)}, true},
		{"index_select negative", "index_select", core.Attrs{"axis": 0}, []*core.Tensor{x, i32(1, -1)}, true},
		{"index_select u32 past i32", "index_select", core.Attrs{"axis": 0}, []*core.Tensor{x, u32(1, 3_000_000_000)}, true},
		{"gather ok", "gather", core.Attrs{"axis": 1}, []*core.Tensor{x, rows(1, 0, 0, 0, 1, 1)}, false},
		{"gather past the end", "gather", core.Attrs{"axis": 1}, []*core.Tensor{x, rows(1, 0, 2, 0, 1, 1)}, true},
		{"gather negative", "gather", core.Attrs{"axis": -1}, []*core.Tensor{x, rows(1, 0, -1, 0, 1, 1)}, true},
		{"gather axis 0 past the end", "gather", core.Attrs{"axis": 0}, []*core.Tensor{x, rows(0, 1, 3, 0)}, true},
		{"gather u32 past i32", "gather", core.Attrs{"axis": 0}, []*core.Tensor{x, core.FromSlice([]uint32{0, 3_000_000_000}, core.Shape{1, 2})}, true},
		{"take_along_axis wraps -2", "take_along_axis", core.Attrs{"axis": 1}, []*core.Tensor{x, rows(-2, -1, 0, 1, -1, -2)}, false},
		{"take_along_axis -3", "take_along_axis", core.Attrs{"axis": 1}, []*core.Tensor{x, rows(-2, -1, 0, -3, -1, -2)}, true},
		{"embedding ok", "embedding", nil, []*core.Tensor{x, rows(2, 1, 0, 2)}, false},
		{"embedding past the end", "embedding", nil, []*core.Tensor{x, rows(2, 1, 3, 2)}, true},
		{"cross_entropy ok", "cross_entropy", nil, []*core.Tensor{logits, i64(2, 0)}, false},
		{"cross_entropy ignored", "cross_entropy", core.Attrs{"ignore_index": -100}, []*core.Tensor{logits, i64(-100, 1)}, false},
		{"cross_entropy past C", "cross_entropy", nil, []*core.Tensor{logits, i64(0, 3)}, true},
		{"nll_loss negative", "nll_loss", nil, []*core.Tensor{logits, i64(-1, 0)}, true},
		{"cross_entropy ignore past i32", "cross_entropy", core.Attrs{"ignore_index": int64(math.MaxInt32) + 5}, []*core.Tensor{logits, i64(1, -1)}, true},
		{"bernoulli ok", "bernoulli", core.Attrs{"seed": 3}, []*core.Tensor{probs(0, 0.5, 1)}, false},
		{"bernoulli above 1", "bernoulli", core.Attrs{"seed": 3}, []*core.Tensor{probs(0.5, 1.5)}, true},
		{"bernoulli NaN", "bernoulli", core.Attrs{"seed": 3}, []*core.Tensor{probs(0.5, float32(math.NaN()))}, true},
		{"one_hot ok", "one_hot", core.Attrs{"num_classes": 4}, []*core.Tensor{i64(3, 0, 1)}, false},
		{"one_hot inferred", "one_hot", nil, []*core.Tensor{i64(3, 0, 5)}, false},
		{"one_hot past num_classes", "one_hot", core.Attrs{"num_classes": 3}, []*core.Tensor{i64(0, 3)}, true},
		{"one_hot inferred negative", "one_hot", nil, []*core.Tensor{i64(2, -1)}, true},
		{"_segment_gather ok", "_segment_gather", nil, []*core.Tensor{x, i64(2, 2, 0)}, false},
		{"_segment_gather past the end", "_segment_gather", nil, []*core.Tensor{x, i64(0, 3)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gins := make([]*core.Tensor, len(c.ins))
			for i, in := range c.ins {
				gins[i] = in.To(gpu)
				require.NoError(t, gins[i].Err())
			}
			want, wantErr := core.Call(c.op, c.ins, c.attrs)
			got, gotErr := core.Call(c.op, gins, c.attrs)
			if c.fails {
				require.Error(t, wantErr, "the CPU accepts this case")
				require.Error(t, gotErr, "the GPU accepted what the CPU refuses: %v", wantErr)
				assert.Equal(t, wantErr.Error(), gotErr.Error())
				return
			}
			require.NoError(t, wantErr)
			require.NoError(t, gotErr)
			require.Len(t, got, len(want))
			for i := range want {
				w, err := want[i].Float64s()
				require.NoError(t, err)
				g, err := got[i].Float64s()
				require.NoError(t, err)
				assert.InDeltaSlice(t, w, g, 1e-5, "output %d", i)
			}
		})
	}
}

// Index checks no longer count as host work, the segment reductions (which
// bucket rows on the host) do, with their declared reason, and the CSR
// products do once per structure.
func TestHostWorkIsCounted(t *testing.T) {
	webgputest.Need(t)
	dev := core.Device{Kind: "webgpu"}
	x := core.FromSlice([]float32{1, 2, 3, 4, 5, 6}, core.Shape{3, 2}).To(dev)
	ids := core.FromSlice([]int64{0, 1, 1}, core.Shape{3}).To(dev)
	core.ResetFallbacks()
	require.NoError(t, core.Call1("index_select", core.Attrs{"axis": 0}, x, ids).Err())
	assert.Empty(t, core.Fallbacks(), "index_select checks its indices on the GPU")

	for range 2 {
		require.NoError(t, core.Call1("segment_sum", core.Attrs{"num_segments": 2}, x, ids).Err())
	}
	indptr := core.FromSlice([]int64{0, 1, 3}, core.Shape{3}).To(dev)
	cols := core.FromSlice([]int64{1, 0, 2}, core.Shape{3}).To(dev)
	vals := core.FromSlice([]float32{1, 2, 3}, core.Shape{3}).To(dev)
	for range 3 {
		require.NoError(t, core.Call1("spmm", nil, indptr, cols, vals, x).Err())
	}
	fb := core.Fallbacks()
	reason := core.HostWorkReason("webgpu", "segment_sum")
	require.NotEmpty(t, reason)
	assert.Equal(t, []core.Fallback{
		{Device: dev.String(), Op: "segment_sum", Count: 2, Kind: core.FallbackHost, Reason: reason},
		{Device: dev.String(), Op: "spmm", Count: 1, Kind: core.FallbackHost, Reason: core.HostWorkReason("webgpu", "spmm")},
	}, fb)
	assert.Zero(t, core.FallbackCount(dev), "host work is not a CPU fallback")
}
