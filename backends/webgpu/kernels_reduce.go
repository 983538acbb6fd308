package webgpu

import (
	"fmt"
	"math"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

// Reductions run one thread per output element looping over its group (see
// wgsl/reduce.wgsl). Float sums use Kahan compensation, so a long f32 sum
// stays within the tolerance of the CPU's f64 accumulation.

// kahanSum is WGSL that sums expr(r) over the group into variable name.
func kahanSum(name, expr string) string {
	return fmt.Sprintf(`	var %[1]s = 0.0;
	var %[1]s_c = 0.0;
	for (var r = 0u; r < R; r++) {
		let ky = (%[2]s) - %[1]s_c;
		let ks = %[1]s + ky;
		%[1]s_c = select((ks - %[1]s) - ky, 0.0, is_inf(ks));
		%[1]s = ks;
	}
`, name, expr)
}

// reduceKernel wires an op whose body only needs the input converted to
// the output's compute type as x(r).
func reduceKernel(body func(k *core.KernelCall, x, ct string, p *params) string) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		f := newFrame(in.Shape(), core.ReducedAxes(in, k.Attrs))
		ct := physical(out.DType())
		var prm params
		src := body(k, lower.Conv("v0(o, r)", physical(in.DType()), ct), ct, &prm)
		return gpuOf(k).reduceRun(f, k.Inputs[:1], out, false, src, func(p *params) { *p = prm })
	}
}

// splittableSum runs an f32 sum or mean through sumRun, which splits few
// long groups over more threads; other types take one pass (whole).
func splittableSum(mean bool, whole core.Kernel) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		if physical(out.DType()) != "f32" {
			return whole(k)
		}
		f := newFrame(in.Shape(), core.ReducedAxes(in, k.Attrs))
		return gpuOf(k).sumRun(f, k.Inputs[:1], out, lower.Conv("v0(o, r)", physical(in.DType()), "f32"), sumFinal(mean))
	}
}

// sumFinal is a sum's result, or a mean's (NaN for an empty group).
func sumFinal(mean bool) func(acc, count string) string {
	if !mean {
		return func(acc, _ string) string { return acc }
	}
	return func(acc, count string) string {
		return fmt.Sprintf("select(%[1]s / %[2]s, f_nan(), %[2]s == 0.0)", acc, count)
	}
}

func store(out *core.Tensor, e string) string {
	return "\tout0[o] = " + storeExpr(out.DType(), e) + ";\n"
}

func sumBody(k *core.KernelCall, x, ct string, _ *params) string {
	if ct == "f32" {
		return kahanSum("acc", x) + store(k.Outputs[0], "acc")
	}
	return fmt.Sprintf("\tvar acc = %s;\n\tfor (var r = 0u; r < R; r++) { acc += %s; }\n", lower.Zero(ct), x) + store(k.Outputs[0], "acc")
}

func meanBody(k *core.KernelCall, x, _ string, _ *params) string {
	return kahanSum("acc", x) + store(k.Outputs[0], "select(acc / f32(R), f_nan(), R == 0u)")
}

func prodBody(k *core.KernelCall, x, ct string, _ *params) string {
	one := map[string]string{"f32": "1.0", "i32": "1", "u32": "1u"}[ct]
	return fmt.Sprintf("\tvar acc = %s;\n\tfor (var r = 0u; r < R; r++) { acc *= %s; }\n", one, x) + store(k.Outputs[0], "acc")
}

// extremeBody keeps the largest (op ">") or smallest value; NaN, once met,
// stays.
func extremeBody(op string) func(k *core.KernelCall, x, ct string, _ *params) string {
	return func(k *core.KernelCall, x, ct string, _ *params) string {
		nan := "false"
		if ct == "f32" {
			nan = "is_nan(v)"
		}
		return fmt.Sprintf(`	var acc = %[1]s;
	for (var r = 1u; r < R; r++) {
		let v = %[2]s;
		if %[3]s || v %[4]s acc { acc = v; }
		%[5]s
	}
`, replaceR(x, "0u"), x, nan, op, map[bool]string{true: "if is_nan(acc) { break; }", false: ""}[ct == "f32"]) + store(k.Outputs[0], "acc")
	}
}

func replaceR(x, r string) string {
	return strings.ReplaceAll(x, "v0(o, r)", "v0(o, "+r+")")
}

// anyAllBody tests members for nonzero (NaN counts as nonzero).
func anyAllBody(all bool) func(k *core.KernelCall, x, ct string, _ *params) string {
	init, join, stop := "false", "||", "acc"
	if all {
		init, join, stop = "true", "&&", "!acc"
	}
	return func(k *core.KernelCall, _, _ string, _ *params) string {
		cond := lower.Truthy("v", physical(k.Inputs[0].DType()))
		return fmt.Sprintf("\tvar acc = %s;\n\tfor (var r = 0u; r < R; r++) { let v = v0(o, r); acc = acc %s %s; if %s { break; } }\n",
			init, join, cond, stop) + store(k.Outputs[0], lower.BoolOf("acc"))
	}
}

