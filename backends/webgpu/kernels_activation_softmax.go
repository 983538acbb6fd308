package webgpu

import (
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Softmax and log_softmax run one thread per row (a frame group), reading
// the row up to three times (wgsl/activation_softmax.wgsl); rows too long for
// one thread on a device with a loop limit take softmaxLong's path
// (launch_rows_long.go).

func softmaxFrame(k *core.KernelCall) (frame, error) {
	x := k.Inputs[0]
	axis, err := oprules.SoftmaxAxis(x.Shape(), k.Attrs)
	if err != nil {
		return frame{}, err
	}
	return lineFrame(x, axis), nil
}

// rowMax is WGSL for the row maximum of v0 into m, NaN winning.
const rowMax = `	var m = v0(o, 0u);
	for (var r = 1u; r < R; r++) { let v = v0(o, r); if v > m || is_nan(v) { m = v; } }
`

func softmaxKernel(logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		f, err := softmaxFrame(k)
		if err != nil {
			return err
		}
		out := k.Outputs[0]
		body := rowMax + kahanSum("s", "m_exp(v0(o, r) - m)")
		if logOut {
			body += "\tlet shift = m + m_log(s);\n\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(out.DType(), "v0(o, r) - shift") + "; }\n"
		} else {
			body += "\tlet inv = 1.0 / s;\n\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(out.DType(), "m_exp(v0(o, r) - m) * inv") + "; }\n"
		}
		if !gpuOf(k).frameFits(body, f) {
			return gpuOf(k).softmaxLong(f, k.Inputs[0], out, logOut, false)
		}
		return gpuOf(k).reduceRun(f, k.Inputs[:1], out, false, body, nil)
	}
}

// softmaxBackwardKernel: y*(g - sum(g*y)) for softmax, g - exp(y)*sum(g)
// for log_softmax, from the forward output y.
func softmaxBackwardKernel(logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		f, err := softmaxFrame(k)
		if err != nil {
			return err
		}
		out := k.Outputs[0]
		var body string
		if logOut {
			body = kahanSum("s", "v1(o, r)") + "\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(out.DType(), "v1(o, r) - m_exp(v0(o, r)) * s") + "; }\n"
		} else {
			body = kahanSum("s", "v1(o, r) * v0(o, r)") + "\tfor (var r = 0u; r < R; r++) { out0[oat(o, r)] = " + storeExpr(out.DType(), "v0(o, r) * (v1(o, r) - s)") + "; }\n"
		}
		if !gpuOf(k).frameFits(body, f) {
			return gpuOf(k).softmaxBackwardLong(f, k.Inputs[0], k.Inputs[1], out, logOut)
		}
		return gpuOf(k).reduceRun(f, k.Inputs[:2], out, false, body, nil)
	}
}

// softmaxLong is softmaxKernel over rows too long for one thread: the row
// maximum and the sum of exponentials are reductions. With safe, a row
// whose maximum is -inf (every key masked, in attention) gives zeros, as
// torch's safe softmax does, where softmax gives NaN.
func (b *Backend) softmaxLong(f frame, x, out *core.Tensor, logOut, safe bool) error {
	m, err := core.Empty(b, statShape(f), core.F32)
	if err != nil {
		return err
	}
	defer m.Release()
	if err := b.runReducer("max", f, []*core.Tensor{x}, m, extremeReducer(">", "f32", core.F32), []string{inputF32(x)}); err != nil {
		return err
	}
	s, err := b.groupReduce(f, []*core.Tensor{x, m}, "m_exp("+inputF32(x)+" - v1(o, r))", sumFinal(false))
	if err != nil {
		return err
	}
	defer s.Release()
	x0 := lower.Conv("x0", physical(x.DType()), "f32")
	y := "m_exp(" + x0 + " - x1) / x2"
	if safe {
		y = "select(" + y + ", 0.0, x1 == -f_inf())"
	}
	if logOut {
		y = x0 + " - (x1 + m_log(x2))"
	}
	return b.mapRun([]*core.Tensor{x, m, s}, out, y, nil)
}

// softmaxBackwardLong is softmaxBackwardKernel over long rows: y*(g -
// sum(g*y)), or g - exp(y)*sum(g) for log_softmax.
func (b *Backend) softmaxBackwardLong(f frame, y, g, out *core.Tensor, logOut bool) error {
	yf, gf := lower.Conv("v0(o, r)", physical(y.DType()), "f32"), lower.Conv("v1(o, r)", physical(g.DType()), "f32")
	term, dx := gf+" * "+yf, "x0 * (x1 - x2)"
	if logOut {
		term, dx = gf, "x1 - m_exp(x0) * x2"
	}
	s, err := b.groupReduce(f, []*core.Tensor{y, g}, term, sumFinal(false))
	if err != nil {
		return err
	}
	defer s.Release()
	dx = strings.NewReplacer("x0", lower.Conv("x0", physical(y.DType()), "f32"), "x1", lower.Conv("x1", physical(g.DType()), "f32")).Replace(dx)
	return b.mapRun([]*core.Tensor{y, g, s}, out, dx, nil)
}

func init() {
	register("softmax", softmaxKernel(false))
	register("log_softmax", softmaxKernel(true))
	register("_softmax_backward", softmaxBackwardKernel(false))
	register("_log_softmax_backward", softmaxBackwardKernel(true))
}
