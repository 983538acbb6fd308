package lower

import (
	"fmt"
	"regexp"
	"strings"
)

// The statement dialect of a core.ElementBody: the function of one output
// element, written once as WGSL statements that WebGPU compiles as they
// are and CUDA translates (backends/cuda). It is the part of WGSL whose
// meaning C++ shares once the expressions are translated:
//
//	let NAME = EXPR;           let NAME: T = EXPR;
//	var NAME = EXPR;           var NAME: T = EXPR;     var NAME: T;
//	NAME = EXPR;  NAME += EXPR;  (-= *= /= %= &= |= ^= <<= >>=)  NAME++;  NAME--;
//	if COND { ... } else if COND { ... } else { ... }
//	for (var K = EXPR; COND; K++) { ... }   break;  continue;
//	return EXPR;               (the body's last statement)
//	return fail(K);            (K a literal 0 to 7: the element fails check K)
//
// with T one of f32, f64, i32, i64, u32, bool, // comments, and the
// expressions of the package doc. Anything else - loop, while, switch,
// arrays, vectors, pointers, buffers read directly rather than through the
// input helpers - is refused by name, so that a body never compiles on one
// backend into something the other would compute differently.
//
// return fail(K); ends the element and makes the whole op fail: a body
// that must check its inputs' values (an index in range) says so where it
// finds one that is not, and the backend answers with the CPU kernel's
// error for the same inputs (the reference words it, with the values).
// fail stands alone in its return; it is no value to compute with.

// StmtKind is the kind of one statement of a body.
type StmtKind int

const (
	StmtLet      StmtKind = iota // let NAME [: T] = EXPR;
	StmtVar                      // var NAME [: T] [= EXPR];
	StmtAssign                   // NAME OP EXPR; or NAME++; NAME--;
	StmtReturn                   // return EXPR;
	StmtIf                       // if COND {
	StmtElseIf                   // else if COND {  (right after the } of an if)
	StmtElse                     // else {
	StmtFor                      // for (INIT; COND; POST) {
	StmtEnd                      // }
	StmtBreak                    // break;
	StmtContinue                 // continue;
	StmtStore                    // store(INDEX, EXPR);  (a row body's)
)

// Stmt is one statement of a body, its expressions still in the dialect.
type Stmt struct {
	Kind StmtKind
	Name string // the declared or assigned variable
	Type string // a declaration's type; "" when inferred from Expr
	Op   string // an assignment's operator: "=", "+=", ..., "++", "--"
	Expr string // initialiser, assigned or returned value, or condition
	// Init and Post are a for loop's declaration and step.
	Init, Post *Stmt
	// Fail is K+1 for return fail(K); 0 for every other statement.
	Fail int
	// Index is a store's output element; Collective a row body's
	// let NAME = row_sum(EXPR); ("sum", "max" or "min", Expr the operand).
	Index, Collective string
}

// BodyFails reports whether a body can fail (has a return fail(K)).
func BodyFails(stmts []Stmt) bool {
	for _, s := range stmts {
		if s.Fail > 0 {
			return true
		}
	}
	return false
}

// failReturn matches the value of a return fail(K).
var failReturn = regexp.MustCompile(`^fail\(\s*([0-7])u?\s*\)$`)

// Opens reports whether the statement opens a block (ends with "{").
func (s Stmt) Opens() bool {
	return s.Kind == StmtIf || s.Kind == StmtElseIf || s.Kind == StmtElse || s.Kind == StmtFor
}

// BodyTypeNames are the types a declaration may name.
var BodyTypeNames = map[string]bool{"f32": true, "f64": true, "i32": true, "i64": true, "u32": true, "bool": true}

// refusedWords are WGSL words outside the dialect, with what to write
// instead where there is something.
var refusedWords = map[string]string{
	"loop": "write a for loop", "while": "write a for loop", "switch": "write if/else", "case": "write if/else",
	"default": "write if/else", "continuing": "write a for loop", "const": "write let", "fn": "",
	"struct": "", "alias": "", "override": "", "discard": "", "ptr": "", "array": "", "atomic": "",
	"function": "", "private": "", "workgroup": "", "storage": "", "uniform": "",
	"workgroupBarrier": "", "storageBarrier": "", "P": "read attributes through pf/pi/pu",
	"let": "", "var": "", "return": "", "if": "", "else": "", "for": "", "break": "", "continue": "",
}

