package webgpu_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// chainOps alternate so that a kernel binding one extra in another's place
// gives another answer (a sum of all of them would not notice).
var chainOps = []string{"add", "mul", "sub", "maximum"}

// chainTree is ((x0 op1 x1) op2 x2) ... over n leaves.
func chainTree(n int) *fusion.Expr {
	e := &fusion.Expr{Arg: 0}
	for i := 1; i < n; i++ {
		e = &fusion.Expr{Op: chainOps[i%len(chainOps)], Args: []*fusion.Expr{e, {Arg: i}}}
	}
	return e
}

// chainRef is chainTree computed op by op on the CPU.
func chainRef(prod *core.Tensor, extras []*core.Tensor) *core.Tensor {
	acc := prod
	for i, x := range extras {
		acc = core.Call1(chainOps[(i+1)%len(chainOps)], nil, acc, x)
	}
	return acc
}

// onGPU copies ts to the GPU.
func onGPU(ts []*core.Tensor) []*core.Tensor {
	out := make([]*core.Tensor, len(ts))
	for i, t := range ts {
		if t != nil {
			out[i] = t.To(gpu)
		}
	}
	return out
}

// An epilogue reads as many extras as the device's storage-buffer limit
// leaves beside its producer's operands and outputs (core.Capabilities),
// each in its own place, and one more is refused with the limit named.
func TestEpiloguesTakeAsManyExtrasAsTheDeviceBinds(t *testing.T) {
	b := needGPU(t)
	buffers := b.Capabilities().MaxKernelBuffers
	require.Equal(t, int(b.Limits().MaxStorageBuffersPerShaderStage), buffers)
	extrasOf := func(n int, shapes ...core.Shape) []*core.Tensor {
		out := make([]*core.Tensor, n)
		for i := range out {
			out[i] = core.FromFloat64s(core.F32, shapes[i%len(shapes)], randn(shapes[i%len(shapes)], uint64(40+i)), core.CPU)
		}
		return out
	}
	f32 := func(seed uint64, shape ...int) *core.Tensor {
		return core.FromFloat64s(core.F32, shape, randn(shape, seed), core.CPU)
	}
	x, w := f32(1, 5, 6), f32(2, 6, 7)
	img, kern, bias := f32(3, 1, 2, 5, 5), f32(4, 3, 2, 3, 3), f32(5, 3)
	cases := []struct {
		op     string
		inputs []*core.Tensor
		attrs  core.Attrs
		bound  int // buffers the producer binds besides the extras
		shapes []core.Shape
	}{
		{"matmul", []*core.Tensor{x, w}, nil, 3, []core.Shape{{7}, {5, 1}, {5, 7}}},
		{"conv2d", []*core.Tensor{img, kern, bias}, nil, 4, []core.Shape{{3, 1, 1}, {1, 3, 3, 3}}},
		{"conv2d", []*core.Tensor{img, kern}, nil, 4, []core.Shape{{1, 3, 3, 3}, {3, 3, 3}}},
		{"spmm", []*core.Tensor{
			core.FromSlice([]int64{0, 2, 3, 3, 5}, core.Shape{5}), core.FromSlice([]int64{0, 4, 2, 1, 3}, core.Shape{5}),
			f32(6, 5), f32(7, 5, 6)}, nil, 5, []core.Shape{{6}, {4, 1}, {4, 6}}},
		// Rows of a multiple of four take the vec4 kernels.
		{"matmul", []*core.Tensor{f32(8, 5, 8), f32(9, 8, 8)}, nil, 3, []core.Shape{{8}, {5, 8}}},
		{"spmm", []*core.Tensor{
			core.FromSlice([]int64{0, 2, 3, 3, 5}, core.Shape{5}), core.FromSlice([]int64{0, 4, 2, 1, 3}, core.Shape{5}),
			f32(10, 5), f32(11, 5, 8)}, nil, 5, []core.Shape{{8}, {4, 8}}},
	}
	for _, c := range cases {
		n := buffers - c.bound
		name := fmt.Sprintf("%s with %d inputs and %d extras", c.op, len(c.inputs), n)
		prod := core.Call1(c.op, c.attrs, c.inputs...)
		require.NoError(t, prod.Err(), name)
		extras := extrasOf(n, c.shapes...)
		got, err := b.FuseEpilogue(c.op, onGPU(c.inputs), c.attrs, chainTree(n+1), onGPU(extras))
		require.NoError(t, err, name)
		closeTo(t, got, chainRef(prod, extras), 1e-4)

		_, err = b.FuseEpilogue(c.op, onGPU(c.inputs), c.attrs, chainTree(n+2), onGPU(extrasOf(n+1, c.shapes...)))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), fmt.Sprintf("at most %d", n), name)
	}

	// A pair stores a second tree: one buffer less for extras.
	n := buffers - 4
	extras := extrasOf(n, core.Shape{7}, core.Shape{5, 7})
	also := &fusion.Expr{Op: "relu", Args: []*fusion.Expr{chainTree(n + 1)}}
	got, got2, err := b.FuseEpiloguePair("matmul", onGPU([]*core.Tensor{x, w}), nil, chainTree(n+1), also, onGPU(extras))
	require.NoError(t, err)
	want := chainRef(core.Call1("matmul", nil, x, w), extras)
	closeTo(t, got, want, 1e-4)
	closeTo(t, got2, core.Call1("relu", nil, want), 1e-4)
	_, _, err = b.FuseEpiloguePair("matmul", onGPU([]*core.Tensor{x, w}), nil, chainTree(n+2), also, onGPU(extrasOf(n+1, core.Shape{7})))
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("at most %d", n))
}
