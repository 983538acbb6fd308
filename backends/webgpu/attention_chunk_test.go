//go:build !js

package webgpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// seeded is shape's worth of deterministic normal values.
func seeded(shape core.Shape, seed uint64) []float64 {
	return core.Gen{Shape: shape, DType: core.F64}.Generate(seed)
}

// floats is x's values; x's error, or a failed read, fails t.
func floats(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	require.NoError(t, err)
	return v
}

// Composed attention whose scores would exceed the step's budget runs its
// queries in chunks (and, when one query over every batch item is still
// too large, the items of the first batch dim one by one), giving the
// CPU's result: causal (the mask follows each chunk's first row), bool and
// float masks broadcast along the query axis or not, batch dims broadcast
// between q, k and v, and the transposed-heads output. 100 keys keep every
// case off the one-launch kernel.
func TestChunkedAttentionMatchesCPU(t *testing.T) {
	b := gpuBackend(t)
	t.Setenv("WEBTENSOR_TUNE", "off")
	const s = 100
	type operand struct {
		shape core.Shape
		dtype core.DType
	}
	cases := []struct {
		name    string
		q, k, v core.Shape
		mask    *operand
		causal  bool
		budget  uint64 // scores in bytes a chunk may hold
	}{
		{"query chunks", core.Shape{2, 3, 10, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 3, s, 5}, nil, false, 4 * 6 * s * 3},
		{"uneven chunks, causal", core.Shape{2, 3, 10, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 3, s, 8}, nil, true, 4 * 6 * s * 4},
		{"padding mask", core.Shape{2, 3, 10, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 3, s, 8}, &operand{core.Shape{2, 1, 1, s}, core.Bool}, false, 4 * 6 * s * 3},
		{"float mask per query", core.Shape{2, 3, 10, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 3, s, 8}, &operand{core.Shape{10, s}, core.F32}, false, 4 * 6 * s * 3},
		{"full bool mask", core.Shape{2, 3, 10, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 3, s, 8}, &operand{core.Shape{2, 3, 10, s}, core.Bool}, false, 4 * 6 * s * 2},
		{"batch items, broadcast k", core.Shape{3, 2, 10, 8}, core.Shape{1, 2, s, 8}, core.Shape{3, 2, s, 8}, &operand{core.Shape{3, 1, 10, s}, core.F32}, false, 4 * 2 * s * 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func(old uint64) { attentionChunkBytes = old }(attentionChunkBytes)
			attentionChunkBytes = c.budget
			vals := [][]float64{seeded(c.q, 1), seeded(c.k, 2), seeded(c.v, 3)}
			var maskVals []float64
			if c.mask != nil {
				maskVals = seeded(c.mask.shape, 4)
				for i, x := range maskVals {
					if c.mask.dtype == core.Bool {
						maskVals[i] = math.Max(0, math.Ceil(x)) // about half attend
					}
				}
				if c.mask.dtype == core.Bool && c.mask.shape[0] == 2 && c.mask.shape.Numel() == 2*s {
					for i := range s {
						maskVals[s+i] = 0 // the second item attends to nothing: zeros
					}
				}
			}
			run := func(dev core.Device) *core.Tensor {
				ins := []*core.Tensor{core.FromFloat64s(core.F32, c.q, vals[0], dev),
					core.FromFloat64s(core.F32, c.k, vals[1], dev), core.FromFloat64s(core.F32, c.v, vals[2], dev), nil}
				if c.mask != nil {
					ins[3] = core.FromFloat64s(c.mask.dtype, c.mask.shape, maskVals, dev)
				}
				return core.Call1("scaled_dot_product_attention", core.Attrs{"is_causal": c.causal}, ins...)
			}
			got := run(testGPU)
			require.NoError(t, got.Err())
			gv, wv := floats(t, got.To(core.CPU)), floats(t, run(core.CPU))
			require.Len(t, gv, len(wv))
			for i := range wv {
				require.InDelta(t, wv[i], gv[i], 1e-4, "element %d", i)
			}
		})
	}
	t.Run("transposed heads", func(t *testing.T) {
		defer func(old uint64) { attentionChunkBytes = old }(attentionChunkBytes)
		attentionChunkBytes = 4 * 6 * s * 3
		perm := core.Attrs{"dims": []int{0, 2, 1, 3}}
		qs, ks := core.Shape{2, 10, 3, 8}, core.Shape{2, s, 3, 8} // stored [B, L, H, E]
		heads := func(sh core.Shape, seed uint64, dev core.Device) *core.Tensor {
			return core.Call1("permute", perm, core.FromFloat64s(core.F32, sh, seeded(sh, seed), dev))
		}
		got, err := b.AttentionTransposed(heads(qs, 1, testGPU), heads(ks, 2, testGPU), heads(ks, 3, testGPU), nil, core.Attrs{"is_causal": true})
		require.NoError(t, err)
		want := core.Call1("permute", perm, core.Call1("scaled_dot_product_attention", core.Attrs{"is_causal": true},
			heads(qs, 1, core.CPU), heads(ks, 2, core.CPU), heads(ks, 3, core.CPU)))
		gv, wv := floats(t, got.To(core.CPU)), floats(t, want)
		for i := range wv {
			require.InDelta(t, wv[i], gv[i], 1e-4, "element %d", i)
		}
	})
	t.Run("no keys", func(t *testing.T) {
		defer func(old uint64) { attentionChunkBytes = old }(attentionChunkBytes)
		attentionChunkBytes = 4 * 6 * s
		q, kv := core.Shape{2, 3, 10, 8}, core.Shape{2, 3, 0, 8}
		run := func(dev core.Device) *core.Tensor {
			return core.Call1("scaled_dot_product_attention", nil, core.FromFloat64s(core.F32, q, seeded(q, 1), dev),
				core.FromFloat64s(core.F32, kv, nil, dev), core.FromFloat64s(core.F32, kv, nil, dev))
		}
		got, want := run(testGPU), run(core.CPU)
		require.NoError(t, want.Err())
		require.NoError(t, got.Err())
		require.Equal(t, floats(t, want), floats(t, got.To(core.CPU)))
	})
	t.Run("one query too large", func(t *testing.T) {
		defer func(old uint64) { attentionChunkBytes = old }(attentionChunkBytes)
		attentionChunkBytes = 4 * s / 2
		x := core.FromFloat64s(core.F32, core.Shape{1, 4, 8}, seeded(core.Shape{1, 4, 8}, 1), testGPU)
		kv := core.FromFloat64s(core.F32, core.Shape{1, s, 8}, seeded(core.Shape{1, s, 8}, 2), testGPU)
		out := core.Call1("scaled_dot_product_attention", nil, x, kv, kv)
		require.ErrorContains(t, out.Err(), "attention over 100 keys for 1 batch items needs 400 bytes of scores for one query")
	})
}

