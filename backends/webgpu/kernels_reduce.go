package webgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Reductions run through the levels of launch_reduce.go over the distinct
// members of their input (launch_reduce_repeat.go). Float sums use Kahan
// compensation, so a long f32 sum stays within the tolerance of the CPU's
// f64 accumulation. Integer sums and products, whose dtype is i64, are
// computed exactly in two 32-bit words (sums) or with overflow tracking
// (products) and fail the op when the result leaves the i32 range the GPU
// holds i64 in. Reductions with two passes over the data (var, std,
// logsumexp, the 2-norm) run them as two reductions, so each is split as
// its sizes need.

func init() {
	register("sum", sumKernel(false))
	register("mean", sumKernel(true))
	register("prod", prodKernel)
	register("max", extremeKernel(">"))
	register("min", extremeKernel("<"))
	register("any", anyAllKernel(false))
	register("all", anyAllKernel(true))
	register("var", varKernel(false))
	register("std", varKernel(true))
	register("logsumexp", logsumexpKernel)
	register("norm", normKernel)
	register("argmax", argExtremeKernel(">"))
	register("argmin", argExtremeKernel("<"))
	register("cumsum", scanKernel("+"))
	register("cumprod", scanKernel("*"))
	register("_cumprod_grad", cumprodGradKernel)
	register("_prod_grad", prodGradKernel)
	register("_extreme_grad", extremeGradKernel)
	register("_norm_grad", normGradKernel)
}

// inputF32 is a reduction's input read as f32.
func inputF32(in *core.Tensor) string { return lower.Conv("v0(o, r)", physical(in.DType()), "f32") }

// sumFinal is a sum's result, or a mean's (NaN for an empty group).
func sumFinal(mean bool) func(acc, count string) string {
	if !mean {
		return func(acc, _ string) string { return acc }
	}
	return func(acc, count string) string {
		return fmt.Sprintf("select(%[1]s / %[2]s, f_nan(), %[2]s == 0.0)", acc, count)
	}
}

func sumKernel(mean bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		f := newFrame(in.Shape(), oprules.ReducedAxes(in.Rank(), k.Attrs))
		if physical(out.DType()) == "f32" {
			return gpuOf(k).sumRun(f, k.Inputs[:1], out, inputF32(in), sumFinal(mean))
		}
		return gpuOf(k).intReduce(k.Op.Name, f, in, out, intSum)
	}
}

// reduceF32 runs red over one input's distinct members, read as f32
// through expr (of x, the member's value).
func (b *Backend) reduceF32(op string, in *core.Tensor, axes []int, out *core.Tensor, red reducer, expr func(x string) string) error {
	d := distinctFrame(in.Shape(), axes, in)
	red.set = chainSet(red.set, d.setRepeat)
	return b.runReducer(op, d.f, d.ins, out, red, []string{expr(inputF32(in))})
}

// chainSet is a params setter that runs each of sets.
func chainSet(sets ...func(*params)) func(*params) {
	return func(p *params) {
		for _, s := range sets {
			if s != nil {
				s(p)
			}
		}
	}
}

func prodKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
	if physical(out.DType()) != "f32" {
		return gpuOf(k).intReduce("prod", newFrame(in.Shape(), axes), in, out, intProd)
	}
	red := reducer{partial: core.F32, words: 1,
		accum: func(read []string, loop string) string {
			return "\tvar acc = 1.0;\n\t" + loop + " { acc *= " + read[0] + "; }\n"
		},
		keep:  "\tout0[t] = acc;\n",
		final: "\tout0[o] = " + storeExpr(out.DType(), "f_pow_repeat(acc, pu(43u))") + ";\n",
		next:  []string{"v0(o, r)"},
	}
	return gpuOf(k).reduceF32("prod", in, axes, out, red, func(x string) string { return x })
}

// extremeReducer keeps the largest (op ">") or smallest value of type ct;
// NaN, once met, stays.
func extremeReducer(op, ct string, out core.DType) reducer {
	return extremeFrom(op, ct, out, map[string]map[string]string{
		">": {"f32": "-f_inf()", "i32": "i32(-2147483648)", "u32": "0u"},
		"<": {"f32": "f_inf()", "i32": "2147483647", "u32": "4294967295u"},
	}[op][ct])
}

