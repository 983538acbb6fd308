package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The forward pass leaves out the keys a padding mask hides at the end of
// each item (kernels_attention_keys.go) only where that gives the same
// bits as scoring them: every case here runs with the skipping on and off
// and must agree bit for bit (NaN where NaN), and the ordinary cases must
// have skipped keys. The masks: float32 minimums after 37 keys (an
// exporter's), -inf after 60 with holes before, bool false after 9, one
// item unpadded, one whose last key alone is live, one whose keys are all
// at the minimum (it averages them: nothing is skipped), and a NaN among
// the hidden keys (not hidden: only the keys after it are skipped). The guarded cases: a
// NaN or an infinity in a hidden key's row of K or V, and queries so large
// that a hidden key's score could outweigh the mask. Heads of 24 and 40
// (the blocked path), and of 32 and 16 (the AVX-512 tiles where there are
// some, the blocked path elsewhere), plain and as transposed views, 70
// queries in two row blocks (or five tiles).
func TestAttentionF32SkipsPaddedKeysBitForBit(t *testing.T) {
	for _, heads := range [][2]int{{24, 40}, {32, 32}, {16, 16}} {
		t.Run(fmt.Sprintf("E%d_Ev%d", heads[0], heads[1]), func(t *testing.T) { testAttentionSkipsPaddedKeys(t, heads[0], heads[1]) })
	}
}

func testAttentionSkipsPaddedKeys(t *testing.T, E, Ev int) {
	const B, H, L, S = 7, 2, 70, 100
	minF32, ninf := float32(-math.MaxFloat32), float32(math.Inf(-1))
	add := make([]float32, B*S)
	visible := make([]bool, B*S)
	for j := range S {
		row := func(b int) []float32 { return add[b*S : (b+1)*S] }
		if j >= 37 {
			row(0)[j] = minF32
		}
		if j >= 60 || j%7 == 3 {
			row(1)[j] = ninf
		}
		row(2)[j] = float32(j%5) / 4 // unpadded
		if j != S-1 {
			row(3)[j] = minF32 // only the last key live
		}
		row(4)[j] = minF32 // every key at the minimum
		if j >= 50 {
			row(5)[j] = minF32
		}
		row(6)[j] = row(0)[j]
		visible[j] = j < 9
		visible[S+j] = j < 90
		for b := 2; b < B; b++ {
			visible[b*S+j] = true
		}
	}
	add[5*S+80] = float32(math.NaN()) // among item 5's hidden keys
	masks := map[string]*core.Tensor{
		"f32":  core.FromSlice(add, core.Shape{B, 1, 1, S}),
		"bool": core.FromSlice(visible, core.Shape{B, 1, 1, S}),
	}
	randn := func(seed int, shape ...int) []float32 {
		v, err := core.Call1("randn", core.Attrs{"shape": shape, "seed": seed}).Float32s()
		require.NoError(t, err)
		return v
	}
	operands := func(views bool, edit func(q, k, v []float32)) (q, k, vt *core.Tensor) {
		qs, ks, vs := randn(1, B, H, L, E), randn(2, B, H, S, E), randn(3, B, H, S, Ev)
		if edit != nil {
			edit(qs, ks, vs)
		}
		if !views {
			return core.FromSlice(qs, core.Shape{B, H, L, E}), core.FromSlice(ks, core.Shape{B, H, S, E}), core.FromSlice(vs, core.Shape{B, H, S, Ev})
		}
		tr := func(x []float32, n, e int) *core.Tensor { // the same values laid out [B, n, H, e], seen as [B, H, n, e]
			return core.Call1("transpose", core.Attrs{"dim0": 1, "dim1": 2}, core.FromSlice(x, core.Shape{B, n, H, e}))
		}
		return tr(qs, L, E), tr(ks, S, E), tr(vs, S, Ev)
	}
	// Item 0, head 0 of the [B, H, n, e] layout (or of [B, n, H, e] for
	// views): a hidden key's row.
	hidden := func(x []float32, e int) []float32 { return x[90*H*e : 90*H*e+e] }
	cases := []struct {
		name  string
		edit  func(q, k, v []float32)
		skips bool
	}{
		{"plain", nil, true},
		{"NaN in a hidden key", func(_, k, _ []float32) { hidden(k, E)[3] = float32(math.NaN()) }, false},
		{"infinity in a hidden value", func(_, _, v []float32) { hidden(v, Ev)[5] = float32(math.Inf(1)) }, false},
		{"huge queries", func(q, _, _ []float32) {
			for i := range q {
				q[i] *= 1e19
			}
		}, false},
	}
	for _, c := range cases {
		for _, views := range []bool{false, true} {
			for name, mask := range masks {
				label := fmt.Sprintf("%s, views %v, %s mask", c.name, views, name)
				q, k, v := operands(views, c.edit)
				run := func(skip bool) []uint32 {
					defer cpu.SetAttentionKeySkipForTest(skip)()
					out, err := core.Call1("scaled_dot_product_attention", nil, q, k, v, mask).Float32s()
					require.NoError(t, err, label)
					bits := make([]uint32, len(out))
					for i, x := range out {
						bits[i] = math.Float32bits(x)
					}
					return bits
				}
				before := cpu.AttentionKeysSkippedForTest()
				skipped := run(true)
				n := cpu.AttentionKeysSkippedForTest() - before
				require.Equal(t, run(false), skipped, label)
				if !c.skips {
					require.Zero(t, n, label)
					continue
				}
				// Item 0's first row block alone leaves out 64 rows x 52 keys
				// in each head (84 of the bool mask's).
				require.GreaterOrEqual(t, n, int64(H*64*52), label)
			}
		}
	}
}
