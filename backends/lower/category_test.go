package lower_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/webtensor/webtensor/backends/lower"
	"github.com/webtensor/webtensor/core"
)

func TestInCategory(t *testing.T) {
	assert.Equal(t, []string{"isinf", "isnan", "logical_not"}, lower.InCategory(lower.Unary, "logical"))
	assert.Equal(t, []string{"logical_and", "logical_or", "logical_xor"}, lower.InCategory(lower.Logical, "logical"))
	assert.Empty(t, lower.InCategory(lower.Binary, "unary"))
	// Every op of the tables has a registered category, so registering
	// each category's share covers the whole table.
	for _, table := range []map[string]lower.UnaryExpr{lower.Unary} {
		for op := range table {
			_, ok := core.LookupOp(op)
			assert.True(t, ok, "%s is in lower.Unary but not in the registry", op)
		}
	}
	for op := range lower.Binary {
		_, ok := core.LookupOp(op)
		assert.True(t, ok, "%s is in lower.Binary but not in the registry", op)
	}
}
