package ir

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// rnn runs a small recurrent cell steps times with ir.Loop: h = tanh(h W +
// x), acc = acc + h (x is read from outside the body, W is a constant).
func rnn(steps int, w *core.Tensor) func([]*core.Tensor) ([]*core.Tensor, error) {
	return func(in []*core.Tensor) ([]*core.Tensor, error) {
		x := c1("mul", nil, in[0], core.Scalar(0.5, core.F64))
		outs, err := Loop(steps, []*core.Tensor{in[1], c1("zeros_like", nil, in[1])}, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
			h := c1("tanh", nil, c1("add", nil, c1("matmul", nil, c[0], w), x))
			return []*core.Tensor{h, c1("add", nil, c[1], h)}, nil
		})
		if err != nil {
			return nil, err
		}
		return []*core.Tensor{c1("sum", nil, c1("mul", nil, outs[1], outs[1])), outs[0]}, nil
	}
}

// The same cell unrolled by hand: what the loop must equal.
func rnnUnrolled(steps int, w *core.Tensor) func([]*core.Tensor) ([]*core.Tensor, error) {
	return func(in []*core.Tensor) ([]*core.Tensor, error) {
		x := c1("mul", nil, in[0], core.Scalar(0.5, core.F64))
		h, acc := in[1], c1("zeros_like", nil, in[1])
		for range steps {
			h = c1("tanh", nil, c1("add", nil, c1("matmul", nil, h, w), x))
			acc = c1("add", nil, acc, h)
		}
		return []*core.Tensor{c1("sum", nil, c1("mul", nil, acc, acc)), h}, nil
	}
}

func TestLoopRecordsOneNodeAndReplaysLikeUnrolledCode(t *testing.T) {
	w := randn(1, 4, 4)
	g, err := Trace(rnn(6, w), randn(2, 3, 4), randn(3, 3, 4))
	require.NoError(t, err)
	// zeros_like(h0) reads only h0's shape: it is captured as a constant.
	require.Len(t, g.Nodes, 4, "mul, loop, mul, sum\n%s", g)
	loop := g.Nodes[1]
	assert.Equal(t, KindControl, loop.Kind())
	assert.Len(t, loop.Body.Nodes, 4, "one iteration: matmul, add, tanh, add")
	assert.Len(t, loop.Inputs, 3, "two carried values and x from outside")
	text := g.String()
	assert.Regexp(t, `%\d+: f64\[3 4\], %\d+: f64\[3 4\] = loop\(%in1, const\d+, %\d+\)  \{n: 6\}  # control\n    input %in0: f64\[3 4\]\n`, text)
	assert.Regexp(t, `\n    %\d+: f64\[3 4\] = tanh\(%\d+\)\n`, text, "the body, indented")
	assert.Regexp(t, `\n    return %\d+, %\d+\n%`, text)

	// values and gradients (to x, the initial state and the constant W)
	for _, unrolled := range []bool{false, true} {
		x, h0 := leaf(4, 3, 4), leaf(5, 3, 4)
		program := rnnUnrolled(6, w)
		if !unrolled {
			program = rnn(6, w) // eager ir.Loop outside a capture
		}
		compareRun(t, g, program, []*core.Tensor{x, h0}, "loop against eager")
	}
	_, err = g.OptimizeStats()
	require.NoError(t, err)
	compareRun(t, g, rnnUnrolled(6, w), []*core.Tensor{leaf(6, 3, 4), leaf(7, 3, 4)}, "after the passes")
	compareRun(t, g, rnnUnrolled(6, w), []*core.Tensor{randn(8, 3, 4), randn(9, 3, 4)}, "no gradients: carried values released")
}

func TestLoopGradientReachesACapturedWeight(t *testing.T) {
	w := leaf(1, 4, 4) // a parameter the body reads: a constant of the graph
	g, err := Trace(rnn(3, w), randn(2, 3, 4), randn(3, 3, 4))
	require.NoError(t, err)
	x, h0 := randn(4, 3, 4), randn(5, 3, 4)
	want, _ := rnnUnrolled(3, w)([]*core.Tensor{x, h0})
	require.NoError(t, want[0].Backward())
	eager := values(t, w.Grad())
	w.ZeroGrad()
	got, err := g.Run(x, h0)
	require.NoError(t, err)
	assert.Equal(t, values(t, want[0]), values(t, got[0]))
	require.NoError(t, got[0].Backward())
	assert.InDeltaSlice(t, eager, values(t, w.Grad()), 1e-12)
}

