package webgpu

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// binaryExpr builds an op's WGSL expression from a and b, both already in
// the compute type ct.
type binaryExpr func(a, b, ct string) string

func infix(op string) binaryExpr {
	return func(a, b, _ string) string { return "(" + a + " " + op + " " + b + ")" }
}

var binaryExprs = map[string]binaryExpr{
	"add":   infix("+"),
	"sub":   infix("-"),
	"mul":   infix("*"),
	"div":   infix("/"),
	"atan2": func(a, b, _ string) string { return "m_atan2(" + a + ", " + b + ")" },
	"maximum": func(a, b, ct string) string {
		return fmt.Sprintf("select(%s, %s, %s > %s || %s)", a, b, b, a, isNaN(b, ct))
	},
	"minimum": func(a, b, ct string) string {
		return fmt.Sprintf("select(%s, %s, %s < %s || %s)", a, b, b, a, isNaN(b, ct))
	},
	"pow": func(a, b, ct string) string {
		switch ct {
		case "f32":
			return "f_pow(" + a + ", " + b + ")"
		case "i32":
			return "i_pow(" + a + ", " + b + ")"
		}
		return "bitcast<u32>(i_pow(bitcast<i32>(" + a + "), bitcast<i32>(" + b + ")))"
	},
	"floor_divide": func(a, b, ct string) string {
		switch ct {
		case "f32":
			return "f_floordiv(" + a + ", " + b + ")"
		case "i32":
			return "i_floordiv(" + a + ", " + b + ")"
		}
		return "(" + a + " / " + b + ")"
	},
	"remainder": func(a, b, ct string) string {
		switch ct {
		case "f32":
			return "f_rem(" + a + ", " + b + ")"
		case "i32":
			return "i_rem(" + a + ", " + b + ")"
		}
		return "(" + a + " % " + b + ")"
	},
}

var compareOps = map[string]string{"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

var logicalOps = map[string]string{"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}

func binaryKernel(op string, expr binaryExpr) core.Kernel {
	return func(k *core.KernelCall) error {
		a, b, out := k.Inputs[0], k.Inputs[1], k.Outputs[0]
		ct := physical(out.DType())
		if ct != "f32" && (op == "floor_divide" || op == "remainder") {
			if err := validate(op, func() error { return checkNonzeroDivisor(b) }); err != nil {
				return err
			}
		}
		ta, tb := physical(a.DType()), physical(b.DType())
		e := expr(conv("x0", ta, ct), conv("x1", tb, ct), ct)
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
		ct := ta
		if ta != tb {
			ct = "f32"
		}
		e := boolOf(conv("x0", ta, ct) + " " + op + " " + conv("x1", tb, ct))
		return gpuOf(k).mapRun(k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

func logicalKernel(op string) core.Kernel {
	return func(k *core.KernelCall) error {
		ta, tb := physical(k.Inputs[0].DType()), physical(k.Inputs[1].DType())
		e := boolOf(truthy("x0", ta) + " " + op + " " + truthy("x1", tb))
		return gpuOf(k).mapRun(k.Inputs[:2], k.Outputs[0], e, nil)
	}
}

// whereKernel picks a where cond is true, else b.
func whereKernel(k *core.KernelCall) error {
	out := k.Outputs[0]
	ct := physical(out.DType())
	ta, tb := physical(k.Inputs[1].DType()), physical(k.Inputs[2].DType())
	e := fmt.Sprintf("select(%s, %s, x0 != 0u)", conv("x2", tb, ct), conv("x1", ta, ct))
	return gpuOf(k).mapRun(k.Inputs[:3], out, e, nil)
}

func init() {
	for op, e := range binaryExprs {
		register(op, binaryKernel(op, e))
	}
	for op, sym := range compareOps {
		register(op, compareKernel(sym))
	}
	for op, sym := range logicalOps {
		register(op, logicalKernel(sym))
	}
	register("where", whereKernel)
}
