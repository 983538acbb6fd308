package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// Kernels register per backend kind; a second kernel for the same kind and
// op is refused (a plugin cannot shadow a built-in), and each kind lists
// only its own ops.
func TestKernelRegistry(t *testing.T) {
	k := func(*core.KernelCall) error { return nil }
	require.NoError(t, core.RegisterKernel("reg-a", "op2", k))
	require.NoError(t, core.RegisterKernel("reg-a", "op1", k))
	require.NoError(t, core.RegisterKernel("reg-b", "op1", k))

	err := core.RegisterKernel("reg-a", "op1", k)
	require.Error(t, err)
	assert.Equal(t, `a reg-a kernel for "op1" is already registered`, err.Error())
	assert.EqualError(t, core.RegisterKernel("reg-a", "op3", nil), `reg-a kernel for "op3" is nil`)

	assert.Equal(t, []string{"op1", "op2"}, core.KernelOps("reg-a"))
	assert.Equal(t, []string{"op1"}, core.KernelOps("reg-b"))
	assert.Empty(t, core.KernelOps("reg-none"))
	assert.NotNil(t, core.LookupKernel("reg-b", "op1"))
	assert.Nil(t, core.LookupKernel("reg-b", "op2"))
	assert.Panics(t, func() { core.MustRegisterKernel("reg-b", "op1", k) })
}

// A kind with no kernels misses every op but the views, which core makes,
// and the Compose ops, which run their parts.
func TestMissingKernels(t *testing.T) {
	missing, needed := core.MissingKernels("reg-nothing")
	assert.Equal(t, needed, len(missing))
	views, composed := 0, 0
	for _, def := range core.Ops() {
		switch {
		case def.View != nil:
			views++
		case def.Compose != nil:
			composed++
		}
	}
	assert.Positive(t, views)
	assert.Positive(t, composed)
	assert.Equal(t, len(core.Ops())-views-composed, needed)
	assert.IsIncreasing(t, missing)
}

// A kind's deriver builds the kernel of an op described by its arithmetic
// (or its GPUBody) on first lookup, once; a registered kernel takes
// precedence over it, and ops with neither are never derived.
func TestKernelDeriver(t *testing.T) {
	built := 0
	core.RegisterKernelDeriver("reg-derive", func(def *core.OpDef) core.Kernel {
		built++
		return func(*core.KernelCall) error { return nil }
	})
	assert.NotNil(t, core.LookupKernel("reg-derive", "hypot"))
	assert.NotNil(t, core.LookupKernel("reg-derive", "hypot"))
	assert.Equal(t, 1, built, "a derived kernel is built once")
	assert.Nil(t, core.LookupKernel("reg-derive", "matmul"), "matmul has no Pointwise description")
	assert.Contains(t, core.KernelOps("reg-derive"), "asin")
	assert.NotNil(t, core.LookupKernel("reg-derive", "tril"), "an op with a GPUBody is derived too")
	assert.Contains(t, core.KernelOps("reg-derive"), "dequantize_int8x4")

	calls := 0
	own := func(*core.KernelCall) error { calls++; return nil }
	require.NoError(t, core.RegisterKernel("reg-derive", "hypot", own))
	require.NoError(t, core.LookupKernel("reg-derive", "hypot")(nil))
	assert.Equal(t, 1, calls, "the registered kernel replaces the derived one")
}

