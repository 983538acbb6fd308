package scaffold

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eval computes a tree at x, y (the math every emitter writes).
func eval(n *node, x, y float64) float64 {
	a := func(i int) float64 { return eval(n.args[i], x, y) }
	switch n.kind {
	case "var":
		if n.name == "x" {
			return x
		}
		return y
	case "num":
		return n.val
	case "neg":
		return -a(0)
	case "+":
		return a(0) + a(1)
	case "-":
		return a(0) - a(1)
	case "*":
		return a(0) * a(1)
	case "/":
		return a(0) / a(1)
	case "sigmoid":
		return 1 / (1 + math.Exp(-a(0)))
	case "square":
		return a(0) * a(0)
	case "sign":
		return math.Copysign(1, a(0))
	case "pow":
		return math.Pow(a(0), n.val)
	}
	return map[string]func(float64) float64{"exp": math.Exp, "expm1": math.Expm1, "log": math.Log, "log1p": math.Log1p,
		"sqrt": math.Sqrt, "tanh": math.Tanh, "sin": math.Sin, "cos": math.Cos, "abs": math.Abs, "erf": math.Erf}[n.kind](a(0))
}

// The symbolic derivatives agree with central differences.
func TestDerivativesMatchFiniteDifferences(t *testing.T) {
	formulas := []string{"x / (1 + abs(x))", "x * tanh(log1p(exp(x)))", "x * sigmoid(1.702 * x)", "sqrt(x) * log(x) - 3",
		"erf(x) * cos(x) + sin(2 * x)", "pow(x, 3) / square(x + 2)", "expm1(x) - pow(x, 0.5)", "log(exp(x) + exp(y)) * y",
		"x / y - y * y", "-x"}
	for _, f := range formulas {
		n, vars, err := parse(f)
		require.NoError(t, err, f)
		for _, v := range []string{"x", "y"} {
			if !vars[v] {
				continue
			}
			d := deriv(n, v)
			for _, at := range []float64{0.7, 1.3, 2.2} {
				x, y, h := at, at+0.4, 1e-6
				var fd float64
				if v == "x" {
					fd = (eval(n, x+h, y) - eval(n, x-h, y)) / (2 * h)
				} else {
					fd = (eval(n, x, y+h) - eval(n, x, y-h)) / (2 * h)
				}
				assert.InDelta(t, fd, eval(d, x, y), 1e-5*(1+math.Abs(fd)), "d(%s)/d%s at %v", f, v, at)
			}
		}
	}
}

// Bad formulas and names say what is wrong and what is allowed.
func TestPlanRejects(t *testing.T) {
	repo := t.TempDir()
	none := func(string) bool { return false }
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "Bad-Name", Formula: "x"}, "use lower-case letters"},
		{Spec{Name: "taken", Formula: "x"}, `op "taken" is already registered`},
		{Spec{Name: "a", Formula: "x +"}, "write Go syntax"},
		{Spec{Name: "a", Formula: "gamma(x)"}, "unknown function gamma: use one of abs, cos, erf, exp"},
		{Spec{Name: "a", Formula: "x % 2"}, "operator % is not supported"},
		{Spec{Name: "a", Formula: "z * 2"}, `unknown name "z"`},
		{Spec{Name: "a", Formula: "2 * y"}, "does not use x"},
		{Spec{Name: "a", Formula: "pow(x, y)"}, "pow's exponent must be a number"},
		{Spec{Name: "a", Formula: "x * y", Category: "unary"}, "its category is binary"},
		{Spec{Name: "a", Formula: "x", Category: "norm"}, "a one-input op is unary or activation"},
		{Spec{Name: "a", Formula: "x"}, "reading the references"},
	}
	for _, c := range cases {
		_, err := Plan(repo, c.spec, func(n string) bool { return n == "taken" || none(n) })
		assert.ErrorContains(t, err, c.want, c.spec.Formula)
	}
}

// Plan writes an OpDef that gofmt accepts, with the three targets of the
// formula, and adds the reference entry inside REFS.
func TestPlanWritesTheOp(t *testing.T) {
	repo := t.TempDir()
	refs := filepath.Join(repo, "conformance", "gen", "refs")
	require.NoError(t, os.MkdirAll(refs, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "core"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(refs, "binary.py"),
		[]byte("import torch\n\nfrom ._util import _plain\n\nREFS = {\n    \"add\": _plain(torch.add),\n}\n"), 0o644))
	files, err := Plan(repo, Spec{Name: "smooth_max", Formula: "log(exp(x) + exp(y))"}, func(string) bool { return false })
	require.NoError(t, err)
	require.Len(t, files, 3)
	op := string(files[0].Content)
	assert.Equal(t, filepath.Join("core", "ops_binary_smooth_max.go"), files[0].Path)
	assert.Contains(t, op, `return math.Log((math.Exp(x) + math.Exp(y)))`)
	assert.Contains(t, op, `return "m_log((m_exp(" + x + ") + m_exp(" + y + ")))"`)
	assert.Contains(t, op, "GU(F32, 0.5, 3, 3, 4)", "log's domain: positive samples")
	ref := string(files[2].Content)
	assert.Contains(t, ref, "from ._util import _float_result, _plain")
	assert.True(t, strings.Index(ref, `"smooth_max": _float_result(lambda x, y: torch.log((torch.exp(x) + torch.exp(y))))`) <
		strings.Index(ref, "\n}\n"), "inside REFS")
	require.NoError(t, Write(repo, files))
}