// ParseBody splits an ElementBody's source into statements, refusing
// anything outside the dialect with an error that names op and the
// construct.
func ParseBody(op, src string) ([]Stmt, error) {
	p := &bodyParser{src: src}
	stmts, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("%s: GPU body: %w", op, err)
	}
	return stmts, nil
}

type bodyParser struct {
	src    string
	pos    int
	blocks []StmtKind // the open blocks, innermost last
	rows   bool       // a row body (ParseRowBody): store and the row collectives, no return
}

func (p *bodyParser) parse() ([]Stmt, error) {
	var out []Stmt
	closed := StmtKind(-1) // the kind of block the previous statement closed
	for p.skipSpace(); p.pos < len(p.src); p.skipSpace() {
		s, err := p.statement(closed)
		if err != nil {
			return nil, err
		}
		closed = -1
		switch {
		case s.Kind == StmtEnd:
			if len(p.blocks) == 0 {
				return nil, fmt.Errorf("a } closes no block")
			}
			closed = p.blocks[len(p.blocks)-1]
			p.blocks = p.blocks[:len(p.blocks)-1]
		case s.Opens():
			p.blocks = append(p.blocks, s.Kind)
		}
		out = append(out, s)
	}
	switch {
	case len(p.blocks) > 0:
		return nil, fmt.Errorf("%d block(s) left open", len(p.blocks))
	case p.rows:
		return out, rowBodyStores(out)
	case len(out) == 0 || out[len(out)-1].Kind != StmtReturn:
		return nil, fmt.Errorf("the body must end with return EXPR;")
	}
	return out, nil
}

// statement reads one statement at p.pos; closed is the kind of block the
// previous statement closed (an else must follow an if's }).
func (p *bodyParser) statement(closed StmtKind) (Stmt, error) {
	if p.src[p.pos] == '}' {
		p.pos++
		return Stmt{Kind: StmtEnd}, nil
	}
	word := p.word()
	switch word {
	case "if":
		p.pos += len(word)
		cond, err := p.condition()
		return Stmt{Kind: StmtIf, Expr: cond}, err
	case "else":
		if closed != StmtIf && closed != StmtElseIf {
			return Stmt{}, fmt.Errorf("an else must follow the } of an if")
		}
		p.pos += len(word)
		p.skipSpace()
		if p.word() == "if" {
			p.pos += 2
			cond, err := p.condition()
			return Stmt{Kind: StmtElseIf, Expr: cond}, err
		}
		return Stmt{Kind: StmtElse}, p.expect('{')
	case "for":
		p.pos += len(word)
		return p.forHeader()
	case "break", "continue":
		p.pos += len(word)
		rest, err := p.until(';')
		if err != nil || rest != "" {
			return Stmt{}, fmt.Errorf("%s takes nothing before its ;", word)
		}
		if !p.inLoop() {
			return Stmt{}, fmt.Errorf("%s outside a for loop", word)
		}
		return Stmt{Kind: map[string]StmtKind{"break": StmtBreak, "continue": StmtContinue}[word]}, nil
	case "return":
		if p.rows {
			return Stmt{}, refusal("return", "a row body ends with its last statement and writes through store(J, V)")
		}
		p.pos += len(word)
		e, err := p.until(';')
		if err != nil {
			return Stmt{}, err
		}
		if e == "" {
			return Stmt{}, fmt.Errorf("return needs a value")
		}
		if m := failReturn.FindStringSubmatch(e); m != nil {
			return Stmt{Kind: StmtReturn, Expr: e, Fail: int(m[1][0]-'0') + 1}, nil
		}
		return Stmt{Kind: StmtReturn, Expr: e}, checkExpr(e)
	case "let", "var":
		p.pos += len(word)
		text, err := p.until(';')
		if err != nil {
			return Stmt{}, err
		}
		if p.rows {
			return p.rowDeclaration(word, text)
		}
		return declaration(word, text)
	case "store":
		if !p.rows {
			return Stmt{}, refusal("store", "an element body returns its element; store is a row body's (ElementBody.Rows)")
		}
		p.pos += len(word)
		text, err := p.until(';')
		if err != nil {
			return Stmt{}, err
		}
		return storeStatement(text)
	}
	if why, bad := refusedWords[word]; bad {
		return Stmt{}, refusal(word, why)
	}
	text, err := p.until(';')
	if err != nil {
		return Stmt{}, err
	}
	return assignment(text)
}