func TestLoopOfZeroStepsReturnsItsInputs(t *testing.T) {
	a, b := randn(1, 2), randn(2, 3)
	outs, err := Loop(0, []*core.Tensor{a, b}, func(int, []*core.Tensor) ([]*core.Tensor, error) {
		t.Fatal("the body ran")
		return nil, nil
	})
	require.NoError(t, err)
	assert.Same(t, a, outs[0])
	assert.Same(t, b, outs[1])
	g, err := Trace(rnn(0, randn(3, 2, 2)), randn(4, 1, 2), randn(5, 1, 2))
	require.NoError(t, err)
	assert.NotContains(t, g.String(), "loop(", "nothing to record")
	x, h := randn(6, 1, 2), randn(7, 1, 2)
	got, err := g.Run(x, h)
	require.NoError(t, err)
	assert.Equal(t, values(t, h), values(t, got[1]))
}

func TestLoopErrorsSayWhatWasWrong(t *testing.T) {
	x := randn(1, 3)
	same := func(_ int, c []*core.Tensor) ([]*core.Tensor, error) { return c, nil }
	_, err := Loop(-1, []*core.Tensor{x}, same)
	assert.EqualError(t, err, "ir: Loop: n is -1, want a count of at least 0")
	_, err = Loop(2, []*core.Tensor{x}, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("sum", nil, c[0])}, nil
	})
	assert.EqualError(t, err, "ir: Loop: carried value 0 goes into iteration 0 as f64[3] and comes out as f64[] (each carried value must keep its shape and dtype)")
	_, err = Loop(2, []*core.Tensor{x}, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c[0], c[0]}, nil
	})
	assert.EqualError(t, err, "ir: Loop: iteration 0 returned 2 values for 1 carried ones (return one value per carried value)")
	_, err = Loop(3, []*core.Tensor{x}, func(i int, c []*core.Tensor) ([]*core.Tensor, error) {
		if i == 2 {
			return []*core.Tensor{c1("cast", core.Attrs{"dtype": core.F32}, c[0])}, nil
		}
		return c, nil
	})
	assert.ErrorContains(t, err, "carried value 0 goes into iteration 2 as f64[3] and comes out as f32[3]")

	// inside a capture
	capture := func(body LoopBody) error {
		_, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
			return Loop(3, []*core.Tensor{in[0]}, body)
		}, randn(2, 3))
		return err
	}
	err = capture(func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
		_, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) { return in, nil }, c[0])
		return c, err
	})
	assert.ErrorContains(t, err, "iteration 0: ir: cannot begin a capture inside the body of an ir.Loop being captured")
	err = capture(func(i int, c []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("add", nil, c[0], core.Scalar(float64(i), core.F64))}, nil
	})
	assert.ErrorContains(t, err, "the body did different things at i=0 and i=1 (input 1 of op 0 (add) differs)")
	err = capture(func(i int, c []*core.Tensor) ([]*core.Tensor, error) {
		if i%2 == 1 {
			return []*core.Tensor{c1("exp", nil, c[0])}, nil
		}
		return []*core.Tensor{c1("sin", nil, c[0])}, nil
	})
	assert.ErrorContains(t, err, "op 0 is sin at i=0 and exp at i=1")
	err = capture(func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
		return []*core.Tensor{c1("reshape", core.Attrs{"shape": []int{1, 3}}, c[0])}, nil
	})
	assert.ErrorContains(t, err, "ir: Loop: carried value 0 goes into iteration 0 as f64[3] and comes out as f64[1 3]")

	// the capture is usable again after each failure
	g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) {
		return Loop(2, in, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
			return []*core.Tensor{c1("exp", nil, c[0])}, nil
		})
	}, randn(3, 3))
	require.NoError(t, err)
	assert.Contains(t, g.String(), "loop(%in0)")
}

func TestLoopsNestAndReadOuterValuesAndCarryPassThrough(t *testing.T) {
	w := randn(1, 3, 3)
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x, y := in[0], in[1]
		scale := c1("exp", nil, y)
		outs, err := Loop(3, []*core.Tensor{x, y, x}, func(i int, c []*core.Tensor) ([]*core.Tensor, error) {
			inner, err := Loop(2, []*core.Tensor{c[0]}, func(_ int, d []*core.Tensor) ([]*core.Tensor, error) {
				return []*core.Tensor{c1("sin", nil, c1("mul", nil, c1("matmul", nil, d[0], w), scale))}, nil
			})
			if err != nil {
				return nil, err
			}
			// c[1] passes through; c[2] swaps in x (an outer value) each time
			return []*core.Tensor{c1("add", nil, inner[0], c[2]), c[1], x}, nil
		})
		if err != nil {
			return nil, err
		}
		return []*core.Tensor{c1("sum", nil, c1("mul", nil, outs[0], outs[1])), outs[2]}, nil
	}
	g, err := Trace(program, randn(2, 2, 3), randn(3, 2, 3))
	require.NoError(t, err)
	text := g.String()
	assert.Equal(t, 2, strings.Count(text, "# control"), text)
	assert.Contains(t, text, "\n        %", "the inner body is indented twice")
	compareRun(t, g, program, []*core.Tensor{leaf(4, 2, 3), leaf(5, 2, 3)}, "nested loops")
	_, err = g.OptimizeStats()
	require.NoError(t, err)
	compareRun(t, g, program, []*core.Tensor{leaf(6, 2, 3), leaf(7, 2, 3)}, "nested loops after the passes")
	compareRun(t, g, program, []*core.Tensor{randn(8, 2, 3), randn(9, 2, 3)}, "nested loops, buffers released")
}