// extremeFrom is extremeReducer starting from init, the result of an
// empty group.
func extremeFrom(op, ct string, out core.DType, init string) reducer {
	nan, stop := "false", ""
	if ct == "f32" {
		nan, stop = "is_nan(v)", "\t\tif is_nan(acc) { break; }\n"
	}
	return reducer{partial: dtypeOf(ct), words: 1,
		accum: func(read []string, loop string) string {
			return fmt.Sprintf("\tvar acc = %s;\n\t%s {\n\t\tlet v = %s;\n\t\tif %s || v %s acc { acc = v; }\n%s\t}\n",
				init, loop, read[0], nan, op, stop)
		},
		keep:  "\tout0[t] = acc;\n",
		final: "\tout0[o] = " + storeExpr(out, "acc") + ";\n",
		next:  []string{"v0(o, r)"},
	}
}

// dtypeOf is the dtype whose physical type is ct.
func dtypeOf(ct string) core.DType {
	return map[string]core.DType{"f32": core.F32, "i32": core.I32, "u32": core.U32}[ct]
}

func extremeKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		ct := physical(in.DType())
		d := distinctFrame(in.Shape(), oprules.ReducedAxes(in.Rank(), k.Attrs), in)
		return gpuOf(k).runReducer(k.Op.Name, d.f, d.ins, out, extremeReducer(op, ct, out.DType()), []string{"v0(o, r)"})
	}
}

// anyAllKernel tests members for nonzero (NaN counts as nonzero).
func anyAllKernel(all bool) core.Kernel {
	init, join, stop := "false", "||", "acc"
	if all {
		init, join, stop = "true", "&&", "!acc"
	}
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		red := reducer{partial: core.U32, words: 1,
			accum: func(read []string, loop string) string {
				return fmt.Sprintf("\tvar acc = %s;\n\t%s { acc = acc %s %s; if %s { break; } }\n", init, loop, join, read[0], stop)
			},
			keep:  "\tout0[t] = select(0u, 1u, acc);\n",
			final: "\tout0[o] = " + storeExpr(out.DType(), lower.BoolOf("acc")) + ";\n",
			next:  []string{"(v0(o, r) != 0u)"},
		}
		d := distinctFrame(in.Shape(), oprules.ReducedAxes(in.Rank(), k.Attrs), in)
		return gpuOf(k).runReducer(k.Op.Name, d.f, d.ins, out, red, []string{lower.Truthy("v0(o, r)", physical(in.DType()))})
	}
}

// stat reduces d into a new f32 tensor of one value per group, and views
// it over the frame for a second pass (keptView).
func (b *Backend) stat(op string, d distinct, red reducer, first string) (*core.Tensor, *core.Tensor, error) {
	t, err := core.Empty(b, core.Shape{d.f.Groups()}, core.F32)
	if err != nil {
		return nil, nil, err
	}
	red.set = chainSet(red.set, d.setRepeat)
	if err := b.runReducer(op, d.f, d.ins, t, red, []string{first}); err != nil {
		t.Release()
		return nil, nil, err
	}
	return t, keptView(t, d.f), nil
}

// withStat appends a per-group statistic's view to a reduction's inputs,
// where bodies read it as v<len(ins)>.
func withStat(ins []*core.Tensor, stat *core.Tensor) []*core.Tensor {
	return append(append([]*core.Tensor{}, ins...), stat)
}

// varKernel: the mean, then the sum of squared deviations from it, each a
// split reduction; with n distinct members repeated m times the variance
// is ss * m / (n * m - correction).
func varKernel(sqrt bool) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		b := gpuOf(k)
		d := distinctFrame(in.Shape(), oprules.ReducedAxes(in.Rank(), k.Attrs), in)
		count := func(p *params) { p.setF(40, float64(d.f.Members())) }
		mean, meanView, err := b.stat(k.Op.Name, d, sumReducer(core.F32, sumFinal(true), count), inputF32(in))
		if err != nil {
			return err
		}
		defer mean.Release()
		final := func(acc, count string) string {
			v := fmt.Sprintf("(%s / max(%s - pf(0u), 0.0))", acc, count)
			if sqrt {
				return "m_sqrt" + v
			}
			return v
		}
		set := chainSet(count, d.setRepeat, func(p *params) { p.setF(0, k.Attrs.Float("correction")) })
		x, m := inputF32(in), fmt.Sprintf("v%d(o, r)", len(d.ins))
		return b.runReducer(k.Op.Name, d.f, withStat(d.ins, meanView), out, sumReducer(out.DType(), final, set),
			[]string{"(" + x + " - " + m + ") * (" + x + " - " + m + ")"})
	}
}

