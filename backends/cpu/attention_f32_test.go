package cpu_test

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The f32 attention products (kernels_attention_f32.go) against the
// float64 kernels on transformer-sized heads, forward and backward, plain
// and causal, with L != S, and with q, k and v the transposed views a
// multi-head layer passes ([B, L, H, E] read as [B, H, L, E]); the
// 150-row case spans three of the forward pass's row blocks, the last
// partial, and a causal block there scores only the keys it can see; the
// head of 8 values takes the transposed P V product, and heads of 8 or
// 16 without a causal cut take the sixteen-query tiles
// (kernels_attention_small.go), the last tile partial.
func TestAttentionF32MatchesFloat64(t *testing.T) {
	randn := func(seed int, shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed})
	}
	heads := func(seed, l, e int) *core.Tensor {
		return core.Call1("transpose", core.Attrs{"dim0": 1, "dim1": 2}, randn(seed, 2, l, 3, e))
	}
	for _, size := range [][4]int{{40, 56, 16, 24}, {150, 130, 16, 24}, {150, 70, 8, 8}, {150, 130, 8, 16}, {33, 20, 16, 8}, {150, 61, 32, 32}, {8, 8, 64, 64}, {5, 7, 40, 72}} {
		for _, views := range []bool{false, true} {
			for _, causal := range []bool{false, true} {
				L, S, E, Ev := size[0], size[1], size[2], size[3]
				q, k, v := randn(1, 2, 3, L, E), randn(2, 2, 3, S, E), randn(3, 2, 3, S, Ev)
				if views {
					q, k, v = heads(1, L, E), heads(2, S, E), heads(3, S, Ev)
					require.False(t, q.IsContiguous())
				}
				g := randn(4, 2, 3, L, Ev)
				attrs := core.Attrs{"is_causal": causal}
				f64 := func(x *core.Tensor) *core.Tensor { return x.Cast(core.F64) }
				want, err := core.Call("_scaled_dot_product_attention_backward", []*core.Tensor{f64(q), f64(k), f64(v), f64(g)}, attrs)
				require.NoError(t, err)
				got, err := core.Call("_scaled_dot_product_attention_backward", []*core.Tensor{q, k, v, g}, attrs)
				require.NoError(t, err)
				fwdWant := core.Call1("scaled_dot_product_attention", attrs, f64(q), f64(k), f64(v))
				fwdGot := core.Call1("scaled_dot_product_attention", attrs, q, k, v)
				pairs := [][2]*core.Tensor{{fwdGot, fwdWant}, {got[0], want[0]}, {got[1], want[1]}, {got[2], want[2]}}
				for n, p := range pairs {
					a, err := p[0].Float64s()
					require.NoError(t, err)
					b, err := p[1].Float64s()
					require.NoError(t, err)
					require.Len(t, a, len(b))
					for i := range a {
						require.InDelta(t, b[i], a[i], 1e-5+1e-4*math.Abs(b[i]), "size %v, views %v, causal %v, output %d, element %d", size, views, causal, n, i)
					}
				}
			}
		}
	}
}

// A mask that hides nothing (a padding mask of a batch without padding,
// bool all true or f32 all zero) gives the unmasked result bit for bit
// (the tiles then apply); one hidden key still counts, against float64.
func TestAttentionF32MaskThatHidesNothing(t *testing.T) {
	randn := func(seed int, shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed})
	}
	q, k, v := randn(1, 2, 3, 40, 32), randn(2, 2, 3, 24, 32), randn(3, 2, 3, 24, 32)
	want, err := core.Call1("scaled_dot_product_attention", nil, q, k, v).Float32s()
	require.NoError(t, err)
	visible := make([]bool, 2*24)
	for i := range visible {
		visible[i] = true
	}
	for name, mask := range map[string]*core.Tensor{
		"bool": core.FromSlice(visible, core.Shape{2, 1, 1, 24}),
		"f32":  core.Call1("zeros", core.Attrs{"shape": []int{2, 1, 1, 24}}),
	} {
		got, err := core.Call1("scaled_dot_product_attention", nil, q, k, v, mask).Float32s()
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
	visible[5] = false
	mask := core.FromSlice(visible, core.Shape{2, 1, 1, 24})
	f64 := func(x *core.Tensor) *core.Tensor { return x.Cast(core.F64) }
	got, err := core.Call1("scaled_dot_product_attention", nil, q, k, v, mask).Float64s()
	require.NoError(t, err)
	ref, err := core.Call1("scaled_dot_product_attention", nil, f64(q), f64(k), f64(v), mask).Float64s()
	require.NoError(t, err)
	for i := range ref {
		require.InDelta(t, ref[i], got[i], 1e-5+1e-4*math.Abs(ref[i]), "element %d", i)
	}
	unmasked, err := core.Call1("scaled_dot_product_attention", nil, q, k, v).Float64s()
	require.NoError(t, err)
	require.NotEqual(t, unmasked, got, "the hidden key made no difference")
}

