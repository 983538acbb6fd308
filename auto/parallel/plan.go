package parallel

import (
	"github.com/webtensor/webtensor/core/ir"
)

// Report is auto-parallel's answer for a graph on a cluster: the chosen
// plan (nil where none is feasible; Error says why), every plan priced,
// fastest feasible first, each infeasible one with its reason, and what
// the cost model read from the graph.
type Report struct {
	Chosen     *Plan        `json:"chosen"`
	Candidates []Plan       `json:"candidates"`
	Model      ModelSummary `json:"model"`
	Cluster    Cluster      `json:"cluster"`
	Error      string       `json:"error,omitempty"`
}

// ModelSummary is a Model without its per-node costs.
type ModelSummary struct {
	FLOPs           float64    `json:"forward_flops"`
	ParamBytes      float64    `json:"param_bytes"`
	ActBytes        float64    `json:"activation_bytes"`
	Batch           int        `json:"batch"`
	Seq             int        `json:"seq"`
	Nodes           int        `json:"nodes"`
	Exchanges       []Exchange `json:"sequence_exchanges"`
	TensorAllReduce []float64  `json:"tensor_all_reduce_bytes"`
}

// PlanGraph is auto-parallel on a traced forward pass: Analyze, then
// every plan of Specs(c) priced (Predict) and the fastest feasible one
// chosen. paramInputs are graph inputs that are parameters (Analyze).
// The error is the graph's or the cluster's (the report is then empty),
// or that no plan is feasible (the report says why for each).
func PlanGraph(g *ir.Graph, c Cluster, paramInputs ...int) (Report, error) {
	m, err := Analyze(g, paramInputs...)
	if err != nil {
		return Report{}, err
	}
	return PlanModel(m, c)
}

// PlanModel is PlanGraph on a model already analysed.
func PlanModel(m Model, c Cluster) (Report, error) {
	if err := c.Validate(); err != nil {
		return Report{}, err
	}
	r := Report{Cluster: c, Model: ModelSummary{FLOPs: m.FLOPs, ParamBytes: m.ParamBytes, ActBytes: m.ActBytes, Batch: m.Batch,
		Seq: m.Seq, Nodes: len(m.Nodes), Exchanges: m.Exchanges, TensorAllReduce: m.Tensor.AllReduceBytes}}
	if r.Model.Exchanges == nil {
		r.Model.Exchanges = []Exchange{}
	}
	if r.Model.TensorAllReduce == nil {
		r.Model.TensorAllReduce = []float64{}
	}
	chosen, all, err := Choose(m, c)
	r.Candidates = all
	if r.Candidates == nil {
		r.Candidates = []Plan{}
	}
	if err != nil {
		r.Error = err.Error()
		return r, err
	}
	r.Chosen = &chosen
	return r, nil
}