func (p *bodyParser) inLoop() bool {
	for _, b := range p.blocks {
		if b == StmtFor {
			return true
		}
	}
	return false
}

// condition reads an if's condition, up to the { that opens its block.
func (p *bodyParser) condition() (string, error) {
	cond, err := p.until('{')
	if err != nil {
		return "", err
	}
	if cond == "" {
		return "", fmt.Errorf("if without a condition")
	}
	return cond, checkExpr(cond)
}

// forHeader reads "(var K = E; COND; STEP) {".
func (p *bodyParser) forHeader() (Stmt, error) {
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return Stmt{}, fmt.Errorf("for needs (init; condition; step)")
	}
	p.pos++
	head, err := p.until(')')
	if err != nil {
		return Stmt{}, err
	}
	parts := splitTop(head, ';')
	if len(parts) != 3 {
		return Stmt{}, fmt.Errorf("for (%s): want (var K = START; CONDITION; STEP)", head)
	}
	init, post := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[2])
	if !strings.HasPrefix(init, "var ") {
		return Stmt{}, fmt.Errorf("for (%s): the loop's first part declares its counter: var K = START", head)
	}
	in, err := declaration("var", init[4:])
	if err != nil {
		return Stmt{}, err
	}
	if in.Expr == "" {
		return Stmt{}, fmt.Errorf("for (%s): the counter needs a start value", head)
	}
	step, err := assignment(post)
	if err != nil {
		return Stmt{}, err
	}
	cond := strings.TrimSpace(parts[1])
	if err := checkExpr(cond); err != nil {
		return Stmt{}, err
	}
	return Stmt{Kind: StmtFor, Expr: cond, Init: &in, Post: &step}, p.expect('{')
}

// declaration parses what follows let or var: NAME [: T] [= EXPR].
func declaration(kw, text string) (Stmt, error) {
	kind := map[string]StmtKind{"let": StmtLet, "var": StmtVar}[kw]
	lhs, e, hasInit := strings.Cut(text, "=")
	e = strings.TrimSpace(e)
	name, typ, typed := strings.Cut(lhs, ":")
	name, typ = strings.TrimSpace(name), strings.TrimSpace(typ)
	if !isIdent(name) {
		return Stmt{}, fmt.Errorf("%s %s: %q is not a name", kw, text, name)
	}
	if why, bad := refusedWords[name]; bad {
		return Stmt{}, refusal(name, why)
	}
	if typed && !BodyTypeNames[typ] {
		return Stmt{}, refusal(typ, "declare f32, f64, i32, i64, u32 or bool")
	}
	switch {
	case !hasInit && (kind == StmtLet || !typed):
		return Stmt{}, fmt.Errorf("%s %s: needs a value (= EXPR)", kw, name)
	case hasInit:
		if err := checkExpr(e); err != nil {
			return Stmt{}, err
		}
	}
	return Stmt{Kind: kind, Name: name, Type: typ, Expr: e}, nil
}

// assignOps are the assignment operators, longest first.
var assignOps = []string{"<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++", "--", "="}

// assignment parses NAME OP EXPR, NAME++ or NAME--.
func assignment(text string) (Stmt, error) {
	text = strings.TrimSpace(text)
	n := 0
	for n < len(text) && isIdentChar(text[n], n == 0) {
		n++
	}
	name, rest := text[:n], strings.TrimSpace(text[n:])
	if why, bad := refusedWords[name]; bad {
		return Stmt{}, refusal(name, why)
	}
	if name == "" {
		return Stmt{}, fmt.Errorf("%q is not a statement of the dialect (let, var, assignment, if, for, return)", text)
	}
	for _, op := range assignOps {
		if !strings.HasPrefix(rest, op) || op == "=" && strings.HasPrefix(rest, "==") {
			continue
		}
		e := strings.TrimSpace(rest[len(op):])
		if op == "++" || op == "--" {
			if e != "" {
				return Stmt{}, fmt.Errorf("%q: nothing may follow %s", text, op)
			}
			return Stmt{Kind: StmtAssign, Name: name, Op: op}, nil
		}
		if e == "" {
			return Stmt{}, fmt.Errorf("%q: the assignment has no value", text)
		}
		return Stmt{Kind: StmtAssign, Name: name, Op: op, Expr: e}, checkExpr(e)
	}
	return Stmt{}, fmt.Errorf("%q is not a statement of the dialect (let, var, assignment, if, for, return)", text)
}

