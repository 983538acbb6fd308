//go:build !js

package abi

import (
	"encoding/json"

	"github.com/webtensor/webtensor/auto/parallel"
	"github.com/webtensor/webtensor/core"
)

// parallelOptions are auto.parallel_plan's options: a cluster
// description, or what to measure on this machine (the CPU always, the
// WebGPU device when asked, and worker processes of worker_exe, a
// program that serves as a worker when WEBTENSOR_PARALLEL_WORKER=1 - the
// webtensor CLI does; a library cannot start itself).
type parallelOptions struct {
	Cluster     *parallel.Cluster `json:"cluster,omitempty"`
	Workers     int               `json:"workers,omitempty"`
	WorkerExe   string            `json:"worker_exe,omitempty"`
	WebGPU      bool              `json:"webgpu,omitempty"`
	ParamInputs []int             `json:"param_inputs,omitempty"`
}

// autoParallelPlan is auto.parallel_plan: auto-parallel's report (the
// chosen plan, every candidate priced, reasons for infeasible ones) for a
// traced forward pass. No feasible plan is an answer, not an error: the
// report's "chosen" is null and "error" says why.
func autoParallelPlan(h int64, options string) (string, error) {
	const fn = "auto.parallel_plan"
	g, err := graphOf(h)
	if err != nil {
		return "", err
	}
	var o parallelOptions
	if err := decodeJSON(fn, "options", options, &o); err != nil {
		return "", err
	}
	c, err := o.cluster(fn)
	if err != nil {
		return "", err
	}
	r, err := parallel.PlanGraph(g, c, o.ParamInputs...)
	if err != nil && r.Candidates == nil {
		return "", Invalidf("%s: %v", fn, err)
	}
	b, err := json.Marshal(r)
	return string(b), err
}

func (o parallelOptions) cluster(fn string) (parallel.Cluster, error) {
	switch {
	case o.Cluster != nil && (o.Workers != 0 || o.WebGPU || o.WorkerExe != ""):
		return parallel.Cluster{}, Invalidf("%s: the options give a cluster and ask to measure one (workers %d, webgpu %v, worker_exe %q): one or the other",
			fn, o.Workers, o.WebGPU, o.WorkerExe)
	case o.Cluster != nil:
		return *o.Cluster, nil
	case o.Workers < 0:
		return parallel.Cluster{}, Invalidf("%s: workers %d is negative", fn, o.Workers)
	case o.Workers > 0 && o.WorkerExe == "":
		return parallel.Cluster{}, Invalidf("%s: measuring %d worker processes needs worker_exe, a program that serves as a worker (the webtensor CLI does)", fn, o.Workers)
	}
	var ws []*parallel.Worker
	if o.Workers > 0 {
		var err error
		if ws, err = parallel.StartWorkers(o.Workers, o.WorkerExe); err != nil {
			return parallel.Cluster{}, Errorf(StatusIO, "%s: %v", fn, err)
		}
		defer parallel.StopWorkers(ws)
	}
	var gpu *core.Device
	if o.WebGPU {
		gpu = &core.Device{Kind: "webgpu"}
	}
	c, err := parallel.Measure(ws, gpu)
	if err != nil {
		return c, Invalidf("%s: measuring the cluster: %v", fn, err)
	}
	return c, nil
}
