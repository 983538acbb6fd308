package ir

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// Multi-head attention whose heads are transposed back and merged writes
// them in place on the CPU and WebGPU, and computes what the unfused graph
// computes: causal or not, short sequences (WebGPU's one-launch kernel)
// and long ones (its composed kernels; the CPU's several row blocks), more
// keys than queries. A transpose to another order is left to the ops.
func TestAttentionWritesItsHeadsTransposed(t *testing.T) {
	devs := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devs = append(devs, webgputest.Device)
	}
	for _, dev := range devs {
		t.Run(dev.String(), func(t *testing.T) { attentionWritesItsHeadsTransposed(t, dev) })
	}
}

func attentionWritesItsHeadsTransposed(t *testing.T, dev core.Device) {
	core.EnterNoGrad()
	defer func() { require.NoError(t, core.ExitNoGrad()) }()
	for _, c := range []struct {
		l, s, heads, e int
		causal         bool
		back           []int
		joined         int
	}{
		{8, 8, 2, 4, false, []int{0, 2, 1, 3}, 1},
		{5, 7, 3, 8, true, []int{0, 2, 1, 3}, 1},
		{6, 80, 2, 4, false, []int{0, 2, 1, 3}, 1},  // past the one-launch kernel
		{150, 90, 2, 8, true, []int{0, 2, 1, 3}, 1}, // three CPU row blocks
		{8, 8, 2, 4, false, []int{0, 1, 3, 2}, 0},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			heads := func(x *core.Tensor, l int) *core.Tensor {
				return c1("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, c1("reshape", core.Attrs{"shape": []int{2, l, c.heads, c.e}}, x))
			}
			mha := func(in []*core.Tensor) ([]*core.Tensor, error) {
				o := c1("scaled_dot_product_attention", core.Attrs{"is_causal": c.causal}, heads(in[0], c.l), heads(in[1], c.s), heads(in[1], c.s))
				o = c1("permute", core.Attrs{"dims": c.back}, o)
				return []*core.Tensor{c1("reshape", core.Attrs{"shape": []int{2, -1}}, o)}, nil
			}
			q, kv := randnOn(dev, 1, 2, c.l, c.heads*c.e), randnOn(dev, 2, 2, c.s, c.heads*c.e)
			g, err := Trace(mha, q, kv)
			require.NoError(t, err)
			want, err := g.Run(q, kv)
			require.NoError(t, err)
			rep, err := g.Fuse(dev)
			require.NoError(t, err)
			require.Equal(t, c.joined, rep.Attention, "%s", g)
			var got []*core.Tensor
			require.Zero(t, fallbacksDuring(func() { got, err = g.Run(q, kv) }), "a fused node ran as its original ops")
			require.NoError(t, err)
			require.True(t, slices.Equal(want[0].Shape(), got[0].Shape()))
			requireClose(t, want, got, 1e-4)
		})
	}
}
