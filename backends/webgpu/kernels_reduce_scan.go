package webgpu

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Scans and the reduction gradients that need a whole group at once. Each
// thread owns one line (scans) or one element (gradients), so the results
// are deterministic.

func scanFrame(k *core.KernelCall) (frame, error) {
	x := k.Inputs[0]
	axis, err := oprules.ScanAxis(x.Rank(), k.Attrs)
	if err != nil {
		return frame{}, err
	}
	return lineFrame(x, axis), nil
}

// lineFrame is the frame whose groups are x's lines along axis (softmax's
// rows, a scan's lines); a scalar is one group of one.
func lineFrame(x *core.Tensor, axis int) frame {
	if x.Rank() == 0 {
		return newFrame(x.Shape(), nil)
	}
	return newFrame(x.Shape(), []int{axis})
}

// scanKernel is a running sum ("+") or product ("*") along the axis, one
// thread per line.
func scanKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		f, err := scanFrame(k)
		if err != nil {
			return err
		}
		out := k.Outputs[0]
		if out.DType() == core.I64 {
			return gpuOf(k).scanI64(k.Op.Name, op, f, k.Inputs[0], out)
		}
		ct := physical(out.DType())
		init := lower.Zero(ct)
		if op == "*" {
			init = map[string]string{"f32": "1.0", "i32": "1", "u32": "1u"}[ct]
		}
		return gpuOf(k).scanRun(f, op, init, ct, k.Inputs[0], out)
	}
}

// scanRun writes the running op ("+" or "*", from init, in compute type
// ct) of in along f's reduced dim into out: one thread per line, or where
// a line is longer than the device's loop limit lets a thread walk, in
// parts (scanParts).
func (b *Backend) scanRun(f frame, op, init, ct string, in, out *core.Tensor) error {
	x := lower.Conv("v0(o, r)", physical(in.DType()), ct)
	if !b.loopsFit(f.Members() + 16) {
		return b.scanParts(f, op, init, ct, x, in, out)
	}
	body := fmt.Sprintf("\tvar acc = %s;\n\tfor (var r = 0u; r < R; r++) {\n\t\tacc = acc %s %s;\n\t\tout0[oat(o, r)] = %s;\n\t}\n",
		init, op, x, storeExpr(out.DType(), "acc"))
	return b.reduceRun(f, []*core.Tensor{in}, out, false, body, nil)
}

// scanI64 is an integer running sum or product into i64, which the GPU
// holds in i32: a sum runs exact in two words and a product tracks
// overflow, and an element outside i32 fails the op (it wrapped).
func (b *Backend) scanI64(name, op string, f frame, in, out *core.Tensor) error {
	x := "v0(o, r)"
	if physical(in.DType()) == "u32" {
		x = "bitcast<i32>(v0(o, r))" // a u32 past i32 shows as negative: caught below
	}
	var body string
	if op == "+" {
		hi := "select(0, -1, a < 0)"
		if physical(in.DType()) == "u32" {
			x, hi = "v0(o, r)", "0"
		}
		if !b.loopsFit(f.Members() + 16) {
			return b.scanI64Parts(name, f, in, out, x, hi)
		}
		body = fmt.Sprintf(`	var lo = 0u;
	var hi = 0;
	for (var r = 0u; r < R; r++) {
		let a = %s;
		let s = lo + bitcast<u32>(a);
		hi = hi + %s + select(0, 1, s < lo);
		lo = s;
		let v = bitcast<i32>(lo);
		if hi != select(0, -1, v < 0) { fail(); }
		out0[oat(o, r)] = v;
	}
`, x, hi)
	} else {
		big := "false"
		if physical(in.DType()) == "u32" {
			big = "v0(o, r) > 0x7fffffffu"
		}
		body = fmt.Sprintf(`	var v = 1;
	var zero = false;
	for (var r = 0u; r < R; r++) {
		let a = %s;
		if a == 0 { zero = true; }
		if !zero && (%s || i_mul_ovf(v, a)) { fail(); }
		v = v * a;
		out0[oat(o, r)] = v;
	}
`, x, big)
	}
	flag, err := b.newFlag()
	if err != nil {
		return err
	}
	if err := b.launchReduce(f, []*core.Tensor{in}, out, body, nil, f.Groups(), mapWG, reduceMode{flag: flag}); err != nil {
		flag.Release()
		return err
	}
	return b.checkFlag(name, flag, errI64Range)
}

