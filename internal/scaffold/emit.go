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

// infix writes a tree in a target with infix arithmetic: Go, the GPU
// dialect and PyTorch write variables, literals and the four operations
// alike, and a function as a call to the target's name for it (pow with
// its literal exponent), but for the functions a target writes inline.
type infix struct {
	name   func(kind string) string         // the target's function for kind, from functions
	inline map[string]func(a string) string // functions written inline, given their argument's code
}

func (t infix) code(n *node) string {
	switch n.kind {
	case "var":
		return n.name
	case "num":
		return literal(n.val)
	case "neg":
		return "(-" + t.code(n.args[0]) + ")"
	case "+", "-", "*", "/":
		return "(" + t.code(n.args[0]) + " " + n.kind + " " + t.code(n.args[1]) + ")"
	case "pow":
		return t.name("pow") + "(" + t.code(n.args[0]) + ", " + literal(n.val) + ")"
	}
	a := t.code(n.args[0])
	if write, ok := t.inline[n.kind]; ok {
		return write(a)
	}
	return t.name(n.kind) + "(" + a + ")"
}

// square is x² as a product, in every target that has no square function.
func square(a string) string { return "(" + a + " * " + a + ")" }

var (
	// goCode writes the CPU kernel's float64 function; Go's math package
	// has no sigmoid or sign, so those are written out.
	goCode = infix{name: func(k string) string { return functions[k].goFn }, inline: map[string]func(string) string{
		"sigmoid": func(a string) string { return "(1 / (1 + math.Exp(-" + a + ")))" },
		"square":  square,
		"sign":    func(a string) string { return "sign(" + a + ")" },
	}}.code
	gpuCode = infix{name: func(k string) string { return functions[k].gpu }, inline: map[string]func(string) string{
		"square": square,
	}}.code
	torchCode = infix{name: func(k string) string { return functions[k].torch }}.code
)

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