// Key-padding masks ([B, 1, 1, S]: bool, and f32 with a float32-minimum
// entry, a positive one and a row of float32 minimums) take the tiles for
// heads of 8, 16 and 32, plain and as transposed views, the last tile
// partial: against float64, an item whose keys are all hidden gives zeros
// (the safe softmax) and one whose keys are all at the float32 minimum
// averages them.
func TestAttentionF32KeyPaddingMasks(t *testing.T) {
	randn := func(seed int, shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed})
	}
	const B, H, L, S = 3, 2, 37, 29
	visible := make([]bool, B*S)
	add := make([]float32, B*S)
	for j := range S {
		visible[j] = j < 20     // item 0: padding after 20 keys
		visible[S+j] = j%3 != 1 // item 1: holes
		add[j] = []float32{0, -math.MaxFloat32, 0.5}[j%3]
		add[S+j] = float32(-j) / 4
		add[2*S+j] = -math.MaxFloat32 // item 2: every key at the minimum
	} // item 2 of the bool mask: every key hidden
	masks := map[string]*core.Tensor{
		"bool": core.FromSlice(visible, core.Shape{B, 1, 1, S}),
		"f32":  core.FromSlice(add, core.Shape{B, 1, 1, S}),
	}
	for _, e := range []int{8, 16, 32} {
		for _, views := range []bool{false, true} {
			q, k, v := randn(1, B, H, L, e), randn(2, B, H, S, e), randn(3, B, H, S, e)
			if views {
				heads := func(seed, n int) *core.Tensor {
					return core.Call1("transpose", core.Attrs{"dim0": 1, "dim1": 2}, randn(seed, B, n, H, e))
				}
				q, k, v = heads(1, L), heads(2, S), heads(3, S)
			}
			f64 := func(x *core.Tensor) *core.Tensor { return x.Cast(core.F64) }
			for name, mask := range masks {
				got, err := core.Call1("scaled_dot_product_attention", nil, q, k, v, mask).Float64s()
				require.NoError(t, err, name)
				ref := mask
				if mask.DType() == core.F32 {
					ref = f64(mask)
				}
				want, err := core.Call1("scaled_dot_product_attention", nil, f64(q), f64(k), f64(v), ref).Float64s()
				require.NoError(t, err, name)
				for i := range want {
					require.InDelta(t, want[i], got[i], 1e-5+1e-4*math.Abs(want[i]), "e %d, views %v, %s mask, element %d", e, views, name, i)
				}
				if name == "bool" {
					for _, x := range got[2*H*L*e:] {
						require.Zero(t, x, "every key hidden")
					}
				}
			}
		}
	}
}

// A key-padding mask expanded along the queries ([B, 1, L, S], every row
// the same: what transformers exports to ONNX) is the padding mask it
// repeats: the same tiles, bit for bit. One whose rows differ (a causal
// cut written out) still masks row by row.
func TestAttentionF32ExpandedPaddingMask(t *testing.T) {
	randn := func(seed int, shape ...int) *core.Tensor {
		return core.Call1("randn", core.Attrs{"shape": shape, "seed": seed})
	}
	const B, H, L, S, E = 2, 3, 21, 19, 32
	add := make([]float32, B*S)
	for j := range S {
		if j >= 11 {
			add[j] = -math.MaxFloat32 // item 0: padding after 11 keys
		}
		add[S+j] = float32(-j) / 8
	}
	expanded := make([]float32, 0, B*L*S)
	for b := range B {
		for range L {
			expanded = append(expanded, add[b*S:(b+1)*S]...)
		}
	}
	q, k, v := randn(1, B, H, L, E), randn(2, B, H, S, E), randn(3, B, H, S, E)
	sdpa := func(mask *core.Tensor) []float32 {
		out, err := core.Call1("scaled_dot_product_attention", nil, q, k, v, mask).Float32s()
		require.NoError(t, err)
		return out
	}
	want := sdpa(core.FromSlice(add, core.Shape{B, 1, 1, S}))
	require.Equal(t, want, sdpa(core.FromSlice(expanded, core.Shape{B, 1, L, S})))

	causal := slices.Clone(expanded)
	for b := range B {
		for i := range L {
			for j := i + 1; j < S; j++ {
				causal[(b*L+i)*S+j] = float32(math.Inf(-1))
			}
		}
	}
	// No keys at all: an expanded mask of width 0 is left as it is (its
	// blocks are empty, which a row-by-row scan must not loop over).
	empty := core.Call1("scaled_dot_product_attention", nil, q, randn(2, B, H, 0, E), randn(3, B, H, 0, E),
		core.Zeros(core.Shape{B, 1, L, 0}, core.F32))
	require.NoError(t, empty.Err())

	f64 := func(x *core.Tensor) *core.Tensor { return x.Cast(core.F64) }
	mask := core.FromSlice(causal, core.Shape{B, 1, L, S})
	got, err := core.Call1("scaled_dot_product_attention", nil, q, k, v, mask).Float64s()
	require.NoError(t, err)
	ref, err := core.Call1("scaled_dot_product_attention", nil, f64(q), f64(k), f64(v), f64(mask)).Float64s()
	require.NoError(t, err)
	for i := range ref {
		require.InDelta(t, ref[i], got[i], 1e-5+1e-4*math.Abs(ref[i]), "causal rows, element %d", i)
	}
}
