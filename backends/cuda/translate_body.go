package cuda

import (
	"strconv"
	"strings"

	"github.com/webtensor/webtensor/backends/lower"
)

// translateBody turns a core.ElementBody's statements (backends/lower's
// statement dialect, parsed by lower.ParseBody) into the statements of a
// C++ function: let becomes a const declaration and var a mutable one,
// auto where WGSL infers the type (WGSL's inference and C++'s agree once
// literals are translated: 1.0 is f32 in single kernels, 1 is i32, 1u is
// u32), and every expression goes through translate. The rest - if, for,
// assignments, return - is spelled alike, but for return fail(K), which
// reports check K through wt_fail.
func translateBody(stmts []lower.Stmt, single bool) string {
	var sb strings.Builder
	depth := 1
	for _, s := range stmts {
		if s.Kind == lower.StmtEnd {
			depth--
		}
		sb.WriteString(strings.Repeat("  ", depth))
		sb.WriteString(cStatement(s, single))
		sb.WriteByte('\n')
		if s.Opens() {
			depth++
		}
	}
	return sb.String()
}

// cStatement is one statement in C++.
func cStatement(s lower.Stmt, single bool) string {
	e := translate(s.Expr, single)
	switch s.Kind {
	case lower.StmtLet, lower.StmtVar:
		if s.Collective != "" {
			// let S = row_sum(V); the collective is a macro of the row
			// kernel (body_rows.go).
			s.Expr = "row_" + s.Collective + "(" + s.Expr + ")"
		}
		return cDeclaration(s, single) + ";"
	case lower.StmtStore:
		return "store(" + translate(s.Index, single) + ", " + e + ");"
	case lower.StmtAssign:
		return cAssignment(s, single) + ";"
	case lower.StmtReturn:
		if s.Fail > 0 {
			// return fail(K): the launch's check K+1 failed at element i
			// (wt_fail keeps the first); the element is zero.
			return "{ wt_fail(A, " + strconv.Itoa(s.Fail) + "u, (i64)i, 0); return {}; }"
		}
		return "return " + e + ";"
	case lower.StmtIf:
		return "if (" + e + ") {"
	case lower.StmtElseIf:
		return "else if (" + e + ") {"
	case lower.StmtElse:
		return "else {"
	case lower.StmtFor:
		return "for (" + cDeclaration(*s.Init, single) + "; " + e + "; " + cAssignment(*s.Post, single) + ") {"
	case lower.StmtEnd:
		return "}"
	case lower.StmtBreak:
		return "break;"
	case lower.StmtContinue:
		return "continue;"
	}
	panic("cuda: statement kind not translated")
}

// cDeclaration is a let or var without its semicolon. A typed var without
// a value is zeroed, as WGSL zeroes it.
func cDeclaration(s lower.Stmt, single bool) string {
	typ := s.Type
	if typ == "" {
		typ = "auto"
	}
	if s.Kind == lower.StmtLet {
		typ = "const " + typ
	}
	if s.Expr == "" {
		return typ + " " + s.Name + " = " + s.Type + "()"
	}
	return typ + " " + s.Name + " = " + translate(s.Expr, single)
}

// cAssignment is an assignment without its semicolon.
func cAssignment(s lower.Stmt, single bool) string {
	if s.Op == "++" || s.Op == "--" {
		return s.Name + s.Op
	}
	return s.Name + " " + s.Op + " " + translate(s.Expr, single)
}
