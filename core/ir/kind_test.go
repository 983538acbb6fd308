package ir

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// compareRun runs g on inputs and the eager program on the same inputs and
// checks that values (exactly: the same kernels run) and the gradients of
// every input that requires one agree (to rounding: where the passes merged
// two uses of a value, backward adds the same terms in another order). The
// first output must be a scalar.
func compareRun(t *testing.T, g *Graph, program func([]*core.Tensor) ([]*core.Tensor, error), inputs []*core.Tensor, what string) {
	t.Helper()
	want, err := program(inputs)
	require.NoError(t, err, what)
	var eagerGrads [][]float64 // per input requiring a gradient; nil where none reached it
	if want[0].RequiresGrad() {
		require.NoError(t, want[0].Backward(), what)
		for _, x := range inputs {
			if x.RequiresGrad() {
				var grad []float64
				if x.Grad() != nil {
					grad = values(t, x.Grad())
				}
				eagerGrads = append(eagerGrads, grad)
				x.ZeroGrad()
			}
		}
	}
	got, err := g.Run(inputs...)
	require.NoError(t, err, "%s\n%s", what, g)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, values(t, want[i]), values(t, got[i]), "%s: output %d\n%s", what, i, g)
	}
	if eagerGrads == nil {
		return
	}
	require.NoError(t, got[0].Backward(), what)
	k := 0
	for _, x := range inputs {
		if !x.RequiresGrad() {
			continue
		}
		if eagerGrads[k] == nil {
			assert.Nil(t, x.Grad(), "%s: a gradient through the graph where eagerly none", what)
		} else if assert.NotNil(t, x.Grad(), "%s: no gradient through the graph", what) {
			assert.InDeltaSlice(t, eagerGrads[k], values(t, x.Grad()), 1e-12, "%s: gradient of an input\n%s", what, g)
		}
		x.ZeroGrad()
		k++
	}
}

func leaf(seed int, shape ...int) *core.Tensor {
	return randn(seed, shape...).Detach().SetRequiresGrad(true)
}

