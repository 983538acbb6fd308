package ir

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
)

// A diffusion ResNet block's conv(silu(group_norm(x))) becomes
// conv(group_norm{activation: silu}(x)) on the CPU and WebGPU, computing
// what the unfused graph computes, forward and (input, weight and bias)
// gradients; a group norm whose output is also read elsewhere keeps its
// SiLU separate.
func TestGroupNormTakesItsSiLU(t *testing.T) {
	devs := []core.Device{core.CPU}
	if webgputest.Present(t) {
		devs = append(devs, webgputest.Device)
	}
	for _, dev := range devs {
		t.Run(dev.String(), func(t *testing.T) {
			gw, gb := randnOn(dev, 2, 8).Detach().SetRequiresGrad(true), randnOn(dev, 3, 8).Detach().SetRequiresGrad(true)
			kw := randnOn(dev, 4, 8, 8, 3, 3)
			block := func(extra bool) func([]*core.Tensor) ([]*core.Tensor, error) {
				return func(in []*core.Tensor) ([]*core.Tensor, error) {
					h := c1("group_norm", core.Attrs{"num_groups": 4}, in[0], gw, gb)
					out := c1("conv2d", core.Attrs{"padding": []int{1, 1}}, c1("silu", nil, h), kw)
					if extra {
						out = c1("add", nil, out, h)
					}
					return []*core.Tensor{c1("sum", nil, out)}, nil
				}
			}
			for _, extra := range []bool{false, true} {
				x := randnOn(dev, 1, 2, 8, 6, 6).Detach().SetRequiresGrad(true)
				fn := block(extra)
				g, err := Trace(fn, x)
				require.NoError(t, err)
				rep, err := g.Fuse(dev)
				require.NoError(t, err)
				joined := 1
				if extra {
					joined = 0
				}
				require.Equal(t, joined, rep.Norms, "%s", g)
				grads := func(out []*core.Tensor) []*core.Tensor {
					for _, p := range []*core.Tensor{x, gw, gb} {
						p.ZeroGrad()
					}
					require.NoError(t, out[0].Backward())
					return []*core.Tensor{out[0].Detach(), x.Grad(), gw.Grad(), gb.Grad()}
				}
				got, err := g.Run(x)
				require.NoError(t, err)
				gotAll := grads(got)
				want, err := fn([]*core.Tensor{x})
				require.NoError(t, err)
				requireClose(t, grads(want), gotAll, 1e-3)
			}
		})
	}
}
