package scaffold

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// node is a formula's tree: a variable (x, y), a number, an operator
// (+ - * / and unary -) or a function of one argument (pow's exponent is
// a number, in val).
type node struct {
	kind string // "var", "num", "+", "-", "*", "/", "neg", or a function name
	name string // the variable
	val  float64
	args []*node
}

// functions are the ones a formula may call, with what each is in Go,
// in the GPU dialect, in PyTorch and as a registry op.
var functions = map[string]struct{ goFn, gpu, torch, op string }{
	"exp":     {"math.Exp", "m_exp", "torch.exp", "exp"},
	"expm1":   {"math.Expm1", "m_expm1", "torch.expm1", "expm1"},
	"log":     {"math.Log", "m_log", "torch.log", "log"},
	"log1p":   {"math.Log1p", "m_log1p", "torch.log1p", "log1p"},
	"sqrt":    {"math.Sqrt", "m_sqrt", "torch.sqrt", "sqrt"},
	"tanh":    {"math.Tanh", "m_tanh", "torch.tanh", "tanh"},
	"sin":     {"math.Sin", "m_sin", "torch.sin", "sin"},
	"cos":     {"math.Cos", "m_cos", "torch.cos", "cos"},
	"abs":     {"math.Abs", "abs", "torch.abs", "abs"},
	"erf":     {"math.Erf", "m_erf", "torch.erf", "erf"},
	"sigmoid": {"", "m_sigmoid", "torch.sigmoid", "sigmoid"},
	"square":  {"", "", "torch.square", "square"},
	"sign":    {"", "m_sgn", "torch.sign", "sign"},
	"pow":     {"math.Pow", "f_pow", "torch.pow", "pow"},
}

