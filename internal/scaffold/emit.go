package scaffold

import (
	"strconv"
	"strings"
)

// Each emitter writes the tree in one target: Go float64 math (the CPU
// kernel's function), the GPU dialect (WGSL syntax with wgsl/common.wgsl's
// helpers, which CUDA translates), PyTorch (the reference) and Go code
// calling registry ops (the backward rule).

// literal is v as the shortest float literal with a decimal point.
func literal(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // n: NaN, Inf
		s += ".0"
	}
	return s
}

func goCode(n *node) string {
	switch n.kind {
	case "var":
		return n.name
	case "num":
		return literal(n.val)
	case "neg":
		return "(-" + goCode(n.args[0]) + ")"
	case "+", "-", "*", "/":
		return "(" + goCode(n.args[0]) + " " + n.kind + " " + goCode(n.args[1]) + ")"
	case "sigmoid":
		return "(1 / (1 + math.Exp(-" + goCode(n.args[0]) + ")))"
	case "square":
		a := goCode(n.args[0])
		return "(" + a + " * " + a + ")"
	case "sign":
		return "sign(" + goCode(n.args[0]) + ")"
	case "pow":
		return "math.Pow(" + goCode(n.args[0]) + ", " + literal(n.val) + ")"
	}
	return functions[n.kind].goFn + "(" + goCode(n.args[0]) + ")"
}

func gpuCode(n *node) string {
	switch n.kind {
	case "var":
		return n.name
	case "num":
		return literal(n.val)
	case "neg":
		return "(-" + gpuCode(n.args[0]) + ")"
	case "+", "-", "*", "/":
		return "(" + gpuCode(n.args[0]) + " " + n.kind + " " + gpuCode(n.args[1]) + ")"
	case "square":
		a := gpuCode(n.args[0])
		return "(" + a + " * " + a + ")"
	case "pow":
		return "f_pow(" + gpuCode(n.args[0]) + ", " + literal(n.val) + ")"
	}
	return functions[n.kind].gpu + "(" + gpuCode(n.args[0]) + ")"
}

func torchCode(n *node) string {
	switch n.kind {
	case "var":
		return n.name
	case "num":
		return literal(n.val)
	case "neg":
		return "(-" + torchCode(n.args[0]) + ")"
	case "+", "-", "*", "/":
		return "(" + torchCode(n.args[0]) + " " + n.kind + " " + torchCode(n.args[1]) + ")"
	case "pow":
		return "torch.pow(" + torchCode(n.args[0]) + ", " + literal(n.val) + ")"
	}
	return functions[n.kind].torch + "(" + torchCode(n.args[0]) + ")"
}

// opsCode builds n from tensors x (and y) with registry ops; like is the
// tensor whose dtype and device constants take.
func opsCode(n *node, like string) string {
	switch n.kind {
	case "var":
		return n.name
	case "num":
		return "ewConst(" + like + ", " + literal(n.val) + ")"
	case "neg":
		return `ew("neg", ` + opsCode(n.args[0], like) + ")"
	case "+", "-", "*", "/":
		op := map[string]string{"+": "add", "-": "sub", "*": "mul", "/": "div"}[n.kind]
		return `ew("` + op + `", ` + opsCode(n.args[0], like) + ", " + opsCode(n.args[1], like) + ")"
	case "pow":
		return `ew("pow", ` + opsCode(n.args[0], like) + ", ewConst(" + like + ", " + literal(n.val) + "))"
	}
	return `ew("` + functions[n.kind].op + `", ` + opsCode(n.args[0], like) + ")"
}

// uses reports whether the tree calls one of names.
func uses(n *node, names ...string) bool {
	for _, name := range names {
		if n.kind == name {
			return true
		}
	}
	for _, a := range n.args {
		if uses(a, names...) {
			return true
		}
	}
	return false
}
