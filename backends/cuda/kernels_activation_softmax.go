//go:build linux && cgo

package cuda

import (
	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/oprules"
)

// Softmax and log_softmax, forward and backward, as row programs
// (rows.go): the row's maximum, then the f64 sum of the exps, as the CPU
// does.

func softmaxFrame(k *core.KernelCall) (lower.Frame, error) {
	x := k.Inputs[0]
	axis, err := oprules.SoftmaxAxis(x.Shape(), k.Attrs)
	if err != nil {
		return lower.Frame{}, err
	}
	if x.Rank() == 0 {
		return lower.NewFrame(x.Shape(), nil), nil
	}
	return lower.NewFrame(x.Shape(), []int{axis}), nil
}

func softmaxKernel(op string, logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		f, err := softmaxFrame(k)
		if err != nil {
			return err
		}
		ct := computeType(k.Inputs[0].DType())
		// The CPU's passes: the row's maximum (a NaN wins), the f64 sum of
		// exp(x - max), then exp(x - max) / sum. A cached row takes each
		// exp once (the derived e), where an online max-and-sum took two
		// per member and a third to write (0.65x PyTorch on an H200).
		passes := []rowPass{
			{stats: []rowStat{{name: "mx", acc: "ExtAcc<" + ct + ", true>", value: "x0"}}},
			{stats: []rowStat{{name: "st", acc: "SumAcc<f64>", value: "(f64)e"}}},
		}
		write := "e * inv"
		if logOut {
			passes[1].then = "const f64 shift = (f64)mx.m + log(st.s);"
			write = "(" + ct + ")((f64)x0 - shift)"
		} else {
			passes[1].then = "const " + ct + " inv = (" + ct + ")(1.0 / st.s);"
		}
		return cudaOf(k).rows(rowProgram{op: op, frame: f, ins: k.Inputs[:1], outs: k.Outputs, passes: passes,
			derived: &rowDerived{name: "e", value: "w_exp(x0 - mx.m)", after: 0}, writes: []string{write}})
	}
}

// softmaxBackwardKernel: y*(g - sum(g*y)) for softmax, g - exp(y)*sum(g)
// for log_softmax, from the forward output y (x0) and upstream g (x1).
func softmaxBackwardKernel(op string, logOut bool) core.Kernel {
	return func(k *core.KernelCall) error {
		f, err := softmaxFrame(k)
		if err != nil {
			return err
		}
		value, write := "(f64)x1 * (f64)x0", "x0 * (x1 - st.s)"
		if logOut {
			value, write = "(f64)x1", "x1 - w_exp(x0) * st.s"
		}
		return cudaOf(k).rows(rowProgram{op: op, frame: f, ins: k.Inputs[:2], outs: k.Outputs,
			passes: []rowPass{{stats: []rowStat{{name: "st", acc: "SumAcc<f64>", value: value}}}}, writes: []string{write}})
	}
}

func init() {
	register("softmax", softmaxKernel("softmax", false))
	register("log_softmax", softmaxKernel("log_softmax", true))
	register("_softmax_backward", softmaxBackwardKernel("_softmax_backward", false))
	register("_log_softmax_backward", softmaxBackwardKernel("_log_softmax_backward", true))
}