// Functions lists the names a formula may call.
func Functions() []string {
	var out []string
	for f := range functions {
		if f != "sign" { // only derivatives make it (abs')
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// parse reads a formula over x (and y); it reports which variables it uses.
func parse(src string) (*node, map[string]bool, error) {
	expr, err := parser.ParseExpr(src)
	if err != nil {
		return nil, nil, fmt.Errorf("formula %q: %v (write Go syntax: x * sigmoid(1.702 * x))", src, err)
	}
	vars := map[string]bool{}
	n, err := convert(expr, vars)
	if err != nil {
		return nil, nil, fmt.Errorf("formula %q: %v", src, err)
	}
	if !vars["x"] {
		return nil, nil, fmt.Errorf("formula %q does not use x, the op's input", src)
	}
	return n, vars, nil
}

func convert(e ast.Expr, vars map[string]bool) (*node, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return convert(e.X, vars)
	case *ast.Ident:
		if e.Name != "x" && e.Name != "y" {
			return nil, fmt.Errorf("unknown name %q: the inputs are x and y", e.Name)
		}
		vars[e.Name] = true
		return &node{kind: "var", name: e.Name}, nil
	case *ast.BasicLit:
		if e.Kind != token.INT && e.Kind != token.FLOAT {
			return nil, fmt.Errorf("%s is not a number", e.Value)
		}
		v, err := strconv.ParseFloat(e.Value, 64)
		if err != nil {
			return nil, err
		}
		return &node{kind: "num", val: v}, nil
	case *ast.UnaryExpr:
		a, err := convert(e.X, vars)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case token.SUB:
			return &node{kind: "neg", args: []*node{a}}, nil
		case token.ADD:
			return a, nil
		}
		return nil, fmt.Errorf("operator %s is not supported (use + - * /)", e.Op)
	case *ast.BinaryExpr:
		op := e.Op.String()
		if !strings.Contains("+-*/", op) || len(op) != 1 {
			return nil, fmt.Errorf("operator %s is not supported (use + - * /)", op)
		}
		a, err := convert(e.X, vars)
		if err != nil {
			return nil, err
		}
		b, err := convert(e.Y, vars)
		if err != nil {
			return nil, err
		}
		return &node{kind: op, args: []*node{a, b}}, nil
	case *ast.CallExpr:
		id, ok := e.Fun.(*ast.Ident)
		if !ok {
			return nil, fmt.Errorf("only plain function calls, one of %s", strings.Join(Functions(), ", "))
		}
		if _, known := functions[id.Name]; !known || id.Name == "sign" {
			return nil, fmt.Errorf("unknown function %s: use one of %s", id.Name, strings.Join(Functions(), ", "))
		}
		want := 1
		if id.Name == "pow" {
			want = 2
		}
		if len(e.Args) != want {
			return nil, fmt.Errorf("%s takes %d argument(s), got %d", id.Name, want, len(e.Args))
		}
		a, err := convert(e.Args[0], vars)
		if err != nil {
			return nil, err
		}
		n := &node{kind: id.Name, args: []*node{a}}
		if id.Name == "pow" {
			c, err := convert(e.Args[1], vars)
			if err != nil {
				return nil, err
			}
			if c.kind != "num" {
				return nil, fmt.Errorf("pow's exponent must be a number (differentiating x^y in y is not supported)")
			}
			n.val = c.val
		}
		return n, nil
	}
	return nil, fmt.Errorf("%T is not supported: use numbers, x, y, + - * / and functions", e)
}

func num(v float64) *node { return &node{kind: "num", val: v} }

func fn(name string, a *node) *node { return &node{kind: name, args: []*node{a}} }

// The smart constructors fold constants and drop 0 and 1 terms, so the
// derivative's code reads like what a person would write.
func add(a, b *node) *node {
	switch {
	case isNum(a, 0):
		return b
	case isNum(b, 0):
		return a
	case a.kind == "num" && b.kind == "num":
		return num(a.val + b.val)
	}
	return &node{kind: "+", args: []*node{a, b}}
}

func sub(a, b *node) *node {
	switch {
	case isNum(b, 0):
		return a
	case isNum(a, 0):
		return neg(b)
	case a.kind == "num" && b.kind == "num":
		return num(a.val - b.val)
	}
	return &node{kind: "-", args: []*node{a, b}}
}

func mul(a, b *node) *node {
	switch {
	case isNum(a, 0) || isNum(b, 0):
		return num(0)
	case isNum(a, 1):
		return b
	case isNum(b, 1):
		return a
	case a.kind == "num" && b.kind == "num":
		return num(a.val * b.val)
	}
	return &node{kind: "*", args: []*node{a, b}}
}

func div(a, b *node) *node {
	switch {
	case isNum(a, 0):
		return num(0)
	case isNum(b, 1):
		return a
	}
	return &node{kind: "/", args: []*node{a, b}}
}

func neg(a *node) *node {
	if a.kind == "num" {
		return num(-a.val)
	}
	if a.kind == "neg" {
		return a.args[0]
	}
	return &node{kind: "neg", args: []*node{a}}
}

func isNum(n *node, v float64) bool { return n.kind == "num" && n.val == v }

// deriv is d n / d v.
func deriv(n *node, v string) *node {
	switch n.kind {
	case "var":
		if n.name == v {
			return num(1)
		}
		return num(0)
	case "num":
		return num(0)
	case "neg":
		return neg(deriv(n.args[0], v))
	case "+":
		return add(deriv(n.args[0], v), deriv(n.args[1], v))
	case "-":
		return sub(deriv(n.args[0], v), deriv(n.args[1], v))
	case "*":
		a, b := n.args[0], n.args[1]
		return add(mul(deriv(a, v), b), mul(a, deriv(b, v)))
	case "/":
		a, b := n.args[0], n.args[1]
		return sub(div(deriv(a, v), b), div(mul(a, deriv(b, v)), mul(b, b)))
	}
	a := n.args[0]
	da := deriv(a, v)
	if isNum(da, 0) {
		return num(0)
	}
	var outer *node
	switch n.kind {
	case "exp":
		outer = n
	case "expm1":
		outer = fn("exp", a)
	case "log":
		outer = div(num(1), a)
	case "log1p":
		outer = div(num(1), add(a, num(1)))
	case "sqrt":
		outer = div(num(0.5), n)
	case "tanh":
		outer = sub(num(1), fn("square", n))
	case "sin":
		outer = fn("cos", a)
	case "cos":
		outer = neg(fn("sin", a))
	case "abs":
		outer = fn("sign", a)
	case "erf":
		outer = mul(num(1.1283791670955126), fn("exp", neg(fn("square", a)))) // 2/sqrt(pi)
	case "sigmoid":
		outer = mul(n, sub(num(1), n))
	case "square":
		outer = mul(num(2), a)
	case "pow":
		switch n.val - 1 {
		case 0:
			outer = num(1)
		case 1:
			outer = mul(num(2), a)
		default:
			outer = mul(num(n.val), &node{kind: "pow", args: []*node{a}, val: n.val - 1})
		}
	case "sign":
		outer = num(0)
	}
	return mul(outer, da)
}