// Register refuses a Pointwise, GPUBody or Compose description the
// backends could not use, naming the op and the problem.
func TestPointwiseAndComposeChecks(t *testing.T) {
	infer := core.InferSame
	f := func(core.Attrs) func(float64) float64 { return func(x float64) float64 { return x } }
	expr := func(a []string, _ string, _ core.Attrs, _ core.ScalarSlots) string { return a[0] }
	body := func(core.BodyTypes, core.Attrs, core.BodySlots) string { return "return x0(i);" }
	one := []core.InputSpec{{Name: "x"}}
	rows := func([]core.Shape, core.Shape, core.Attrs) int { return 1 }
	cases := []struct {
		def  *core.OpDef
		want string
	}{
		{&core.OpDef{Name: "pw_no_expr", Doc: "d", Inputs: one, Infer: infer, Pointwise: &core.Pointwise{F: f}},
			"register pw_no_expr: Pointwise has no Expr, so the GPU backends could not run it"},
		{&core.OpDef{Name: "pw_none", Doc: "d", Inputs: one, Infer: infer, Pointwise: &core.Pointwise{Expr: expr}},
			"register pw_none: Pointwise needs exactly one of F (one input) and F2 (two inputs)"},
		{&core.OpDef{Name: "pw_arity", Doc: "d", Inputs: []core.InputSpec{{Name: "a"}, {Name: "b"}}, Infer: infer,
			Pointwise: &core.Pointwise{F: f, Expr: expr}},
			"register pw_arity: Pointwise with F takes exactly 1 required input(s), the OpDef declares 2"},
		{&core.OpDef{Name: "pw_attrs2", Doc: "d", Inputs: []core.InputSpec{{Name: "a"}, {Name: "b"}}, Infer: infer,
			Attrs:     []core.AttrSpec{{Name: "k", Kind: core.AttrFloat, Default: 1.0, Doc: "k"}},
			Pointwise: &core.Pointwise{F2: func(core.Attrs) func(a, b float64) float64 { return nil }, Expr: expr}},
			"register pw_attrs2: a two-input Pointwise op cannot take attributes (GPU binary kernels have none), it has 1"},
		{&core.OpDef{Name: "compose_bw", Doc: "d", Inputs: one, Infer: infer,
			Compose:  func(in []*core.Tensor, _ core.Attrs) ([]*core.Tensor, error) { return in, nil },
			Backward: func(*core.GradCtx) ([]*core.Tensor, error) { return nil, nil }},
			"register compose_bw: a Compose op is defined by other ops only: no Pointwise, View, Backward or WGSL"},
		{&core.OpDef{Name: "body_none", Doc: "d", Inputs: one, Infer: infer, GPUBody: &core.ElementBody{}},
			"register body_none: GPUBody has no Body"},
		{&core.OpDef{Name: "body_pw", Doc: "d", Inputs: one, Infer: infer, GPUBody: &core.ElementBody{Body: body},
			Pointwise: &core.Pointwise{F: f, Expr: expr}},
			"register body_pw: GPUBody is a kernel; an op with Pointwise or Compose has its kernels already"},
		{&core.OpDef{Name: "body_random", Doc: "d", Inputs: one, Infer: infer, GPUBody: &core.ElementBody{Body: body}, Random: true},
			"register body_random: a GPUBody op cannot be a view, random or dynamic (one output element per thread, its shape known before the launch)"},
		{&core.OpDef{Name: "body_variadic", Doc: "d", Inputs: []core.InputSpec{{Name: "xs", Variadic: true}}, Infer: infer,
			GPUBody: &core.ElementBody{Body: body}},
			"register body_variadic: a GPUBody op cannot take a variadic or optional input (xs): each input is bound by position (a row body may take an optional one)"},
		{&core.OpDef{Name: "body_optional", Doc: "d", Inputs: []core.InputSpec{{Name: "x"}, {Name: "w", Optional: true}}, Infer: infer,
			GPUBody: &core.ElementBody{Body: body}},
			"register body_optional: a GPUBody op cannot take a variadic or optional input (w): each input is bound by position (a row body may take an optional one)"},
		{&core.OpDef{Name: "rows_variadic", Doc: "d", Inputs: []core.InputSpec{{Name: "xs", Variadic: true}}, Infer: infer,
			GPUBody: &core.ElementBody{Body: body, Rows: rows}},
			"register rows_variadic: a GPUBody op cannot take a variadic or optional input (xs): each input is bound by position (a row body may take an optional one)"},
	}
	for _, c := range cases {
		assert.EqualError(t, core.Register(c.def), c.want)
		_, registered := core.LookupOp(c.def.Name)
		assert.False(t, registered, c.def.Name)
	}
	// A row body may take an optional input: its kernel sees which came.
	require.NoError(t, core.Register(&core.OpDef{Name: "_test_rows_optional", Doc: "d", Internal: true,
		Inputs: []core.InputSpec{{Name: "x"}, {Name: "w", Optional: true}}, Infer: infer,
		GPUBody: &core.ElementBody{Body: body, Rows: rows}}))
}

// A Compose op checks its inputs under its own name, then runs its parts;
// autograd reaches through them (isfinite's parts have no gradient, so its
// input is NoGrad and the op is not differentiable).
func TestComposeOp(t *testing.T) {
	x := core.FromFloat64s(core.F32, core.Shape{4}, []float64{1, math.NaN(), math.Inf(-1), math.Copysign(0, -1)})
	out, err := core.Call("isfinite", []*core.Tensor{x}, nil)
	require.NoError(t, err)
	got, err := out[0].Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0, 0, 1}, got)
	sb, err := core.Call("signbit", []*core.Tensor{x}, nil)
	require.NoError(t, err)
	got, err = sb[0].Float64s()
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0, 1, 1}, got, "-inf and -0 have the sign bit")
	def, _ := core.LookupOp("isfinite")
	assert.False(t, def.Differentiable())
	_, err = core.Call("isfinite", []*core.Tensor{x, x}, nil)
	assert.ErrorContains(t, err, "isfinite: takes 1 input(s)")
}

// An OpDef remembers its kernel per memoised kind (LookupKernelFor), and a
// kernel registered later is found: the memo is keyed by the registry's
// generation, not kept for good.
func TestLookupKernelForSeesLaterRegistrations(t *testing.T) {
	def := &core.OpDef{Name: "memo_probe_op"}
	assert.Nil(t, core.LookupKernelFor("cpu", def))
	assert.Nil(t, core.LookupKernelFor("cpu", def), "the remembered miss")
	calls := 0
	require.NoError(t, core.RegisterKernel("cpu", "memo_probe_op", func(*core.KernelCall) error { calls++; return nil }))
	k := core.LookupKernelFor("cpu", def)
	require.NotNil(t, k, "a kernel registered after a remembered miss")
	require.NoError(t, k(&core.KernelCall{}))
	assert.Equal(t, 1, calls)
	assert.Nil(t, core.LookupKernelFor("reg-none", def), "a kind that is not memoised still answers")
}
