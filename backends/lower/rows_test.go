package lower_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/lower"
)

func TestParseRowBodyReadsStoresAndCollectives(t *testing.T) {
	src := `
	let n = pu(1u);
	var q = 0.0;
	for (var j = lane; j < n; j += lanes) { q += x0(row * n + j); }
	let total = row_sum(q * (1.0 + 0.0));
	let top = row_max( q );
	if lane == 0u { store(row, f32(top) + total); }
	store(min(row, 3u), select(0.0, total, total > 0.0));`
	stmts, err := lower.ParseRowBody("op", src)
	require.NoError(t, err)
	require.Len(t, stmts, 11)
	assert.Equal(t, lower.Stmt{Kind: lower.StmtLet, Name: "total", Expr: "q * (1.0 + 0.0)", Collective: "sum"}, stmts[5])
	assert.Equal(t, lower.Stmt{Kind: lower.StmtLet, Name: "top", Expr: "q", Collective: "max"}, stmts[6])
	assert.Equal(t, lower.Stmt{Kind: lower.StmtStore, Index: "row", Expr: "f32(top) + total"}, stmts[8])
	assert.Equal(t, lower.Stmt{Kind: lower.StmtStore, Index: "min(row, 3u)", Expr: "select(0.0, total, total > 0.0)"}, stmts[10])
	assert.False(t, lower.BodyFails(stmts))
}

// A collective that some lanes would not reach, a return that would leave
// the others waiting, and the row words where they do not belong are all
// refused, with the op's name.
func TestParseRowBodyRefusesWhatWouldHangOrMislead(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`if lane == 0u { let s = row_sum(1.0); } store(row, 0.0);`, "top level"},
		{`for (var j = 0u; j < 2u; j++) { let s = row_max(1.0); } store(row, 0.0);`, "top level"},
		{`var s = row_sum(1.0); store(row, s);`, "a collective's result is a let"},
		{`let s = row_sum(1.0) + row_sum(2.0); store(row, s);`, `"row_sum"`},
		{`let s = 1.0 + row_min(2.0); store(row, s);`, `"row_min"`},
		{`store(row, row_sum(1.0));`, `"row_sum"`},
		{`if lane > 0u { return; } store(row, 0.0);`, `"return"`},
		{`store(row, 1.0); return 0.0;`, `"return"`},
		{`let s = 1.0;`, "has none"},
		{`store(row);`, "two arguments"},
		{`store row, 1.0;`, "want store(J, VALUE);"},
		{`store(row, store(0u, 1.0));`, `"store"`},
	} {
		_, err := lower.ParseRowBody("rowop", c.src)
		require.Error(t, err, c.src)
		assert.Contains(t, err.Error(), "rowop: GPU row body: ", c.src)
		assert.Contains(t, err.Error(), c.want, c.src)
	}
	// An element body has no store and no collectives.
	for _, src := range []string{`store(i, 1.0); return 0.0;`, `let s = row_sum(1.0); return s;`} {
		_, err := lower.ParseBody("op", src)
		require.Error(t, err, src)
	}
}