// A graph-learning and signal step in one program: a CSR matrix times a
// dense one (spmm), its sampled product (sddmm), segment reductions over
// edge ids, and a real FFT round trip, traced, optimised and run on new
// inputs against the eager program, gradients included.
func TestSparseSegmentAndFFTGraphsEqualEager(t *testing.T) {
	// a 4x5 CSR pattern with an empty row and a repeated column
	indptr := core.FromSlice([]int64{0, 2, 3, 3, 6}, core.Shape{5})
	indices := core.FromSlice([]int64{1, 4, 0, 2, 2, 4}, core.Shape{6})
	edgeSeg := core.FromSlice([]int64{0, 2, 1, 2, 0, 1}, core.Shape{6})
	constVals, constDense := randn(50, 6), randn(51, 5, 3)
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x, vals := in[0], in[1]
		h := c1("tanh", nil, c1("spmm", nil, indptr, indices, vals, x))     // [4 3]
		same := c1("spmm", nil, indptr, indices, vals, x)                   // merged with the one above
		folded := c1("spmm", nil, indptr, indices, constVals, constDense)   // all constant: folded
		_ = c1("segment_max", core.Attrs{"num_segments": 3}, vals, edgeSeg) // unused: dead
		xt := c1("transpose", core.Attrs{"dim0": 0, "dim1": 1}, x)          // [3 5]
		e := c1("mul", nil, c1("sddmm", nil, indptr, indices, h, xt), vals) // one score per entry [6]
		e2 := c1("reshape", core.Attrs{"shape": []int{6, 1}}, e)            //
		rows := c1("mul", nil, e2, c1("expand", core.Attrs{"shape": []int{6, 2}}, e2))
		s := c1("segment_sum", core.Attrs{"num_segments": 3}, rows, edgeSeg)  // [3 2]
		m := c1("segment_mean", core.Attrs{"num_segments": 4}, rows, edgeSeg) // an empty segment
		mx := c1("segment_max", core.Attrs{"num_segments": 3}, rows, edgeSeg) //
		spec := c1("rfft", core.Attrs{"n": 6}, h)                             // [4 4 2]
		back := c1("irfft", core.Attrs{"n": 6}, c1("mul", nil, spec, spec))   // [4 6]
		cplx := c1("fft", core.Attrs{"axis": 0, "norm": "ortho"}, spec)       // along the rows
		total := c1("add", nil, c1("add", nil, c1("sum", nil, s), c1("sum", nil, m)), c1("sum", nil, mx))
		total = c1("add", nil, total, c1("sum", nil, c1("mul", nil, back, back)))
		total = c1("add", nil, total, c1("sum", nil, c1("ifft", nil, cplx)))
		total = c1("add", nil, total, c1("sum", nil, c1("mul", nil, same, folded)))
		return []*core.Tensor{total, back}, nil
	}
	g, err := Trace(program, randn(1, 5, 3), randn(2, 6))
	require.NoError(t, err)
	text := g.String()
	assert.Contains(t, text, "= spmm(const")
	assert.Regexp(t, `= spmm\(.*# sparse\n`, text)
	assert.Regexp(t, `= sddmm\(.*# sparse\n`, text)
	assert.Regexp(t, `= segment_sum\(.*\{num_segments: 3\}  # segment\n`, text)
	assert.Regexp(t, `= rfft\(.*# fft\n`, text)
	assert.Regexp(t, `= transpose\(.*# layout\n`, text)
	assert.NotRegexp(t, `= tanh\(.*#`, text, "dense nodes are unmarked")
	kinds := g.KindCounts()
	assert.Equal(t, 4, kinds[KindSparse], "three spmm and one sddmm")
	assert.Equal(t, 4, kinds[KindSegment])
	assert.Equal(t, 4, kinds[KindFFT])

	compareRun(t, g, program, []*core.Tensor{leaf(3, 5, 3), leaf(4, 6)}, "as traced")
	s, err := g.OptimizeStats()
	require.NoError(t, err)
	assert.Equal(t, 1, s.Folded, "the constant spmm")
	assert.Equal(t, 1, s.Merged, "the repeated spmm")
	assert.Equal(t, 1, s.Dead, "the unused segment_max")
	assert.Equal(t, 2, g.KindCounts()[KindSparse], "one spmm and the sddmm remain")
	compareRun(t, g, program, []*core.Tensor{leaf(5, 5, 3), leaf(6, 6)}, "after the passes")
	compareRun(t, g, program, []*core.Tensor{randn(7, 5, 3), randn(8, 6)}, "without gradients (buffers released)")
}

// where is the graph's select: it traces as a node of kind select, folds
// when its operands are constants, merges with an equal one and passes
// gradients to both branches as eagerly.
func TestSelectTracesFoldsMergesAndDifferentiates(t *testing.T) {
	konst := randn(9, 3, 4)
	fold := c1("gt", nil, konst, core.Scalar(0, core.F64))
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x, y := in[0], in[1]
		mask := c1("gt", nil, x, y)
		a := c1("where", nil, mask, c1("exp", nil, x), y)
		b := c1("where", nil, mask, c1("exp", nil, x), y) // the same select: merged
		c := c1("where", nil, fold, konst, c1("neg", nil, konst))
		d := c1("where", nil, c1("lt", nil, y, core.Scalar(0.5, core.F64)), x, core.Scalar(-1, core.F64)) // broadcast scalar branch
		out := c1("sum", nil, c1("mul", nil, c1("add", nil, a, b), c1("add", nil, c, d)))
		return []*core.Tensor{out}, nil
	}
	g, err := Trace(program, randn(1, 3, 4), randn(2, 3, 4))
	require.NoError(t, err)
	assert.Equal(t, 4, g.KindCounts()[KindSelect])
	assert.Regexp(t, `= where\(%\d+, %\d+, %in1\)  # select\n`, g.String())
	compareRun(t, g, program, []*core.Tensor{leaf(3, 3, 4), leaf(4, 3, 4)}, "as traced")
	s, err := g.OptimizeStats()
	require.NoError(t, err)
	assert.Equal(t, 2, s.Folded, "neg(konst) and the select over constants")
	assert.Equal(t, 2, s.Merged, "exp(x) and then the select")
	assert.Equal(t, 2, g.KindCounts()[KindSelect])
	assert.Equal(t, 2, strings.Count(g.String(), "# select"))
	compareRun(t, g, program, []*core.Tensor{leaf(5, 3, 4), leaf(6, 3, 4)}, "after the passes")
}

