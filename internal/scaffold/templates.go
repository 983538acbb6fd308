package scaffold

import "text/template"

var opTemplate = template.Must(template.New("op").Parse(`package core

{{if .Math}}import "math"
{{end}}
// {{.Name}}, written by ` + "`webtensor op new {{.Name}} --formula \"{{.Formula}}\"`" + `: the op's
// arithmetic on one element (F), the same as a GPU expression (Expr), from
// which every backend derives its kernel, and its gradient written with
// registry ops. It is an op like any other now (docs/adding-an-op.md).

func init() {
{{- if .Binary}}
	samples := []Sample{
		{Name: "same", Inputs: []Gen{ {{- if .Positive}}GU(F32, 0.5, 3, 3, 4), GU(F32, 0.5, 3, 3, 4){{else}}G(F32, 3, 4), G(F32, 3, 4){{end}}}},
		{Name: "broadcast", Inputs: []Gen{ {{- if .Positive}}GU(F32, 0.5, 3, 2, 3, 1), GU(F32, 0.5, 3, 4){{else}}G(F32, 2, 3, 1), G(F32, 4){{end}}}},
		{Name: "f64", Inputs: []Gen{ {{- if .Positive}}GU(F64, 0.5, 3, 5), GU(F64, 0.5, 3, 5){{else}}G(F64, 5), G(F64, 5){{end}}}},
		{Name: "empty", Inputs: []Gen{G(F32, 0, 3), G(F32, 3)}},
	}
	def := withInfer(binaryDef("{{.Name}}", {{.Doc}}, binaryGrad(
		func(x, y, out, g *Tensor) *Tensor { return ew("mul", g, {{.DX}}) },
		func(x, y, out, g *Tensor) *Tensor { return ew("mul", g, {{.DY}}) }), samples), inferFloatResult)
	def.Pointwise = &Pointwise{
		F2:   func(Attrs) func(x, y float64) float64 { return func(x, y float64) float64 { return {{.Go}} } },
		Expr: func(v []string, _ string, _ Attrs, _ ScalarSlots) string { x, y := v[0], v[1]; return {{.GPU}} },
	}
	MustRegister(def)
{{- else}}
	MustRegister(unaryDef(unarySpec{name: "{{.Name}}", doc: {{.Doc}}, category: "{{.Category}}", result: unaryFloat,
		{{- if .Positive}}
		smooth: ewRange(0.5, 3), ints: GI(I32, 1, 10, 2, 3),
		{{- else if .Kinks}}
		smooth: ewAwayFromKinks,
		{{- end}}
		grad: func(x, out, g *Tensor, _ Attrs) *Tensor { return ew("mul", g, {{.DX}}) },
		pointwise: &Pointwise{
			F:    func(Attrs) func(float64) float64 { return func(x float64) float64 { return {{.Go}} } },
			Expr: func(v []string, _ string, _ Attrs, _ ScalarSlots) string { x := v[0]; return {{.GPU}} },
		},
	}))
{{- end}}
}
`))

var testTemplate = template.Must(template.New("test").Parse(`package core_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// Training through {{.Name}} (written by ` + "`webtensor op new`" + `): gradient descent on
// w in mean(({{.Name}}(x·w{{if .Binary}}, x{{end}}) - t)²), t made with w = 0.7, lowers the
// loss. The shared suites check its values and gradients against PyTorch
// on every backend (TestOpsMatchReference/{{.Name}}).
func TestTrainThrough{{.Name}}(t *testing.T) {
	x := core.Call1("rand", core.Attrs{"shape": []int{64}, "seed": 1})
	x = core.Call1("add", nil, x, core.Scalar(0.5, core.F32, core.CPU)) // in (0.5, 1.5): every formula's domain
	apply := func(w *core.Tensor) *core.Tensor {
		xw := core.Call1("mul", nil, x, w)
		return core.Call1("{{.Name}}", nil, xw{{if .Binary}}, x{{end}})
	}
	target := apply(core.Scalar(0.7, core.F32, core.CPU))
	w := core.Scalar(1.5, core.F32, core.CPU)
	var first, last float64
	for step := range 40 {
		w.SetRequiresGrad(true)
		diff := core.Call1("sub", nil, apply(w), target)
		loss := core.Call1("mean", nil, core.Call1("square", nil, diff))
		require.NoError(t, loss.Backward())
		l, err := loss.Item()
		require.NoError(t, err)
		if step == 0 {
			first = l
		}
		last = l
		w = core.Call1("sub", nil, w.Detach(), core.Call1("mul", nil, w.Grad(), core.Scalar(0.1, core.F32, core.CPU)))
		require.NoError(t, w.Err())
	}
	require.Less(t, last, first, "the loss fell from %g", first)
}
`))
