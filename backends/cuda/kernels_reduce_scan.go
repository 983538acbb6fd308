//go:build linux && cgo

package cuda

import (
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Scans and the reductions' sequential gradients as group loops (group.go),
// each the CPU's loop over a line (backends/cpu/kernels_reduce_more.go).

func scanFrame(x *core.Tensor, a core.Attrs) (lower.Frame, error) {
	axis, err := oprules.ScanAxis(x.Rank(), a)
	if err != nil {
		return lower.Frame{}, err
	}
	if x.Rank() == 0 {
		return lower.NewFrame(x.Shape(), nil), nil
	}
	return lower.NewFrame(x.Shape(), []int{axis}), nil
}

// cumulativeKernel runs acc = acc OP x along the axis, in f64 for floats
// and i64 for integers and bools, writing each running value.
func cumulativeKernel(op, identity, combine string) core.Kernel {
	return func(k *core.KernelCall) error {
		x, out := k.Inputs[0], k.Outputs[0]
		f, err := scanFrame(x, k.Attrs)
		if err != nil {
			return err
		}
		acc := "i64"
		if out.DType().IsFloat() {
			acc = "f64"
		}
		body := acc + " acc = " + identity + ";\nfor (idx r = 0; r < R; r++) {\nacc = acc " + combine + " (" + acc + ")X0(r);\nW1(r, acc);\n}\n"
		return cudaOf(k).group(groupLoop{op: op, frame: f, ins: k.Inputs[:1], outs: k.Outputs, body: body})
	}
}

// cumprodGradKernel: grad_i = P_{i-1} * S_i with P the running product
// before i and S_i = g_i + x_{i+1} S_{i+1}: no division, so zeros in x
// are exact.
func cumprodGradKernel(k *core.KernelCall) error {
	f, err := scanFrame(k.Inputs[0], k.Attrs)
	if err != nil {
		return err
	}
	const body = `f64 s = 0;
for (idx j = R - 1; j >= 0; j--) {
	s = j == R - 1 ? (f64)X1(j) : (f64)X1(j) + (f64)X0(j + 1) * s;
	W2(j, s);
}
f64 p = 1;
for (idx j = 0; j < R; j++) {
	W2(j, (f64)X2r(j) * p);
	p *= (f64)X0(j);
}
`
	// The second loop rereads what the first wrote: W2's storage read back
	// through an accessor over the same operand.
	return cudaOf(k).group(groupLoop{op: "_cumprod_grad", frame: f, ins: k.Inputs[:2], outs: k.Outputs,
		body: "auto X2r = [&](idx r) -> f64 { return (f64)ld(in2[ro2(r)]); };\n" + body})
}

// prodGradKernel is the product of a group's other members, from prefix
// and suffix products (exact with zeros).
func prodGradKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f := lower.NewFrame(x.Shape(), oprules.ReducedAxes(x.Rank(), k.Attrs))
	const body = `f64 prefix = 1;
for (idx r = 0; r < R; r++) { W1(r, prefix); prefix *= (f64)X0(r); }
f64 suffix = 1;
for (idx r = R - 1; r >= 0; r--) { W1(r, (f64)ld(in1[ro1(r)]) * suffix); suffix *= (f64)X0(r); }
`
	return cudaOf(k).group(groupLoop{op: "_prod_grad", frame: f, ins: k.Inputs[:1], outs: k.Outputs, body: body})
}

// extremeGradKernel shares 1 evenly among the members equal to the reduced
// value of their group (x1, broadcast over it).
func extremeGradKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f := lower.NewFrame(x.Shape(), oprules.ReducedAxes(x.Rank(), k.Attrs))
	const body = `f64 count = 0;
for (idx r = 0; r < R; r++) if ((f64)X0(r) == (f64)X1(r)) count += 1;
for (idx r = 0; r < R; r++) W2(r, (f64)X0(r) == (f64)X1(r) ? 1.0 / count : 0.0);
`
	return cudaOf(k).group(groupLoop{op: "_extreme_grad", frame: f, ins: k.Inputs[:2], outs: k.Outputs, body: body})
}

// normGradKernel is PyTorch's linalg_vector_norm_backward, as the CPU's:
// sgn(x) g for ord 1; x g / n (0 where n is 0) for ord 2; for ±inf the
// gradient shared among the members whose |x| is the norm; otherwise
// sgn(x) |x|^(p-1) g / n^(p-1). x0 is x, x1 the norm and x2 the upstream
// gradient, both broadcast over the group.
func normGradKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f := lower.NewFrame(x.Shape(), oprules.ReducedAxes(x.Rank(), k.Attrs))
	ord := k.Attrs.Float("ord")
	var sc lower.Scalars
	sc.SetF(0, ord)
	const sgn = "auto sgn = [](f64 v) -> f64 { return v > 0 ? 1.0 : v < 0 ? -1.0 : v == 0 ? 0.0 : v; };\n"
	var body string
	switch {
	case ord == 0:
		body = "for (idx r = 0; r < R; r++) W3(r, 0.0);\n"
	case ord == 1:
		body = sgn + "for (idx r = 0; r < R; r++) W3(r, sgn((f64)X0(r)) * (f64)X2(r));\n"
	case ord == 2:
		body = `for (idx r = 0; r < R; r++) {
	const f64 n = X1(r);
	W3(r, n != 0 ? (f64)X0(r) * ((f64)X2(r) / n) : 0.0);
}
`
	case math.IsInf(ord, 0):
		body = sgn + `auto top = [&](idx r) { const f64 v = X0(r), n = X1(r); return fabs(v) == n || (v != v && n != n); };
f64 count = 0;
for (idx r = 0; r < R; r++) if (top(r)) count += 1;
for (idx r = 0; r < R; r++) W3(r, top(r) ? sgn((f64)X0(r)) * (f64)X2(r) / count : 0.0);
`
	default:
		body = sgn + `const f64 p = pf(0);
for (idx r = 0; r < R; r++) {
	const f64 v = X0(r), n = X1(r);
	const f64 scaled = (v != 0 || p >= 1) ? sgn(v) * pow(fabs(v), p - 1) : 0.0;
	const f64 scale = (p > 1 && n == 0) ? 0.0 : (f64)X2(r) / pow(n, p - 1);
	W3(r, scaled * scale);
}
`
	}
	return cudaOf(k).group(groupLoop{op: "_norm_grad", frame: f, ins: k.Inputs[:3], outs: k.Outputs, body: body, sc: &sc})
}

func init() {
	register("cumsum", cumulativeKernel("cumsum", "0", "+"))
	register("cumprod", cumulativeKernel("cumprod", "1", "*"))
	register("_cumprod_grad", cumprodGradKernel)
	register("_prod_grad", prodGradKernel)
	register("_extreme_grad", extremeGradKernel)
	register("_norm_grad", normGradKernel)
}