// logsumexpKernel shifts by the maximum unless it is infinite, as PyTorch
// does: the maximum, then the sum of exp(x - shift), then log(sum * m) +
// shift.
func logsumexpKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	b := gpuOf(k)
	d := distinctFrame(in.Shape(), oprules.ReducedAxes(in.Rank(), k.Attrs), in)
	mx, mxView, err := b.stat(k.Op.Name, d, extremeReducer(">", "f32", core.F32), inputF32(in))
	if err != nil {
		return err
	}
	defer mx.Release()
	shift := func(m string) string { return "select(" + m + ", 0.0, is_inf(" + m + "))" }
	sums, err := core.Empty(b, core.Shape{d.f.Groups()}, core.F32)
	if err != nil {
		return err
	}
	defer sums.Release()
	m := fmt.Sprintf("v%d(o, r)", len(d.ins))
	set := chainSet(d.setRepeat, func(p *params) { p.setF(40, float64(d.f.Members())) })
	if err := b.runReducer(k.Op.Name, d.f, withStat(d.ins, mxView), sums, sumReducer(core.F32, sumFinal(false), set),
		[]string{"m_exp(" + inputF32(in) + " - " + shift(m) + ")"}); err != nil {
		return err
	}
	return b.mapRun([]*core.Tensor{sums.Reshape(out.Shape()), mx.Reshape(out.Shape())}, out, "m_log(x0) + "+shift("x1"), nil)
}

// normKernel: the infinity norms are extrema of |x|, the 0-, 1- and p-norms
// sums; the 2-norm scales by the largest magnitude first so squares
// neither overflow nor underflow in f32.
func normKernel(k *core.KernelCall) error {
	in, out := k.Inputs[0], k.Outputs[0]
	b := gpuOf(k)
	axes := oprules.ReducedAxes(in.Rank(), k.Attrs)
	ord := k.Attrs.Float("ord")
	abs := func(x string) string { return "abs(" + x + ")" }
	sum := func(expr func(x string) string, final func(acc, count string) string, set func(*params)) error {
		d := distinctFrame(in.Shape(), axes, in)
		set = chainSet(set, d.setRepeat, func(p *params) { p.setF(40, float64(d.f.Members())) })
		return b.runReducer(k.Op.Name, d.f, d.ins, out, sumReducer(out.DType(), final, set), []string{expr(inputF32(in))})
	}
	switch {
	case math.IsInf(ord, 0):
		op := map[bool]string{true: ">", false: "<"}[ord > 0]
		// The largest magnitude of no members is 0, as on the CPU.
		init := map[string]string{">": "0.0", "<": "f_inf()"}[op]
		return b.reduceF32(k.Op.Name, in, axes, out, extremeFrom(op, "f32", out.DType(), init), abs)
	case ord == 0:
		return sum(func(x string) string { return "select(0.0, 1.0, " + x + " != 0.0)" }, sumFinal(false), nil)
	case ord == 1:
		return sum(abs, sumFinal(false), nil)
	case ord != 2:
		return sum(func(x string) string { return "f_pow(" + abs(x) + ", pf(0u))" },
			func(acc, _ string) string { return "f_pow(" + acc + ", 1.0 / pf(0u))" }, func(p *params) { p.setF(0, ord) })
	}
	d := distinctFrame(in.Shape(), axes, in)
	big, bigView, err := b.stat(k.Op.Name, d, extremeFrom(">", "f32", core.F32, "0.0"), abs(inputF32(in)))
	if err != nil {
		return err
	}
	defer big.Release()
	sums, err := core.Empty(b, core.Shape{d.f.Groups()}, core.F32)
	if err != nil {
		return err
	}
	defer sums.Release()
	s := fmt.Sprintf("(%s / v%d(o, r))", abs(inputF32(in)), len(d.ins))
	set := chainSet(d.setRepeat, func(p *params) { p.setF(40, float64(d.f.Members())) })
	if err := b.runReducer(k.Op.Name, d.f, withStat(d.ins, bigView), sums, sumReducer(core.F32, sumFinal(false), set),
		[]string{s + " * " + s}); err != nil {
		return err
	}
	return b.mapRun([]*core.Tensor{sums.Reshape(out.Shape()), big.Reshape(out.Shape())}, out,
		"select(x1 * sqrt(x0), x1, x1 == 0.0 || is_inf(x1) || is_nan(x1))", nil)
}
