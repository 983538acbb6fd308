package lower_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/lower"
)

func TestParseBodyReadsEveryConstruct(t *testing.T) {
	src := `
	// comments are skipped
	let n = dim0(1u);
	let s: f32 = pf(0u);
	var acc = 0.0;
	var hits: u32;
	for (var k = 0u; k < n; k++) {
		if (x0(k) > s) { acc += x0(k); } else if x0(k) < -s { hits = hits + 1u; } else { continue; }
		if acc > 10.0 { break; }
	}
	acc -= f32(hits);
	return acc;`
	stmts, err := lower.ParseBody("op", src)
	require.NoError(t, err)
	var kinds []lower.StmtKind
	for _, s := range stmts {
		kinds = append(kinds, s.Kind)
	}
	L, V, A, R, I, EI, E, F, End, B, C := lower.StmtLet, lower.StmtVar, lower.StmtAssign, lower.StmtReturn, lower.StmtIf,
		lower.StmtElseIf, lower.StmtElse, lower.StmtFor, lower.StmtEnd, lower.StmtBreak, lower.StmtContinue
	assert.Equal(t, []lower.StmtKind{L, L, V, V, F, I, A, End, EI, A, End, E, C, End, I, B, End, End, A, R}, kinds)
	assert.Equal(t, lower.Stmt{Kind: L, Name: "s", Type: "f32", Expr: "pf(0u)"}, stmts[1])
	assert.Equal(t, lower.Stmt{Kind: V, Name: "hits", Type: "u32"}, stmts[3])
	assert.Equal(t, "k < n", stmts[4].Expr)
	assert.Equal(t, lower.Stmt{Kind: V, Name: "k", Expr: "0u"}, *stmts[4].Init)
	assert.Equal(t, lower.Stmt{Kind: A, Name: "k", Op: "++"}, *stmts[4].Post)
	assert.Equal(t, lower.Stmt{Kind: A, Name: "acc", Op: "-=", Expr: "f32(hits)"}, stmts[18])
}

// Everything outside the dialect is refused with the op's name and the
// construct, never passed on for one backend to compile differently.
func TestParseBodyRefusesWhatIsOutsideTheDialect(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`loop { break; } return 0.0;`, `"loop"`},
		{`var k = 0u; while (k < 3u) { k++; } return 0.0;`, `"while"`},
		{`switch (i) { default: {} } return 0.0;`, `"switch"`},
		{`const c = 1.0; return c;`, `"const"`},
		{`return f32(in0[i]);`, `"in0"`},
		{`return x0v[i];`, `"["`},
		{`return f32(out0);`, `"out0"`},
		{`let v = vec2<f32>(1.0, 2.0); return v.x;`, `"vec2"`},
		{`var a: array<f32, 4>; return 0.0;`, `"array<f32, 4>"`},
		{`let p = &x; return 0.0;`, `"&"`},
		{`return i > 0u ? 1.0 : 0.0;`, `"?"`},
		{`let x: f16 = 1.0; return x;`, `"f16"`},
		{`let x = 1.0;`, "must end with return"},
		{`if (i > 0u) { return 1.0; }`, "must end with return"},
		{`if (i > 0u) { return 1.0; return 0.0;`, "left open"},
		{`return 1.0; }`, "closes no block"},
		{`let x = 1.0; else { } return x;`, "else must follow"},
		{`break; return 0.0;`, "outside a for loop"},
		{`for (k = 0u; k < 3u; k++) { } return 0.0;`, "declares its counter"},
		{`let x; return 0.0;`, "needs a value"},
		{`x0(i); return 0.0;`, "not a statement"},
		{`workgroupBarrier(); return 0.0;`, `"workgroupBarrier"`},
		{`return;`, "needs a value"},
		{`let v = fail(0u); return v;`, `"fail" is outside the dialect (fail stands alone in a return`},
		{`return fail(0u) + 1.0;`, `"fail" is outside`},
		{`return fail(8u);`, `"fail" is outside`},
		{`return fail(k);`, `"fail" is outside`},
	} {
		_, err := lower.ParseBody("myop", c.src)
		if assert.Error(t, err, c.src) {
			assert.Contains(t, err.Error(), "myop: GPU body", c.src)
			assert.Contains(t, err.Error(), c.want, c.src)
		}
	}
}

// return fail(K) ends an element with check K failed; BodyFails says a
// body has one.
func TestParseBodyReadsFail(t *testing.T) {
	stmts, err := lower.ParseBody("op", `if x0i(i) < 0 { return fail(0u); } else if x0i(i) > 9 { return fail( 7 ); } return x0(i);`)
	require.NoError(t, err)
	assert.True(t, lower.BodyFails(stmts))
	assert.Equal(t, lower.Stmt{Kind: lower.StmtReturn, Expr: "fail(0u)", Fail: 1}, stmts[1])
	assert.Equal(t, 8, stmts[4].Fail)
	assert.Equal(t, 0, stmts[len(stmts)-1].Fail)
	plain, err := lower.ParseBody("op", `return x0(i);`)
	require.NoError(t, err)
	assert.False(t, lower.BodyFails(plain))
}
