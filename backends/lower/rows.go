package lower

import (
	"fmt"
	"regexp"
	"strings"
)

// The row dialect: a core.ElementBody with Rows is the work of one row of
// the output, done by a group of lanes together (one workgroup on WebGPU,
// one block on CUDA), where an element body is the work of one element.
// It is the statement dialect less return, plus
//
//	row, lane, lanes               the row (u32), this lane (0 <= lane < lanes), the lanes
//	store(J, EXPR);                writes output element J (a flat u32 index)
//	let NAME = row_sum(EXPR);      every lane's EXPR (in the float compute type)
//	let NAME = row_max(EXPR);      summed, or its maximum or minimum (NaN wins),
//	let NAME = row_min(EXPR);      given to every lane
//
// The collectives synchronise the lanes, so they stand at the body's top
// level, never inside an if or a for, where some lanes would not reach
// them; the body has no return for the same reason (a lane that left
// early would never arrive). A lane typically walks its row in steps of
// lanes (for (var j = lane; j < n; j += lanes)), the collectives combine
// what the lanes found, and the lanes store the row's elements in steps
// of lanes again.

// RowLanes is how many lanes work on a row: a workgroup (WebGPU) or block
// (CUDA) of this size per row, a power of two for the collectives' halving.
const RowLanes = 64

// rowWords are the row dialect's words that an expression may not hold.
var rowWords = map[string]bool{"row_sum": true, "row_max": true, "row_min": true, "store": true}

// collectiveCall matches let NAME = row_OP(EXPR)'s value.
var collectiveCall = regexp.MustCompile(`^row_(sum|max|min)\s*\((.*)\)$`)

// ParseRowBody splits a row body's source into statements, refusing
// anything outside the row dialect with an error that names op and the
// construct.
func ParseRowBody(op, src string) ([]Stmt, error) {
	p := &bodyParser{src: src, rows: true}
	stmts, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("%s: GPU row body: %w", op, err)
	}
	return stmts, nil
}

// ParseGPUBody is ParseRowBody for a row body (rows), else ParseBody.
func ParseGPUBody(op, src string, rows bool) ([]Stmt, error) {
	if rows {
		return ParseRowBody(op, src)
	}
	return ParseBody(op, src)
}

// rowDeclaration is a let or var of a row body: a collective's let, or a
// plain declaration.
func (p *bodyParser) rowDeclaration(kw, text string) (Stmt, error) {
	lhs, e, _ := strings.Cut(text, "=")
	m := collectiveCall.FindStringSubmatch(strings.TrimSpace(e))
	if m == nil || !closesLast(strings.TrimSpace(e)) {
		return declaration(kw, text)
	}
	if kw != "let" {
		return Stmt{}, fmt.Errorf("%s %s: a collective's result is a let", kw, strings.TrimSpace(text))
	}
	if len(p.blocks) > 0 {
		return Stmt{}, fmt.Errorf("let %s: row_%s stands at the body's top level, where every lane reaches it (not inside an if or a for)", strings.TrimSpace(lhs), m[1])
	}
	s, err := declaration(kw, lhs+"= "+m[2])
	s.Collective = m[1]
	return s, err
}

// closesLast reports whether the ( after a call's name closes at the end
// of e (row_sum(a) + row_sum(b) is not one call).
func closesLast(e string) bool {
	depth := 0
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i == len(e)-1
			}
		}
	}
	return false
}

// storeStatement parses what follows store: (J, EXPR).
func storeStatement(text string) (Stmt, error) {
	if !strings.HasPrefix(text, "(") || !strings.HasSuffix(text, ")") || !closesLast(text) {
		return Stmt{}, fmt.Errorf("store%s: want store(J, VALUE);", text)
	}
	parts := splitTop(text[1:len(text)-1], ',')
	if len(parts) != 2 {
		return Stmt{}, fmt.Errorf("store%s: want store(J, VALUE); with two arguments", text)
	}
	j, v := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
	for _, e := range []string{j, v} {
		if err := checkExpr(e); err != nil {
			return Stmt{}, err
		}
	}
	return Stmt{Kind: StmtStore, Index: j, Expr: v}, nil
}

// rowBodyStores refuses a row body that never writes its output.
func rowBodyStores(stmts []Stmt) error {
	for _, s := range stmts {
		if s.Kind == StmtStore {
			return nil
		}
	}
	return fmt.Errorf("a row body writes its output through store(J, VALUE); and this one has none")
}