// The passes reach into loop bodies: constants fold (an outer constant the
// body reads joins the body's constants first), repeated work merges, dead
// work goes, and outer values the body stops reading are no longer inputs.
func TestPassesRunInsideLoopBodies(t *testing.T) {
	k := randn(1, 4)
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x := in[0]
		k2 := c1("mul", nil, k, core.Scalar(2, core.F64)) // folded outside the loop
		unused := c1("neg", nil, x)
		outs, err := Loop(4, []*core.Tensor{x}, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
			_ = c1("cos", nil, unused)                          // dead, and so is the body's read of unused
			scale := c1("exp", nil, k2)                         // folds once k2 is a constant of the body
			a := c1("mul", nil, c1("tanh", nil, c[0]), scale)   //
			b := c1("mul", nil, c1("tanh", nil, c[0]), scale)   // merged with a
			t2 := c1("transpose", nil, c1("transpose", nil, a)) // cancels
			return []*core.Tensor{c1("add", nil, t2, c1("mul", nil, b, core.Scalar(0.25, core.F64)))}, nil
		})
		if err != nil {
			return nil, err
		}
		return []*core.Tensor{c1("sum", nil, outs[0])}, nil
	}
	g, err := Trace(program, randn(2, 3, 4))
	require.NoError(t, err)
	loop := g.Nodes[len(g.Nodes)-2]
	require.NotNil(t, loop.Body)
	require.Len(t, loop.Inputs, 3, "x, then k2 and unused from outside")
	require.Len(t, loop.Body.Nodes, 10)
	s, err := g.OptimizeStats()
	require.NoError(t, err)
	assert.Equal(t, PassStats{Folded: 2, Layout: 2, Merged: 2, Dead: 2}, s,
		"folded k2 and exp(k2); both transposes; tanh and mul; cos in the body, neg outside\n%s", g)
	assert.Len(t, loop.Inputs, 1, "only the carried value is left")
	assert.Len(t, loop.Body.Nodes, 4, "tanh, mul, mul, add\n%s", g)
	compareRun(t, g, program, []*core.Tensor{leaf(3, 3, 4)}, "after the passes")
}

func TestLoopThroughBeginAndEnd(t *testing.T) {
	x := randn(1, 2, 2)
	c, err := Begin(x)
	require.NoError(t, err)
	var endErr error
	outs, err := Loop(2, []*core.Tensor{x}, func(_ int, v []*core.Tensor) ([]*core.Tensor, error) {
		_, endErr = c.End(v[0])
		return []*core.Tensor{c1("exp", nil, v[0])}, nil
	})
	require.NoError(t, err)
	assert.EqualError(t, endErr, "ir: End called inside the body of an ir.Loop being captured; end the capture after the loop returns")
	g, err := c.End(outs[0])
	require.NoError(t, err)
	got, err := g.Run(x)
	require.NoError(t, err)
	assert.Equal(t, values(t, outs[0]), values(t, got[0]))
}

// A body may return one tensor for two carried values, and the same tensor
// may start as two: each position still replays as its own value.
func TestLoopCarriesOneTensorInTwoPlaces(t *testing.T) {
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		outs, err := Loop(4, []*core.Tensor{in[0], in[0]}, func(_ int, c []*core.Tensor) ([]*core.Tensor, error) {
			h := c1("sin", nil, c1("add", nil, c[0], c1("mul", nil, c[1], core.Scalar(2, core.F64))))
			return []*core.Tensor{h, h}, nil
		})
		if err != nil {
			return nil, err
		}
		return []*core.Tensor{c1("sum", nil, c1("mul", nil, outs[0], outs[1])), outs[1]}, nil
	}
	g, err := Trace(program, randn(1, 5))
	require.NoError(t, err)
	compareRun(t, g, program, []*core.Tensor{leaf(2, 5)}, "duplicated carried values")
	compareRun(t, g, program, []*core.Tensor{randn(3, 5)}, "duplicated carried values, released")
}