// checkExpr refuses what an expression of the dialect cannot hold.
func checkExpr(e string) error {
	if e == "" {
		return fmt.Errorf("an empty expression")
	}
	for i := 0; i < len(e); i++ {
		c := e[i]
		switch {
		case strings.IndexByte("{};@#$\"'\\?:[]", c) >= 0:
			return refusal(string(c), map[byte]string{'?': "write select(f, t, cond)", '[': "read inputs through xK(j)", ']': "read inputs through xK(j)"}[c])
		case c == '&' && i+1 < len(e) && e[i+1] == '&':
			i++
		case c == '&' && !afterOperand(e, i):
			return refusal("&", "pointers are outside the dialect")
		case isIdentChar(c, true):
			j := i
			for j < len(e) && isIdentChar(e[j], false) {
				j++
			}
			if err := checkWord(e[i:j]); err != nil {
				return err
			}
			i = j - 1
		case c >= '0' && c <= '9':
			for i+1 < len(e) && (isIdentChar(e[i+1], false) || e[i+1] == '.') {
				i++ // a literal: 1.5e3f, 0x1fu
			}
		}
	}
	return nil
}

// checkWord refuses the identifiers an expression may not use: keywords
// outside the dialect, vector and matrix types, and the kernel's own
// buffers, which only the input helpers read.
func checkWord(w string) error {
	if why, bad := refusedWords[w]; bad {
		return refusal(w, why)
	}
	if w == "fail" {
		return refusal("fail", "fail stands alone in a return: return fail(K); with K a literal 0 to 7")
	}
	if rowWords[w] {
		return refusal(w, "row_sum, row_max and row_min stand alone as a row body's let NAME = row_sum(EXPR); at its top level, store as its statement store(J, V);")
	}
	for _, prefix := range []string{"vec", "mat", "in", "out"} {
		if rest, ok := strings.CutPrefix(w, prefix); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			if prefix == "in" || prefix == "out" {
				return refusal(w, "read input k through xK(j); the body returns the output element")
			}
			return refusal(w, "vectors and matrices are outside the dialect")
		}
	}
	return nil
}

// afterOperand reports whether the operator at i follows an operand (so
// it is binary, not a prefix).
func afterOperand(e string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if e[j] != ' ' && e[j] != '\t' && e[j] != '\n' {
			return isIdentChar(e[j], false) || e[j] == ')' || e[j] == '.'
		}
	}
	return false
}

func refusal(construct, instead string) error {
	if instead != "" {
		return fmt.Errorf("%q is outside the dialect (%s)", construct, instead)
	}
	return fmt.Errorf("%q is outside the dialect", construct)
}

// until returns the text up to the byte stop at bracket depth 0 (and moves
// past it), refusing braces and (but in a for header) semicolons on the way.
func (p *bodyParser) until(stop byte) (string, error) {
	depth := 0
	for i := p.pos; i < len(p.src); i++ {
		c := p.src[i]
		switch {
		case c == stop && depth == 0:
			text := strings.TrimSpace(p.src[p.pos:i])
			p.pos = i + 1
			return text, nil
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '{' || c == '}' || c == ';' && stop != ')':
			return "", fmt.Errorf("%q: expected %q before %q", strings.TrimSpace(p.src[p.pos:i+1]), stop, c)
		}
	}
	return "", fmt.Errorf("%q: missing %q", strings.TrimSpace(p.src[p.pos:]), stop)
}

func (p *bodyParser) expect(c byte) error {
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != c {
		return fmt.Errorf("expected %q at %q", c, p.rest())
	}
	p.pos++
	return nil
}

func (p *bodyParser) rest() string {
	r := p.src[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

// skipSpace moves past white space and // comments.
func (p *bodyParser) skipSpace() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "//"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// word is the identifier at p.pos ("" if none).
func (p *bodyParser) word() string {
	j := p.pos
	for j < len(p.src) && isIdentChar(p.src[j], j == p.pos) {
		j++
	}
	return p.src[p.pos:j]
}

// splitTop splits s at sep outside parentheses.
func splitTop(s string, sep byte) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i], i == 0) {
			return false
		}
	}
	return true
}

func isIdentChar(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}
