//go:build !js

package abi

// The auto-agents' methods as wt_call targets (auto.go, auto_parallel.go):
// each takes its options as an object and returns its report.

var autoCalls = map[string]method{
	"auto.tune_loader": {`object: the tune's report ("decisions" sums each one up)`, func(c *CallArgs) func() (any, error) {
		loader, opts := c.Object("loader", "data loader"), c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoTuneLoader(loader, opts)) }
	}},
	"auto.tune_graph": {`object: the tune's report ("decisions" sums each one up)`, func(c *CallArgs) func() (any, error) {
		g, ins, opts := c.Object("graph", "graph"), c.Tensors("inputs"), c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoTuneGraph(g, ins, opts)) }
	}},
	"auto.journal": {"list of the journal's records, oldest first", func(c *CallArgs) func() (any, error) {
		opts := c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoJournalJSON(opts)) }
	}},
	"auto.rollback": {"string: the rollback record's id", func(c *CallArgs) func() (any, error) {
		opts, id := c.JSON("options", "object (docs/auto.md)"), c.NeedStr("id")
		return func() (any, error) { return autoRollback(opts, id) } // the rollback record's id, a string
	}},
	"auto.parallel_plan": {`object: "chosen" (null when no plan is feasible, "error" then says why), "candidates", "model", "cluster"`, func(c *CallArgs) func() (any, error) {
		g, opts := c.Object("graph", "graph"), c.JSON("options", "object (docs/auto.md)")
		return func() (any, error) { return rawJSON(autoParallelPlan(g, opts)) }
	}},
}
