package auto

import (
	"github.com/webtensor/webtensor/auto/parallel"
	"github.com/webtensor/webtensor/core/ir"
)

// PlanParallel is auto-parallel (package parallel): for a traced forward
// pass and a cluster (parallel.Measure describes this machine), the
// chosen data, tensor, pipeline, sequence or single-device plan and every
// candidate priced, with the reasons for the infeasible ones.
func PlanParallel(g *ir.Graph, c parallel.Cluster, paramInputs ...int) (parallel.Report, error) {
	return parallel.PlanGraph(g, c, paramInputs...)
}
