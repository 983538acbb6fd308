package lower

import (
	"sort"

	"github.com/webtensor/webtensor/core"
)

// InCategory lists, sorted, the ops of table whose registry category is
// category. A GPU backend registers the elementwise kernels of each
// category from that category's own file (kernels_<category>.go), so an
// op's kernel is found under the category name it has everywhere else.
func InCategory[E any](table map[string]E, category string) []string {
	var ops []string
	for op := range table {
		if def, ok := core.LookupOp(op); ok && def.Category == category {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	return ops
}
