package plugins

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

func TestBackwardExpressions(t *testing.T) {
	def := &core.OpDef{Name: "t.cube_scaled", Inputs: []core.InputSpec{{Name: "x"}}, Outputs: []string{"y"},
		Attrs: []core.AttrSpec{{Name: "k", Kind: core.AttrFloat, Default: 1.0}}}
	// y = k*x^3  =>  dx = grad * 3k x^2, written two ways (names and keyword attrs).
	bw, err := BackwardFromExpressions(def, map[string]string{"x": "mul(grad, mul(mul(3, k), pow(x, 2)))"})
	require.NoError(t, err)
	x := core.FromSlice([]float64{1, -2, 0.5}, core.Shape{3})
	g := &core.GradCtx{Op: def, Inputs: []*core.Tensor{x}, Outputs: []*core.Tensor{x}, Attrs: core.Attrs{"k": 2.0},
		Grads: []*core.Tensor{core.FromSlice([]float64{1, 1, 2}, core.Shape{3})}, Need: []bool{true}}
	res, err := bw(g)
	require.NoError(t, err)
	v, err := res[0].Float64s()
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{6, 24, 3}, v, 1e-12)

	bw, err = BackwardFromExpressions(def, map[string]string{"x": "sum(mul(grad, x), axes=[0], keepdim=true)"})
	require.NoError(t, err)
	res, err = bw(g)
	require.NoError(t, err)
	v, _ = res[0].Float64s()
	assert.Equal(t, []float64{0}, v) // 1 - 2 + 1
}

func TestBackwardExpressionErrors(t *testing.T) {
	def := &core.OpDef{Name: "t.op", Inputs: []core.InputSpec{{Name: "x"}}, Outputs: []string{"y"}}
	cases := map[string]string{
		"mul(grad, z)":           `unknown name "z"`,
		"nosuchop(grad)":         `unknown op "nosuchop"`,
		"mul(grad, x":            "want ',' or ')'",
		"mul(grad x)":            "want ',' or ')'",
		"sum(grad, axes=[0], x)": "positional argument after keyword",
		"sum(grad, axes=foo)":    "attribute values must be literals",
		"":                       "expression ends early",
		"mul(grad, x) extra":     "unexpected",
		"sum(grad, mode=\"abc":   "unterminated string",
	}
	for src, want := range cases {
		_, err := BackwardFromExpressions(def, map[string]string{"x": src})
		assert.ErrorContains(t, err, want, src)
	}
	_, err := BackwardFromExpressions(def, map[string]string{"w": "grad"})
	assert.ErrorContains(t, err, `"w" is not an input (inputs: x)`)
}

// nestCalls wraps inner in depth calls of op: op(op(...inner...)).
func nestCalls(op, inner string, depth int) string {
	return strings.Repeat(op+"(", depth) + inner + strings.Repeat(")", depth)
}

func TestBackwardExpressionLimits(t *testing.T) {
	def := &core.OpDef{Name: "t.deep", Inputs: []core.InputSpec{{Name: "x"}}, Outputs: []string{"y"}}

	// The reproducer: 3,000,000 nested calls (15 MB, under the manifest's
	// 16 MB) overflowed the goroutine stack in the parser and killed the process.
	_, err := BackwardFromExpressions(def, map[string]string{"x": nestCalls("neg", "grad", 3_000_000)})
	require.Error(t, err)
	assert.ErrorContains(t, err, "backward of t.deep, input x: at column 1029 of ...\"neg(neg(")
	assert.ErrorContains(t, err, "calls nest more than 256 deep")
	assert.ErrorContains(t, err, "(15000004 bytes)", "the error says how long the expression is")
	assert.Less(t, len(err.Error()), 400, "the error quotes the expression around the problem, not all of it")

	// One level past the limit fails; the limit itself parses, checks and
	// evaluates (256 negations are the identity).
	_, err = BackwardFromExpressions(def, map[string]string{"x": nestCalls("neg", "grad", maxExprDepth+1)})
	assert.ErrorContains(t, err, "calls nest more than 256 deep")
	bw, err := BackwardFromExpressions(def, map[string]string{"x": nestCalls("neg", "grad", maxExprDepth)})
	require.NoError(t, err)
	x := core.FromSlice([]float32{1, 2}, core.Shape{2})
	g := &core.GradCtx{Op: def, Inputs: []*core.Tensor{x}, Outputs: []*core.Tensor{x},
		Grads: []*core.Tensor{core.FromSlice([]float32{3, -4}, core.Shape{2})}, Need: []bool{true}}
	res, err := bw(g)
	require.NoError(t, err)
	v, err := res[0].Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, -4}, v)

	// Attribute lists are flat, so a literal cannot nest either.
	_, err = BackwardFromExpressions(def, map[string]string{"x": "sum(grad, axes=" + strings.Repeat("[", 3_000_000) + ")"})
	assert.ErrorContains(t, err, "lists in attribute values hold numbers, strings or booleans, not lists")

	// A wide expression is bounded as well: every node costs an op call at
	// backward time.
	_, err = BackwardFromExpressions(def, map[string]string{"x": "add(grad" + strings.Repeat(", grad", maxExprNodes) + ")"})
	assert.ErrorContains(t, err, "more than 10000 numbers, names and calls in one expression")
}

func TestQuoteShort(t *testing.T) {
	assert.Equal(t, `"mul(grad, x"`, quoteShort("mul(grad, x", 3))
	long := strings.Repeat("a", 100) + "é" + strings.Repeat("b", 100)
	q := quoteShort(long, 100)
	assert.Equal(t, `..."`+strings.Repeat("a", 40)+`é`+strings.Repeat("b", 38)+`"... (202 bytes)`, q,
		"cut on rune boundaries")
}
