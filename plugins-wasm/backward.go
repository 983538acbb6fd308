package plugins

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/webtensor/webtensor/core"
)

// A plugin's backward rule is a small expression over registry ops (see
// ABI.md): `mul(grad, sub(1, square(y)))`. Expressions are parsed and checked
// once, when the plugin loads, and evaluated with ordinary op calls at
// backward time, so they run on whatever device the tensors live on.

type exprKind uint8

const (
	exprNumber exprKind = iota
	exprName
	exprCall
)

// Limits on one expression. Real rules are small (the swish example nests
// 7 calls deep in 20 nodes); the limits keep a hostile manifest, which may be
// 16 MB, from costing the host much. The depth bounds every recursive walk
// over a parsed expression (check, eval) and the chain of ops a backward
// pass builds from it, so none can exhaust the goroutine stack: before this
// limit, 3,000,000 nested calls overflowed it in the parser.
const (
	maxExprDepth = 256    // nested calls, counting the outermost
	maxExprNodes = 10_000 // numbers, names and calls in one expression
)

type expr struct {
	kind  exprKind
	num   float64
	name  string // a name, or the op of a call
	args  []*expr
	attrs core.Attrs
}

// BackwardFromExpressions compiles the manifest's backward expressions (one
// per differentiable input, keyed by input name) into a backward rule.
func BackwardFromExpressions(def *core.OpDef, exprs map[string]string) (func(*core.GradCtx) ([]*core.Tensor, error), error) {
	names := map[string]bool{"grad": true}
	inputIndex := map[string]int{}
	for i, in := range def.Inputs {
		names[in.Name] = true
		inputIndex[in.Name] = i
	}
	for _, o := range def.Outputs {
		names[o] = true
		names["grad_"+o] = true
	}
	for _, a := range def.Attrs {
		if a.Kind == core.AttrInt || a.Kind == core.AttrFloat || a.Kind == core.AttrBool {
			names[a.Name] = true
		}
	}
	compiled := make([]*expr, len(def.Inputs))
	for input, src := range exprs {
		i, ok := inputIndex[input]
		if !ok {
			return nil, fmt.Errorf("backward of %s: %q is not an input (inputs: %s)", def.Name, input, inputList(def))
		}
		e, err := parseExpr(src)
		if err != nil {
			return nil, fmt.Errorf("backward of %s, input %s: %v", def.Name, input, err)
		}
		if err := e.check(names); err != nil {
			return nil, fmt.Errorf("backward of %s, input %s: %v", def.Name, input, err)
		}
		compiled[i] = e
	}
	return func(g *core.GradCtx) ([]*core.Tensor, error) {
		out := make([]*core.Tensor, len(compiled))
		for i, e := range compiled {
			if e == nil || !g.Need[i] {
				continue
			}
			t, err := e.eval(def, g)
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
		return out, nil
	}, nil
}

func inputList(def *core.OpDef) string {
	names := make([]string, len(def.Inputs))
	for i, in := range def.Inputs {
		names[i] = in.Name
	}
	return strings.Join(names, ", ")
}

func (e *expr) check(names map[string]bool) error {
	switch e.kind {
	case exprName:
		if !names[e.name] {
			return fmt.Errorf("unknown name %q (use inputs, outputs, grad, grad_<output> or numeric attributes)", e.name)
		}
	case exprCall:
		if _, ok := core.LookupOp(e.name); !ok {
			return fmt.Errorf("unknown op %q", e.name)
		}
		for _, a := range e.args {
			if err := a.check(names); err != nil {
				return err
			}
		}
	}
	return nil
}

// reference is the tensor whose dtype and device constants take.
func reference(g *core.GradCtx) *core.Tensor {
	for _, t := range g.Inputs {
		if t != nil && t.DType().IsFloat() {
			return t
		}
	}
	return g.Outputs[0]
}

func (e *expr) eval(def *core.OpDef, g *core.GradCtx) (*core.Tensor, error) {
	ref := reference(g)
	switch e.kind {
	case exprNumber:
		return core.Scalar(e.num, ref.DType(), ref.Device()), nil
	case exprName:
		return lookupName(def, g, e.name, ref)
	}
	args := make([]*core.Tensor, len(e.args))
	for i, a := range e.args {
		t, err := a.eval(def, g)
		if err != nil {
			return nil, err
		}
		args[i] = t
	}
	outs, err := core.Call(e.name, args, e.attrs)
	if err != nil {
		return nil, err
	}
	if len(outs) != 1 {
		return nil, fmt.Errorf("%s returns %d outputs; backward expressions need single-output ops", e.name, len(outs))
	}
	return outs[0], nil
}

func lookupName(def *core.OpDef, g *core.GradCtx, name string, ref *core.Tensor) (*core.Tensor, error) {
	if name == "grad" {
		return g.Grad(0), nil
	}
	for i, in := range def.Inputs {
		if in.Name == name {
			if g.Inputs[i] == nil {
				return nil, fmt.Errorf("input %s is absent", name)
			}
			return g.Inputs[i], nil
		}
	}
	for j, o := range def.Outputs {
		if o == name {
			return g.Outputs[j], nil
		}
		if "grad_"+o == name {
			return g.Grad(j), nil
		}
	}
	v, ok := g.Attrs[name]
	if !ok {
		return nil, fmt.Errorf("unknown name %q", name)
	}
	switch x := v.(type) {
	case int:
		return core.Scalar(float64(x), ref.DType(), ref.Device()), nil
	case float64:
		return core.Scalar(x, ref.DType(), ref.Device()), nil
	case bool:
		f := 0.0
		if x {
			f = 1
		}
		return core.Scalar(f, ref.DType(), ref.Device()), nil
	}
	return nil, fmt.Errorf("attribute %s is not numeric", name)
}

// ---- parsing ----

type parser struct {
	src   string
	pos   int
	depth int // calls open at pos
	nodes int
}

func parseExpr(src string) (*expr, error) {
	p := &parser{src: src}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		// The rest of the expression can be megabytes: clip it as the
		// column's context is.
		return nil, p.errf("unexpected %q", clip(p.src[p.pos:], 40))
	}
	return e, nil
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("at column %d of %s: %s", p.pos+1, quoteShort(p.src, p.pos), fmt.Sprintf(format, args...))
}