// cumprodGradKernel: grad_i = P_{i-1} * S_i, P the running product before
// i and S_i = g_i + x_{i+1} S_{i+1}; no division, so zeros are exact.
func cumprodGradKernel(k *core.KernelCall) error {
	f, err := scanFrame(k)
	if err != nil {
		return err
	}
	body := `	var s = 0.0;
	for (var j = R; j > 0u; j--) {
		let r = j - 1u;
		if r == R - 1u { s = v1(o, r); } else { s = v1(o, r) + v0(o, r + 1u) * s; }
		out0[oat(o, r)] = s;
	}
	var p = 1.0;
	for (var r = 0u; r < R; r++) {
		let i = oat(o, r);
		out0[i] = ` + storeExpr(k.Outputs[0].DType(), "out0[i] * p") + `;
		p *= v0(o, r);
	}
`
	return gpuOf(k).reduceRun(f, k.Inputs[:2], k.Outputs[0], false, body, nil)
}

// prodGradKernel gives each element the product of the other members of
// its group (prefix times suffix, so zeros are exact).
func prodGradKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f := newFrame(x.Shape(), oprules.ReducedAxes(x.Rank(), k.Attrs))
	body := `	var p = 1.0;
	for (var j = 0u; j < R; j++) {
		if j != r { p *= v0(o, j); }
	}
	out0[oat(o, r)] = ` + storeExpr(k.Outputs[0].DType(), "p") + ";\n"
	return gpuOf(k).reduceRun(f, k.Inputs[:1], k.Outputs[0], true, body, nil)
}

// extremeGradKernel shares 1 evenly among the members equal to the reduced
// value v (broadcast over the group).
func extremeGradKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f := newFrame(x.Shape(), oprules.ReducedAxes(x.Rank(), k.Attrs))
	body := `	let want = v1(o, r);
	var res = 0.0;
	if v0(o, r) == want {
		var n = 0.0;
		for (var j = 0u; j < R; j++) { if v0(o, j) == want { n += 1.0; } }
		res = 1.0 / n;
	}
	out0[oat(o, r)] = ` + storeExpr(k.Outputs[0].DType(), "res") + ";\n"
	if g := gpuOf(k); !g.frameFits(body, f) {
		// Each member counts its group's ties: past the loop limit the
		// count is a reduction and the shares a map.
		n, err := g.groupReduce(f, k.Inputs[:2], "select(0.0, 1.0, v0(o, r) == v1(o, r))", sumFinal(false))
		if err != nil {
			return err
		}
		defer n.Release()
		return g.mapRun([]*core.Tensor{k.Inputs[0], k.Inputs[1], n}, k.Outputs[0], "select(0.0, 1.0 / x2, x0 == x1)", nil)
	}
	return gpuOf(k).reduceRun(f, k.Inputs[:2], k.Outputs[0], true, body, nil)
}

// normGradKernel is PyTorch's vector-norm backward (see the CPU kernel):
// inputs x, the norm n and the upstream gradient g, both broadcast.
func normGradKernel(k *core.KernelCall) error {
	x := k.Inputs[0]
	f := newFrame(x.Shape(), oprules.ReducedAxes(x.Rank(), k.Attrs))
	ord := k.Attrs.Float("ord")
	var res string
	var prm params
	switch {
	case ord == 0:
		res = "0.0"
	case ord == 1:
		res = "m_sgn(x) * g"
	case ord == 2:
		res = "select(x * (g / n), 0.0, n == 0.0)"
	case math.IsInf(ord, 0):
		res = `select(0.0, m_sgn(x) * g / ties, m_is_top(x, n))`
	default:
		prm.setF(0, ord)
		res = "select(select(0.0, m_sgn(x) * f_pow(abs(x), pf(0u) - 1.0), x != 0.0 || pf(0u) >= 1.0) * (g / f_pow(n, pf(0u) - 1.0)), 0.0, pf(0u) > 1.0 && n == 0.0)"
	}
	body := `	let x = v0(o, r);
	let n = v1(o, r);
	let g = v2(o, r);
	var ties = 0.0;
	` + map[bool]string{true: "for (var j = 0u; j < R; j++) { if m_is_top(v0(o, j), n) { ties += 1.0; } }", false: ""}[math.IsInf(ord, 0)] + `
	out0[oat(o, r)] = ` + storeExpr(k.Outputs[0].DType(), res) + ";\n"
	if g := gpuOf(k); math.IsInf(ord, 0) && !g.frameFits(body, f) {
		// The ties of the max-norm are counted by a reduction instead.
		ties, err := g.groupReduce(f, k.Inputs[:2], "select(0.0, 1.0, m_is_top(v0(o, r), v1(o, r)))", sumFinal(false))
		if err != nil {
			return err
		}
		defer ties.Release()
		return g.mapRun([]*core.Tensor{k.Inputs[0], k.Inputs[1], k.Inputs[2], ties}, k.Outputs[0],
			"select(0.0, m_sgn(x0) * x2 / x3, m_is_top(x0, x1))", nil)
	}
	return gpuOf(k).reduceRun(f, k.Inputs[:3], k.Outputs[0], true, body, func(p *params) { *p = prm })
}
