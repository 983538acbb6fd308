package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

func binaryKernel(op string, expr lower.BinaryExpr) core.Kernel {
	return func(k *core.KernelCall) error {
		a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		ct := physical(out.DType())
		if ct != "f32" && (op == "floor_divide" || op == "remainder") {
			if err := validate(op, func() error { return checkNonzeroDivisor(b) }); err != nil {
				return err
			}
		}
		ta, tb := physical(a.DType()), physical(b.DType())
		e := expr(lower.Conv("x0", ta, ct), lower.Conv("x1", tb, ct), ct)
		return gpuOf(k).mapRun(k.Inputs[:2], out, e, nil)
	}
}

// checkNonzeroDivisor refuses integer division by zero, as the CPU backend
// and PyTorch do. It reads the divisor back: integer floor division is rare
// enough that the sync costs less than a wrong answer.
func checkNonzeroDivisor(b *core.Tensor) error {
	vals, err := b.Float64s()
	if err != nil {
		return err
	}
	for _, v := range vals {
		if v == 0 {
			return fmt.Errorf("integer division by zero")
		}
	}
	return nil
}

func compareKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := physical(k.Inputs[0].DType()), physical(k.Inputs[1].DType())
		ct := lower.CompareType(ta, tb)
		e := lower.BoolOf(lower.Conv("x0", ta, ct) + " " + op + " " + lower.Conv("x1", tb, ct))
		return gpuOf(k).mapRun(k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func logicalKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := physical(k.Inputs[0].DType()), physical(k.Inputs[1].DType())
		e := lower.BoolOf(lower.Truthy("x0", ta) + " " + op + " " + lower.Truthy("x1", tb))
		return gpuOf(k).mapRun(k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

// whereKernel picks a where cond is true, else b.
func whereKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	ct := physical(out.DType())
	ta, tb := physical(k.Inputs[1].DType()), physical(k.Inputs[2].DType())
	e := lower.Where("x0", "x1", ta, "x2", tb, ct)
	return gpuOf(k).mapRun(k.Inputs[:3], out, e, nil)
}

func init() {
	for op, e := range lower.Binary {
		register(op, binaryKernel(op, e))
	}
	for op, sym := range lower.Compare {
		register(op, compareKernel(sym))
	}
	for op, sym := range lower.Logical {
		register(op, logicalKernel(sym))
	}
	register("where", whereKernel)
}
