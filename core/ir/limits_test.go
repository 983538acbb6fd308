package ir

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir/fusion"
)

// limitedFuser is a fusing backend that only decides: its capabilities say
// how many buffers one kernel binds, and it fuses add. The passes are
// checked against its limits; nothing runs on it.
type limitedFuser struct {
	core.Backend
	kind    string
	buffers int
}

func (f limitedFuser) Device() core.Device { return core.Device{Kind: f.kind} }
func (f limitedFuser) Capabilities() core.Capabilities {
	return core.Capabilities{MaxKernelBuffers: f.buffers, MaxKernelRank: 8}
}
func (limitedFuser) Fusable(op string, _ core.Attrs, _ core.DType) bool { return op == "add" }
func (limitedFuser) TakesEpilogue(op string) bool                       { return op == "matmul" || op == "spmm" }

var errNotRun = errors.New("limitedFuser runs nothing")

func (limitedFuser) FuseMap(*fusion.Expr, []*core.Tensor, core.Shape, core.DType) (*core.Tensor, error) {
	return nil, errNotRun
}
func (limitedFuser) FuseEpilogue(string, []*core.Tensor, core.Attrs, *fusion.Expr, []*core.Tensor) (*core.Tensor, error) {
	return nil, errNotRun
}

// limitedDevice registers a device whose kernels bind at most buffers.
func limitedDevice(t *testing.T, buffers int) core.Device {
	t.Helper()
	cpu, err := core.BackendFor(core.CPU)
	require.NoError(t, err)
	kind := fmt.Sprintf("ir-limited-%d", buffers)
	core.RegisterBackend(kind, -1, func() (core.Backend, error) {
		return limitedFuser{Backend: cpu, kind: kind, buffers: buffers}, nil
	})
	return core.Device{Kind: kind}
}

// sumOf adds the tensors one by one: a tree whose leaves are all of them.
func sumOf(ts ...*core.Tensor) *core.Tensor {
	s := ts[0]
	for _, x := range ts[1:] {
		s = c1("add", nil, s, x)
	}
	return s
}

func countOps(g *Graph, op string) int {
	n := 0
	for _, nd := range g.Nodes {
		if nd.Op == op {
			n++
		}
	}
	return n
}

func f32s(n int, shape ...int) []*core.Tensor {
	out := make([]*core.Tensor, n)
	for i := range out {
		out[i] = c1("randn", core.Attrs{"shape": shape, "seed": 100 + i})
	}
	return out
}

// How many leaves a fused tree and an epilogue may read comes from the
// device's capabilities: a tree's leaves leave room for its output and the
// backward kernels' upstream gradient; an epilogue's extras for its
// producer's operands and output.
func TestFusionSizesKernelsByTheDeviceLimits(t *testing.T) {
	eight, ten := limitedDevice(t, 8), limitedDevice(t, 10)
	tree := func(leaves int) *Graph {
		g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
			return []*core.Tensor{sumOf(in...)}, nil
		}, f32s(leaves, 4)...)
		require.NoError(t, err)
		return g
	}
	// A tree too wide for the device is cut: its widest part that fits is
	// fused.
	for _, c := range []struct {
		dev          core.Device
		leaves, read int
	}{{eight, 6, 6}, {eight, 7, 6}, {ten, 8, 8}, {ten, 9, 8}} {
		g := tree(c.leaves)
		_, err := g.FuseElementwise(c.dev)
		require.NoError(t, err)
		require.Equal(t, 1, countOps(g, "fused"), "%d leaves on %s", c.leaves, c.dev)
		for _, n := range g.Nodes {
			if n.Op == "fused" {
				assert.Len(t, n.Inputs, c.read, "%d leaves on %s", c.leaves, c.dev)
			}
		}
	}

	w := c1("randn", core.Attrs{"shape": []int{3, 4}, "seed": 1})
	matmulPlus := func(extras int) *Graph {
		g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
			return []*core.Tensor{sumOf(append([]*core.Tensor{c1("matmul", nil, in[0], w)}, in[1:]...)...)}, nil
		}, append(f32s(1, 2, 3), f32s(extras, 4)...)...)
		require.NoError(t, err)
		return g
	}
	indptr := core.FromSlice([]int64{0, 1, 2}, core.Shape{3})
	indices := core.FromSlice([]int64{1, 0}, core.Shape{2})
	values := core.FromSlice([]float32{2, 3}, core.Shape{2})
	spmmPlus := func(extras int) *Graph {
		g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
			prod := c1("spmm", nil, indptr, indices, values, in[0])
			return []*core.Tensor{sumOf(append([]*core.Tensor{prod}, in[1:]...)...)}, nil
		}, append(f32s(1, 2, 4), f32s(extras, 4)...)...)
		require.NoError(t, err)
		return g
	}
	for _, c := range []struct {
		name   string
		graph  func(int) *Graph
		dev    core.Device
		extras int
		folded bool
	}{
		// a, b and the output: 7 extras on a 10-buffer device (WebGPU's
		// default of 8 allowed 5, the number the IR used to assume).
		{"matmul", matmulPlus, ten, 7, true},
		{"matmul", matmulPlus, eight, 5, true},
		// indptr, indices, values, dense and the output.
		{"spmm", spmmPlus, eight, 3, true},
		{"spmm", spmmPlus, eight, 4, false},
		{"spmm", spmmPlus, ten, 5, true},
		{"spmm", spmmPlus, ten, 6, false},
	} {
		g := c.graph(c.extras)
		_, err := g.FuseElementwise(c.dev)
		require.NoError(t, err)
		require.Equal(t, 1, countOps(g, "fused"), "%s with %d extras on %s: the tree forms first", c.name, c.extras, c.dev)
		n, err := g.FuseEpilogues(c.dev)
		require.NoError(t, err)
		assert.Equal(t, c.folded, n == 1, "%s with %d extras on %s", c.name, c.extras, c.dev)
	}
}

// A product of more dims than the device's kernels index keeps its own
// kernel.
func TestEpilogueRespectsTheDeviceRank(t *testing.T) {
	dev := limitedDevice(t, 10)
	x := c1("randn", core.Attrs{"shape": []int{1, 1, 1, 1, 1, 1, 1, 2, 3}, "seed": 1})
	w := c1("randn", core.Attrs{"shape": []int{3, 4}, "seed": 2})
	b := c1("randn", core.Attrs{"shape": []int{4}, "seed": 3})
	g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("add", nil, c1("matmul", nil, in[0], w), b)}, nil
	}, x)
	require.NoError(t, err)
	n, err := g.FuseEpilogues(dev)
	require.NoError(t, err)
	assert.Zero(t, n, "a rank-9 product on a device of rank 8")
}
