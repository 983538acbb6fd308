package ir

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func TestSimplifyLayoutDropsAndMergesViews(t *testing.T) {
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x := in[0]                                                                                                   // [2 3 4]
		a := c1("transpose", core.Attrs{"dim0": 0, "dim1": 2}, c1("transpose", core.Attrs{"dim0": 2, "dim1": 0}, x)) // cancels
		b := c1("permute", core.Attrs{"dims": []int{2, 0, 1}}, c1("permute", core.Attrs{"dims": []int{1, 2, 0}}, a)) // cancels
		c := c1("reshape", core.Attrs{"shape": []int{6, 4}}, c1("reshape", core.Attrs{"shape": []int{3, 2, 4}}, b))  // one reshape
		d := c1("reshape", core.Attrs{"shape": []int{6, 4}}, c)                                                      // identity
		e := c1("expand", core.Attrs{"shape": []int{6, 4}}, d)                                                       // identity
		f := c1("permute", core.Attrs{"dims": []int{0, 1}}, e)                                                       // identity
		g := c1("transpose", core.Attrs{"dim0": -1, "dim1": 1}, f)                                                   // identity (1 is -1)
		h := c1("transpose", nil, c1("permute", core.Attrs{"dims": []int{-1, 0, 1}}, x))                             // one permute [1 0 2]... of rank 3
		s := c1("slice", core.Attrs{"axis": 1, "start": 0, "stop": 99}, c1("exp", nil, g))                           // the whole axis
		return []*core.Tensor{c1("add", nil, c1("sum", nil, s), c1("sum", nil, h)), h}, nil
	}
	g, err := Trace(program, randn(1, 2, 3, 4))
	require.NoError(t, err)
	require.Equal(t, 17, len(g.Nodes))
	n := g.SimplifyLayout()
	text := g.String()
	assert.Equal(t, 13, n, "12 nodes removed, 1 rewritten\n%s", text)
	assert.Len(t, g.Nodes, 6, "reshape, permute, exp, sum, sum, add")
	assert.NotContains(t, text, "transpose(")
	assert.Equal(t, 1, strings.Count(text, "permute("), text)
	assert.Contains(t, text, "= permute(%in0)  {dims: [2 1 0]}  # layout\n", "transpose(-2,-1) of permute(-1,0,1)")
	assert.Contains(t, text, "= reshape(%in0)  {shape: [6 4]}  # layout\n")
	assert.Equal(t, 1, strings.Count(text, "reshape("))
	assert.NotContains(t, text, "expand(")
	assert.NotContains(t, text, "slice(")
	compareRun(t, g, program, []*core.Tensor{leaf(2, 2, 3, 4)}, "simplified layout")
}

// A reshape read by two nodes stays (its copy, when it makes one, is not
// made twice); a permute of it is still merged with a later permute.
func TestSimplifyLayoutKeepsSharedReshapes(t *testing.T) {
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		r := c1("reshape", core.Attrs{"shape": []int{2, 6}}, c1("transpose", nil, in[0])) // a copy
		a := c1("reshape", core.Attrs{"shape": []int{12}}, r)
		p := c1("permute", core.Attrs{"dims": []int{1, 0}}, r)
		q := c1("transpose", nil, p)
		return []*core.Tensor{c1("sum", nil, c1("add", nil, c1("sum", nil, a), c1("sum", nil, c1("mul", nil, q, r))))}, nil
	}
	g, err := Trace(program, randn(1, 3, 4))
	require.NoError(t, err)
	assert.Equal(t, 2, g.SimplifyLayout(), "permute+transpose cancel, r stays\n%s", g)
	assert.Equal(t, 2, strings.Count(g.String(), "reshape("))
	compareRun(t, g, program, []*core.Tensor{leaf(2, 3, 4)}, "shared reshape")
}

// Differential test: random chains of layout ops (and a few elementwise
// ones between them) over a [2 3 4] input, optimised, equal the eager
// chain in values and gradients.
func TestRandomLayoutChainsEqualEager(t *testing.T) {
	simplified := 0
	for seed := range 60 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		type step struct {
			op    string
			attrs core.Attrs
		}
		// the chain is planned on shapes once, so every run applies the same ops
		shape := []int{2, 3, 4}
		var steps []step
		for range 4 + rng.IntN(8) {
			r := len(shape)
			var s step
			switch rng.IntN(9) {
			case 0:
				p := rng.Perm(r)
				s = step{"permute", core.Attrs{"dims": p}}
				shape = permuted(shape, p)
			case 1:
				d0, d1 := rng.IntN(r)-r*rng.IntN(2), rng.IntN(r)
				s = step{"transpose", core.Attrs{"dim0": d0, "dim1": d1}}
				p := identity(r)
				a, b := (d0+r)%r, d1
				p[a], p[b] = p[b], p[a]
				shape = permuted(shape, p)
			case 2:
				shape = refactor(rng, shape)
				s = step{"reshape", core.Attrs{"shape": shape}}
			case 3:
				s = step{"reshape", core.Attrs{"shape": shape}} // to its own shape
			case 4:
				ax := rng.IntN(r + 1)
				s = step{"unsqueeze", core.Attrs{"axis": ax}}
				shape = append(shape[:ax:ax], append([]int{1}, shape[ax:]...)...)
			case 5:
				s = step{"flatten", nil}
				shape = []int{numel(shape)}
			case 6:
				s = step{"exp", nil}
			case 7:
				s = step{"permute", core.Attrs{"dims": identity(r)}}
			case 8:
				s = step{"squeeze", nil}
				var kept []int
				for _, d := range shape {
					if d != 1 {
						kept = append(kept, d)
					}
				}
				shape = kept
			}
			steps = append(steps, s)
		}
		program := func(in []*core.Tensor) ([]*core.Tensor, error) {
			x := c1("mul", nil, in[0], core.Scalar(0.1, core.F64))
			for _, s := range steps {
				x = c1(s.op, s.attrs, x)
			}
			return []*core.Tensor{c1("sum", nil, c1("mul", nil, x, x)), x}, nil
		}
		g, err := Trace(program, randn(1, 2, 3, 4))
		require.NoError(t, err, "seed %d", seed)
		before := len(g.Nodes)
		st, err := g.OptimizeStats()
		require.NoError(t, err)
		assert.LessOrEqual(t, len(g.Nodes), before)
		simplified += st.Layout
		compareRun(t, g, program, []*core.Tensor{leaf(seed+2, 2, 3, 4)}, "layout chain")
	}
	assert.Greater(t, simplified, 200, "the chains give the pass work")
}

func permuted(shape, p []int) []int {
	out := make([]int, len(p))
	for i, d := range p {
		out[i] = shape[d]
	}
	return out
}

func identity(r int) []int {
	p := make([]int, r)
	for i := range p {
		p[i] = i
	}
	return p
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// refactor picks another shape with the same number of elements (24).
func refactor(rng *rand.Rand, shape []int) []int {
	shapes := [][]int{{24}, {4, 6}, {6, 4}, {2, 12}, {3, 8}, {2, 3, 4}, {4, 3, 2}, {2, 2, 6}, {1, 24}, {2, 1, 3, 4}}
	return append([]int{}, shapes[rng.IntN(len(shapes))]...)
}
