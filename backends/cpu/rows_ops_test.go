package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// everyLevel runs fn on the Go loops and on each vector instruction set
// of this CPU.
func everyLevel(t *testing.T, fn func(t *testing.T)) {
	t.Run("go", func(t *testing.T) { withoutSIMD(func() { fn(t) }) })
	if len(simdLevels) > 0 {
		withLevels(t, fn)
	}
}

// The dense f32 paths of the softmax family and the normalisations
// (rows_simd.go's kernels) against their float64 paths on rows long
// enough for the vector bodies, odd lengths for the tails: the same
// formulas, so float32 roundings apart.
func TestRowKernelsMatchTheFloat64Paths(t *testing.T) { everyLevel(t, rowKernelsMatch) }

func rowKernelsMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	in := func(shape ...int) *core.Tensor { return rdPlanInput(rng, core.F32, shape...) }
	x, g := in(6, 4, 37), in(6, 4, 37)
	row, w, b := in(5, 301), in(301), in(301)
	grow := in(5, 301)
	wc, bc := in(4), in(4)
	rm, rv := core.Call1("abs", nil, in(4)), core.Call1("abs", nil, in(4))
	cases := []struct {
		op    string
		attrs core.Attrs
		in    []*core.Tensor
	}{
		{"softmax", core.Attrs{"axis": -1}, []*core.Tensor{row}},
		{"log_softmax", core.Attrs{"axis": -1}, []*core.Tensor{row}},
		{"_softmax_backward", core.Attrs{"axis": -1}, []*core.Tensor{core.Call1("softmax", core.Attrs{"axis": -1}, row), grow}},
		{"_log_softmax_backward", core.Attrs{"axis": -1}, []*core.Tensor{core.Call1("log_softmax", core.Attrs{"axis": -1}, row), grow}},
		{"layer_norm", core.Attrs{"normalized_shape": []int{301}}, []*core.Tensor{row, w, b}},
		{"layer_norm", core.Attrs{"normalized_shape": []int{301}}, []*core.Tensor{row, nil, nil}},
		{"_layer_norm_backward", core.Attrs{"normalized_shape": []int{301}}, []*core.Tensor{row, grow, w}},
		{"_layer_norm_backward", core.Attrs{"normalized_shape": []int{301}}, []*core.Tensor{row, grow, nil}},
		{"rms_norm", core.Attrs{"normalized_shape": []int{301}}, []*core.Tensor{row, w}},
		{"_rms_norm_backward", core.Attrs{"normalized_shape": []int{301}}, []*core.Tensor{row, grow, w}},
		{"group_norm", core.Attrs{"num_groups": 2}, []*core.Tensor{x, wc, bc}},
		{"_group_norm_backward", core.Attrs{"num_groups": 2}, []*core.Tensor{x, g, wc}},
		{"batch_norm", core.Attrs{"training": true}, []*core.Tensor{x, nil, nil, wc, bc}},
		{"batch_norm", core.Attrs{"training": true, "momentum": 0.1}, []*core.Tensor{x, rm, rv, wc, nil}},
		{"batch_norm", core.Attrs{"training": false}, []*core.Tensor{x, rm, rv, wc, bc}},
		{"_batch_norm_backward", core.Attrs{"training": true, "momentum": 0.1}, []*core.Tensor{x, g, rm, rv, wc, wc, bc}},
		{"_batch_norm_backward", core.Attrs{"training": false}, []*core.Tensor{x, g, rm, rv, wc, nil, nil}},
	}
	for _, c := range cases {
		wide := make([]*core.Tensor, len(c.in))
		for i, t := range c.in {
			if t != nil {
				wide[i] = core.Call1("cast", core.Attrs{"dtype": core.F64}, t)
			}
		}
		got, err := core.Call(c.op, c.in, c.attrs)
		require.NoError(t, err, c.op)
		want, err := core.Call(c.op, wide, c.attrs)
		require.NoError(t, err, c.op)
		for o := range got {
			gv, err := got[o].Float64s()
			require.NoError(t, err)
			wv, err := want[o].Float64s()
			require.NoError(t, err)
			scale := 0.0
			for _, v := range wv {
				scale = math.Max(scale, math.Abs(v))
			}
			for i := range gv {
				require.InDelta(t, wv[i], gv[i], 2e-6*math.Max(scale, 1), "%s output %d [%d]", c.op, o, i)
			}
		}
	}
}
