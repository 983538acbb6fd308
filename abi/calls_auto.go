//go:build !js

package abi

// The auto-agents' methods as wt_call targets (auto.go, auto_parallel.go):
// each takes its options as an object and returns its report.

var autoCalls = map[string]CallFunc{
	"auto.tune_loader": func(c *CallArgs) func() (any, error) {
		loader, opts := c.Object("loader", "data loader"), c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoTuneLoader(loader, opts)) }
	},
	"auto.tune_graph": func(c *CallArgs) func() (any, error) {
		g, ins, opts := c.Object("graph", "graph"), c.Tensors("inputs"), c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoTuneGraph(g, ins, opts)) }
	},
	"auto.journal": func(c *CallArgs) func() (any, error) {
		opts := c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoJournalJSON(opts)) }
	},
	"auto.rollback": func(c *CallArgs) func() (any, error) {
		opts, id := c.JSON("options", "object (docs/auto.md)"), c.NeedStr("id")
		return func() (any, error) { return autoRollback(opts, id) } // the rollback record's id, a string
	},
	"auto.parallel_plan": func(c *CallArgs) func() (any, error) {
		g, opts := c.Object("graph", "graph"), c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoParallelPlan(g, opts)) }
	},
}