// Self-attention the size of a 64x64 diffusion UNet's first block (4096
// queries and keys, 3 heads: 192 MiB of f32 scores, past a software
// driver's 128 MiB binding) runs in query chunks and equals the CPU's.
func TestAttentionPastTheBindingLimitMatchesCPU(t *testing.T) {
	b := gpuBackend(t)
	t.Setenv("WEBTENSOR_TUNE", "off")
	sh := core.Shape{1, 3, 4096, 8}
	if uint64(sh[1]*sh[2]*sh[2]*4) <= min(attentionChunkBytes, b.limits.MaxStorageBufferBindingSize) {
		t.Fatalf("the case must exceed the chunk budget (%d bytes)", min(attentionChunkBytes, b.limits.MaxStorageBufferBindingSize))
	}
	run := func(dev core.Device) *core.Tensor {
		return core.Call1("scaled_dot_product_attention", nil, core.FromFloat64s(core.F32, sh, seeded(sh, 1), dev),
			core.FromFloat64s(core.F32, sh, seeded(sh, 2), dev), core.FromFloat64s(core.F32, sh, seeded(sh, 3), dev))
	}
	got := run(testGPU)
	require.NoError(t, got.Err())
	gv, wv := floats(t, got.To(core.CPU)), floats(t, run(core.CPU))
	for i := range wv {
		require.InDelta(t, wv[i], gv[i], 1e-4, "element %d", i)
	}
}

// The backward pass runs in the same chunks: dq and a float mask's
// gradient row by row, dk and dv summed over the chunks, all equal to the
// CPU's (one chunk, several, and items of the first batch dim one by one).
func TestChunkedAttentionBackwardMatchesCPU(t *testing.T) {
	gpuBackend(t)
	const s = 100
	for _, c := range []struct {
		name    string
		q, k, v core.Shape
		mask    core.Shape // f32, so its gradient is an output too; nil for none
		causal  bool
		budget  uint64
	}{
		{"one chunk", core.Shape{2, 3, 10, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 3, s, 5}, nil, true, 256 << 20},
		{"query chunks, causal", core.Shape{2, 3, 10, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 3, s, 5}, nil, true, 4 * 6 * s * 3},
		{"float mask per query", core.Shape{2, 3, 10, 8}, core.Shape{1, 3, s, 8}, core.Shape{2, 3, s, 8}, core.Shape{2, 1, 10, s}, false, 4 * 6 * s * 4},
		{"batch items", core.Shape{3, 2, 10, 8}, core.Shape{3, 2, s, 8}, core.Shape{1, 2, s, 8}, core.Shape{3, 2, 10, s}, false, 4 * 2 * s * 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func(old uint64) { attentionChunkBytes = old }(attentionChunkBytes)
			attentionChunkBytes = c.budget
			outShape := append(append(core.Shape{}, c.q[:len(c.q)-1]...), c.v[len(c.v)-1])
			outShape[0] = max(c.q[0], c.k[0], c.v[0])
			shapes := []core.Shape{c.q, c.k, c.v, outShape}
			if c.mask != nil {
				shapes = append(shapes, c.mask)
			}
			run := func(dev core.Device) []*core.Tensor {
				ins := make([]*core.Tensor, 5)
				for i, sh := range shapes { // q, k, v, the output's gradient, the mask
					ins[i] = core.FromFloat64s(core.F32, sh, seeded(sh, uint64(i+1)), dev)
				}
				outs, err := core.Call("_scaled_dot_product_attention_backward", ins, core.Attrs{"is_causal": c.causal})
				require.NoError(t, err)
				return outs
			}
			got, want := run(testGPU), run(core.CPU)
			require.Len(t, got, len(want))
			for i := range want {
				require.Equal(t, want[i].Shape(), got[i].Shape(), "output %d", i)
				gv, wv := floats(t, got[i].To(core.CPU)), floats(t, want[i])
				for e := range wv {
					require.InDelta(t, wv[e], gv[e], 1e-4, "output %d element %d", i, e)
				}
			}
		})
	}
}
