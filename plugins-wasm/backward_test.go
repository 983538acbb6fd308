package plugins

import (
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