// Differential test over the kinds: random programs mixing dense ops,
// selects, segment sums, sparse products, FFT round trips, layout changes
// and small loops, traced, optimised and run on new inputs, equal the eager
// program (values exactly, gradients to rounding).
func TestRandomTypedProgramsEqualEager(t *testing.T) {
	indptr := core.FromSlice([]int64{0, 2, 3, 5}, core.Shape{4}) // 3x3 CSR
	indices := core.FromSlice([]int64{0, 2, 1, 0, 2}, core.Shape{5})
	vals := randn(90, 5)
	ids := core.FromSlice([]int64{2, 0, 2}, core.Shape{3})
	unary := []string{"tanh", "sin", "neg", "sigmoid"}
	binary := []string{"add", "sub", "mul", "maximum"}
	kinds := map[Kind]bool{}
	for seed := range 30 {
		program := randomProgram(seed, 13, 5, 8, []programStep{
			func(a, _ *core.Tensor, i, _ int) (*core.Tensor, error) { return c1(unary[i%len(unary)], nil, a), nil },
			func(a, b *core.Tensor, _, j int) (*core.Tensor, error) {
				return c1(binary[j%len(binary)], nil, a, b), nil
			},
			func(a, b *core.Tensor, _, _ int) (*core.Tensor, error) {
				return c1("where", nil, c1("gt", nil, a, b), a, c1("mul", nil, b, core.Scalar(0.5, core.F64))), nil
			},
			func(a, _ *core.Tensor, _, _ int) (*core.Tensor, error) {
				return c1("segment_sum", core.Attrs{"num_segments": 3}, a, ids), nil
			},
			func(a, _ *core.Tensor, _, _ int) (*core.Tensor, error) {
				return c1("spmm", nil, indptr, indices, vals, a), nil
			},
			func(a, b *core.Tensor, _, _ int) (*core.Tensor, error) {
				spec := c1("mul", nil, c1("rfft", nil, a), c1("rfft", nil, b))
				return c1("irfft", core.Attrs{"n": 4}, spec), nil
			},
			func(a, _ *core.Tensor, _, _ int) (*core.Tensor, error) {
				p := c1("permute", core.Attrs{"dims": []int{0, 2, 1}}, c1("reshape", core.Attrs{"shape": []int{3, 2, 2}}, a))
				return c1("reshape", core.Attrs{"shape": []int{3, 4}}, c1("transpose", nil, c1("transpose", nil, p))), nil
			},
			func(a, b *core.Tensor, i, j int) (*core.Tensor, error) {
				outs, err := Loop(2+i%2, []*core.Tensor{a}, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
					return []*core.Tensor{c1("tanh", nil, c1(binary[j%len(binary)], nil, c[0], b))}, nil
				})
				if err != nil {
					return nil, err
				}
				return outs[0], nil
			},
		})
		g, err := Trace(program, randn(1, 3, 4), randn(2, 3, 4))
		require.NoError(t, err, "seed %d", seed)
		for k := range g.KindCounts() {
			kinds[k] = true
		}
		_, err = g.OptimizeStats()
		require.NoError(t, err, "seed %d", seed)
		compareRun(t, g, program, []*core.Tensor{leaf(3, 3, 4), leaf(4, 3, 4)}, "typed program")
		compareRun(t, g, program, []*core.Tensor{randn(5, 3, 4), randn(6, 3, 4)}, "typed program, buffers released")
	}
	for _, k := range []Kind{KindDense, KindLayout, KindSparse, KindSegment, KindFFT, KindSelect, KindControl} {
		assert.True(t, kinds[k], "no program had a %s node", k)
	}
}
