//go:build !js

package abi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/auto/parallel"
)

// twoWorkers is a cluster description of a CPU and two worker processes.
const twoWorkers = `{"cores": {"h": 2}, "devices": [
  {"name": "cpu", "kind": "cpu", "host": "h", "gflops": 40, "gbps": 10, "memory_bytes": 1000000000, "op_us": 5},
  {"name": "proc0", "kind": "process", "host": "h", "gflops": 20, "shared_gflops": 15, "gbps": 10, "memory_bytes": 500000000},
  {"name": "proc1", "kind": "process", "host": "h", "gflops": 20, "shared_gflops": 15, "gbps": 10, "memory_bytes": 500000000}],
 "links": [{"a": "parent", "b": "proc0", "gbps": 1, "latency_us": 50}, {"a": "parent", "b": "proc1", "gbps": 1, "latency_us": 50}]}`

// matmulGraph traces x @ w, w a constant (so a parameter), x [8 16].
func matmulGraph(t *testing.T) int64 {
	t.Helper()
	x := f32Tensor(t, []int64{8, 16}, make([]float32, 128)...)
	w := f32Tensor(t, []int64{16, 32}, make([]float32, 512)...)
	t.Cleanup(func() { TensorFree(x); TensorFree(w) })
	require.NoError(t, TraceBegin([]int64{x}))
	outs, err := Op("matmul", []int64{x, w}, nil, false)
	require.NoError(t, err)
	y := make([]int64, 1)
	outs.Handles(y)
	t.Cleanup(func() { TensorFree(y[0]) })
	g, err := TraceEnd(y)
	require.NoError(t, err)
	t.Cleanup(func() { GraphFree(g) })
	return g
}

// auto.parallel_plan prices a traced graph on a described cluster and
// returns the report as JSON that decodes into parallel.Report: a chosen
// plan, every candidate, reasons for the infeasible ones.
func TestAutoParallelPlan(t *testing.T) {
	g := matmulGraph(t)
	out, err := autoParallelPlan(g, `{"cluster": `+twoWorkers+`}`)
	require.NoError(t, err)
	var r parallel.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotNil(t, r.Chosen)
	assert.True(t, r.Chosen.Feasible)
	assert.Equal(t, 8, r.Model.Batch)
	assert.Equal(t, float64(4*16*32), r.Model.ParamBytes)
	names := map[string]parallel.Plan{}
	for _, p := range r.Candidates {
		names[p.Name()] = p
		assert.Greater(t, p.StepSeconds+boolToFloat(!p.Feasible), 0.0, p.Name())
	}
	for _, n := range []string{"single cpu", "data x2", "tensor x2", "sequence x2", "pipeline x2 m8"} {
		assert.Contains(t, names, n)
	}
	assert.False(t, names["pipeline x2 m8"].Feasible)
	assert.NotEmpty(t, names["pipeline x2 m8"].Why)

	// Nothing fits: a report with reasons, not an error.
	small := `{"devices": [{"name": "cpu", "kind": "cpu", "gflops": 1, "gbps": 1, "memory_bytes": 100}]}`
	out, err = autoParallelPlan(g, `{"cluster": `+small+`}`)
	require.NoError(t, err)
	r = parallel.Report{}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Nil(t, r.Chosen)
	assert.Contains(t, r.Error, "needs")
	assert.Contains(t, r.Candidates[0].Why, "on a device that holds 100")

	// Measured here: the CPU, no workers.
	out, err = autoParallelPlan(g, `{}`)
	require.NoError(t, err)
	r = parallel.Report{}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotNil(t, r.Chosen)
	assert.Equal(t, "single cpu", r.Chosen.Name())
}

func boolToFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Bad input says what is wrong.
func TestAutoParallelPlanErrors(t *testing.T) {
	g := matmulGraph(t)
	_, err := autoParallelPlan(987654, `{}`)
	assert.Equal(t, StatusHandle, StatusOf(err))
	for opts, want := range map[string]string{
		`{"clustr": {}}`: `unknown field "clustr"`,
		`{"cluster": ` + twoWorkers + `, "workers": 2}`: "one or the other",
		`{"workers": 2}`:               "needs worker_exe",
		`{"workers": -1}`:              "workers -1 is negative",
		`{"cluster": {"devices": []}}`: "the cluster has no devices",
		`{"cluster": {"devices": [{"name": "cpu", "kind": "cpu", "gflops": 0, "gbps": 1, "memory_bytes": 1}]}}`:   "device cpu needs positive gflops",
		`{"cluster": {"devices": [{"name": "tpu", "kind": "tpu", "gflops": 1, "gbps": 1, "memory_bytes": 1}]}}`:   `device tpu is a "tpu"`,
		`{"cluster": {"devices": [{"name": "p", "kind": "process", "gflops": 1, "gbps": 1, "memory_bytes": 1}]}}`: "no link to p",
		`{"cluster": ` + twoWorkers + `, "param_inputs": [4]}`:                                                    "parameter input 4, but the graph has 1 inputs",
	} {
		_, err := autoParallelPlan(g, opts)
		assert.Equal(t, StatusInvalid, StatusOf(err), opts)
		assert.ErrorContains(t, err, want, opts)
	}
}
