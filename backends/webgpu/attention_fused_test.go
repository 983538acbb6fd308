package webgpu_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Attention short enough for the one-launch kernel equals the CPU's: causal
// or not, q longer and shorter than k, values wider than keys, batch dims
// broadcast between q, k and v, q/k/v as permuted views of one projection
// (as a transformer makes them), more queries than a workgroup's threads,
// and shapes past the kernel's limits (the composed path). The tuner
// chooses between the two per device.
func TestShortAttentionMatchesCPU(t *testing.T) {
	needGPU(t)
	// Untuned, a shape that fits takes the one-launch kernel (the tuner
	// would pick whichever is faster here).
	t.Setenv("WEBTENSOR_TUNE", "off")
	cases := []struct {
		name             string
		q, k, v          core.Shape
		causal, permuted bool
	}{
		{"square", core.Shape{2, 3, 8, 4}, core.Shape{2, 3, 8, 4}, core.Shape{2, 3, 8, 4}, false, false},
		{"causal", core.Shape{2, 5, 4}, core.Shape{2, 5, 4}, core.Shape{2, 5, 4}, true, false},
		{"q longer, wide values", core.Shape{3, 12, 6}, core.Shape{3, 7, 6}, core.Shape{3, 7, 10}, true, false},
		{"broadcast batch", core.Shape{2, 4, 5, 8}, core.Shape{1, 4, 9, 8}, core.Shape{2, 1, 9, 8}, false, false},
		{"permuted views", core.Shape{2, 4, 6, 8}, core.Shape{2, 4, 6, 8}, core.Shape{2, 4, 6, 8}, false, true},
		{"many queries", core.Shape{1, 150, 16}, core.Shape{1, 20, 16}, core.Shape{1, 20, 16}, true, false},
		{"long keys (composed)", core.Shape{2, 5, 8}, core.Shape{2, 100, 8}, core.Shape{2, 100, 8}, false, false},
		{"one query", core.Shape{4, 1, 3}, core.Shape{4, 2, 3}, core.Shape{4, 2, 3}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			qv, kv, vv := randn(c.q, 1), randn(c.k, 2), randn(c.v, 3)
			run := func(dev core.Device) *core.Tensor {
				mk := func(s core.Shape, vals []float64) *core.Tensor {
					if !c.permuted {
						return core.FromFloat64s(core.F32, s, vals, dev)
					}
					// Stored [B, L, H, E], read as [B, H, L, E].
					st := core.Shape{s[0], s[2], s[1], s[3]}
					return core.Call1("permute", core.Attrs{"dims": []int{0, 2, 1, 3}}, core.FromFloat64s(core.F32, st, vals, dev))
				}
				return core.Call1("scaled_dot_product_attention", core.Attrs{"is_causal": c.causal},
					mk(c.q, qv), mk(c.k, kv), mk(c.v, vv))
			}
			closeTo(t, run(gpu).To(core.CPU), run(core.CPU), 1e-4)
		})
	}
}

// Attention that writes its heads transposed ([B, L, H, Ev], contiguous)
// equals the CPU's attention followed by the transpose, on the one-launch
// kernel and the composed one (keys past its limit), causal or not, with
// q/k/v as permuted views of one projection; operands that are not
// [batch, heads, L, E] are refused.
func TestTransposedAttentionMatchesCPU(t *testing.T) {
	b := needGPU(t)
	t.Setenv("WEBTENSOR_TUNE", "off")
	perm := core.Attrs{"dims": []int{0, 2, 1, 3}}
	for _, c := range []struct {
		name   string
		s      int
		causal bool
	}{{"one launch", 6, false}, {"one launch, causal", 6, true}, {"composed", 100, false}} {
		t.Run(c.name, func(t *testing.T) {
			qs, ks := core.Shape{2, 6, 3, 8}, core.Shape{2, c.s, 3, 8} // stored [B, L, H, E]
			qv, kv, vv := randn(qs, 1), randn(ks, 2), randn(ks, 3)
			heads := func(s core.Shape, vals []float64, dev core.Device) *core.Tensor {
				return core.Call1("permute", perm, core.FromFloat64s(core.F32, s, vals, dev))
			}
			attrs := core.Attrs{"is_causal": c.causal}
			got, err := b.AttentionTransposed(heads(qs, qv, gpu), heads(ks, kv, gpu), heads(ks, vv, gpu), nil, attrs)
			require.NoError(t, err)
			require.True(t, got.IsContiguous())
			want := core.Call1("permute", perm, core.Call1("scaled_dot_product_attention", attrs,
				heads(qs, qv, core.CPU), heads(ks, kv, core.CPU), heads(ks, vv, core.CPU)))
			closeTo(t, got.To(core.CPU), want, 1e-4)
		})
	}
	x := core.FromFloat64s(core.F32, core.Shape{2, 5, 4}, randn(core.Shape{2, 5, 4}, 4), gpu)
	_, err := b.AttentionTransposed(x, x, x, nil, nil)
	require.ErrorContains(t, err, "[batch, heads, L, E]")
}