// varBody is two passes over the group: the mean, then squared deviations.
func varBody(sqrt bool) func(k *core.KernelCall, x, ct string, p *params) string {
	return func(k *core.KernelCall, x, _ string, p *params) string {
		p.setF(0, float64(k.Attrs.Int("correction")))
		res := "ss / max(f32(R) - pf(0u), 0.0)"
		if sqrt {
			res = "m_sqrt(" + res + ")"
		}
		return kahanSum("sum", x) + "\tlet mean = sum / f32(R);\n" +
			kahanSum("ss", "("+x+" - mean) * ("+x+" - mean)") + store(k.Outputs[0], res)
	}
}

// logsumexpBody shifts by the maximum unless it is infinite, as PyTorch does.
func logsumexpBody(k *core.KernelCall, x, _ string, _ *params) string {
	return fmt.Sprintf(`	var m = -f_inf();
	for (var r = 0u; r < R; r++) {
		let v = %[1]s;
		if (v > m || is_nan(v)) && !is_nan(m) { m = v; }
	}
	if is_inf(m) { m = 0.0; }
`, x) + kahanSum("s", "m_exp("+x+" - m)") + store(k.Outputs[0], "m_log(s) + m")
}

func normBody(k *core.KernelCall, x, _ string, p *params) string {
	ord := k.Attrs.Float("ord")
	out := k.Outputs[0]
	a := "abs(" + x + ")"
	switch {
	case math.IsInf(ord, 0):
		op := ">"
		init := "-f_inf()"
		if ord < 0 {
			op, init = "<", "f_inf()"
		}
		return fmt.Sprintf(`	var acc = %s;
	for (var r = 0u; r < R; r++) {
		let v = %s;
		if !is_nan(acc) && (is_nan(v) || v %s acc) { acc = v; }
	}
`, init, a, op) + store(out, "acc")
	case ord == 0:
		return kahanSum("acc", "select(0.0, 1.0, "+x+" != 0.0)") + store(out, "acc")
	case ord == 1:
		return kahanSum("acc", a) + store(out, "acc")
	case ord == 2:
		// Scale by the largest magnitude so squares neither overflow nor
		// underflow in f32.
		return fmt.Sprintf(`	var big = 0.0;
	for (var r = 0u; r < R; r++) { let v = %[1]s; if v > big || is_nan(v) { big = v; } }
	if big == 0.0 || is_inf(big) || is_nan(big) {
		out0[o] = big;
		return;
	}
`, a) + kahanSum("acc", "("+a+" / big) * ("+a+" / big)") + store(out, "big * sqrt(acc)")
	}
	p.setF(0, ord)
	return kahanSum("acc", "f_pow("+a+", pf(0u))") + store(out, "f_pow(acc, 1.0 / pf(0u))")
}

// argExtremeKernel returns the first index of the best value; the first NaN
// wins and ends the search.
func argExtremeKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		in, out := k.Inputs[0], k.Outputs[0]
		axis, flat, err := core.ArgReduceAxis(in.Rank(), k.Attrs)
		if err != nil {
			return err
		}
		axes := []int{axis}
		if flat {
			axes = make([]int, in.Rank())
			for i := range axes {
				axes[i] = i
			}
		}
		t := physical(in.DType())
		nan, stop := "false", ""
		if t == "f32" {
			nan, stop = "is_nan(v)", "if is_nan(best) { break; }"
		}
		body := fmt.Sprintf(`	var best = v0(o, 0u);
	var at = 0u;
	for (var r = 1u; r < R; r++) {
		%[3]s
		let v = v0(o, r);
		if %[1]s || v %[2]s best { best = v; at = r; }
	}
	out0[o] = i32(at);
`, nan, op, stop)
		return gpuOf(k).reduceRun(newFrame(in.Shape(), axes), k.Inputs[:1], out, false, body, nil)
	}
}

func init() {
	register("sum", splittableSum(false, reduceKernel(sumBody)))
	register("mean", splittableSum(true, reduceKernel(meanBody)))
	register("prod", reduceKernel(prodBody))
	register("max", reduceKernel(extremeBody(">")))
	register("min", reduceKernel(extremeBody("<")))
	register("any", reduceKernel(anyAllBody(false)))
	register("all", reduceKernel(anyAllBody(true)))
	register("var", reduceKernel(varBody(false)))
	register("std", reduceKernel(varBody(true)))
	register("logsumexp", reduceKernel(logsumexpBody))
	register("norm", reduceKernel(normBody))
	register("argmax", argExtremeKernel(">"))
	register("cumsum", scanKernel("+"))
	register("cumprod", scanKernel("*"))
	register("_cumprod_grad", cumprodGradKernel)
	register("_prod_grad", prodGradKernel)
	register("_extreme_grad", extremeGradKernel)
	register("_norm_grad", normGradKernel)
	register("argmin", argExtremeKernel("<"))
}