// clip shortens a string from a manifest to at most keep bytes (on a rune
// boundary) for an error message, saying how long it was: a manifest may
// hold 16 MB strings.
func clip(s string, keep int) string {
	if len(s) <= keep {
		return s
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:keep], len(s))
}

// quoteShort quotes src whole when it is short, or else the part around pos:
// an error about a 16 MB expression must not carry it.
func quoteShort(src string, pos int) string {
	const keep = 40
	if len(src) <= 2*keep {
		return strconv.Quote(src)
	}
	from, to := max(pos-keep, 0), min(pos+keep, len(src))
	for from > 0 && !utf8.RuneStart(src[from]) {
		from--
	}
	for to < len(src) && !utf8.RuneStart(src[to]) {
		to++
	}
	q := strconv.Quote(src[from:to])
	if from > 0 {
		q = "..." + q
	}
	if to < len(src) {
		q += "..."
	}
	return fmt.Sprintf("%s (%d bytes)", q, len(src))
}

func (p *parser) space() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
}

func (p *parser) peek() byte {
	p.space()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) eat(c byte) bool {
	if p.peek() == c {
		p.pos++
		return true
	}
	return false
}

func isIdentStart(c byte) bool { return c == '_' || unicode.IsLetter(rune(c)) }

func (p *parser) ident() string {
	start := p.pos
	for p.pos < len(p.src) && (isIdentStart(p.src[p.pos]) || unicode.IsDigit(rune(p.src[p.pos])) || p.src[p.pos] == '.') {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *parser) number() (float64, error) {
	start := p.pos
	for p.pos < len(p.src) && strings.ContainsRune("+-.0123456789eE", rune(p.src[p.pos])) {
		p.pos++
	}
	f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
	if err != nil {
		p.pos = start
		return 0, p.errf("bad number %q", p.src[start:min(start+12, len(p.src))])
	}
	return f, nil
}

func (p *parser) expr() (*expr, error) {
	if p.nodes++; p.nodes > maxExprNodes {
		return nil, p.errf("more than %d numbers, names and calls in one expression", maxExprNodes)
	}
	c := p.peek()
	switch {
	case c == 0:
		return nil, p.errf("expression ends early")
	case c == '-' || c == '.' || (c >= '0' && c <= '9'):
		f, err := p.number()
		return &expr{kind: exprNumber, num: f}, err
	case isIdentStart(c):
		name := p.ident()
		if !p.eat('(') {
			return &expr{kind: exprName, name: name}, nil
		}
		if p.depth++; p.depth > maxExprDepth {
			return nil, p.errf("calls nest more than %d deep", maxExprDepth)
		}
		defer func() { p.depth-- }()
		call := &expr{kind: exprCall, name: name, attrs: core.Attrs{}}
		if p.eat(')') {
			return call, nil
		}
		for {
			if err := p.arg(call); err != nil {
				return nil, err
			}
			if p.eat(')') {
				return call, nil
			}
			if !p.eat(',') {
				return nil, p.errf("want ',' or ')' in the arguments of %s", name)
			}
		}
	}
	return nil, p.errf("unexpected %q", string(c))
}

// arg parses a positional expression or a key=literal attribute.
func (p *parser) arg(call *expr) error {
	save := p.pos
	if isIdentStart(p.peek()) {
		key := p.ident()
		if p.eat('=') {
			v, err := p.literal()
			if err != nil {
				return err
			}
			call.attrs[key] = v
			return nil
		}
		p.pos = save
	}
	if len(call.attrs) > 0 {
		return p.errf("positional argument after keyword arguments in %s", call.name)
	}
	e, err := p.expr()
	if err != nil {
		return err
	}
	call.args = append(call.args, e)
	return nil
}

// literal reads an attribute value: a list holds scalars only (every list
// attribute kind is flat), so literals never nest.
func (p *parser) literal() (any, error) {
	c := p.peek()
	switch {
	case c == '"':
		end := strings.IndexByte(p.src[p.pos+1:], '"')
		if end < 0 {
			return nil, p.errf("unterminated string")
		}
		s := p.src[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		return s, nil
	case c == '[':
		p.pos++
		var list []any
		if p.eat(']') {
			return list, nil
		}
		for {
			if p.peek() == '[' {
				return nil, p.errf("lists in attribute values hold numbers, strings or booleans, not lists")
			}
			v, err := p.literal()
			if err != nil {
				return nil, err
			}
			list = append(list, v)
			if p.eat(']') {
				return list, nil
			}
			if !p.eat(',') {
				return nil, p.errf("want ',' or ']' in a list")
			}
		}
	case isIdentStart(c):
		switch w := p.ident(); w {
		case "true":
			return true, nil
		case "false":
			return false, nil
		default:
			return nil, p.errf("attribute values must be literals, got %q", w)
		}
	}
	return p.number()
}
