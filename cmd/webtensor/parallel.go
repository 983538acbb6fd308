package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/auto/parallel"
	"github.com/webtensor/webtensor/core"
)

type parallelFlags struct {
	model, cluster                 string
	batch, seq, dim, heads, hidden int
	dims                           []int
	workers, runs                  int
	webgpu, asJSON, run            bool
}

// autoParallelCmd is auto-parallel on a built-in model: the cluster is
// measured here (the CPU, WebGPU when asked, worker processes of this
// program) or read from a file, and --run executes every plan that has an
// executor beside its prediction.
func autoParallelCmd() *cobra.Command {
	var f parallelFlags
	cmd := &cobra.Command{
		Use:   "parallel",
		Short: "Choose data, tensor, pipeline or sequence parallelism for a model from a cost model",
		Long: `parallel prices a training step of a model under every plan the cluster allows -
one device in this process (cpu, webgpu), or worker processes under data, tensor
(Megatron: columns then rows, an all-reduce each), sequence (positions split, the
K and V of attention gathered) or pipeline parallel (GPipe micro-batches) - from
the traced graph's FLOPs, bytes, parameters and exchanges and the cluster's
measured rates, and prints them fastest first with the reason each infeasible
one does not fit. The model is a built-in transformer block (attention + ReLU
MLP) or an MLP; the cluster is measured on this machine (--workers processes of
this program over pipes, the CPU, the WebGPU device with --webgpu) or read from
--cluster (JSON: "devices" with name, kind cpu|webgpu|process, gflops, gbps,
memory_bytes; "links" from "parent" to each process). --run measures each plan
that has an executor (median of --runs steps) beside its prediction. The
library's call is auto.parallel_plan; Python's wt.auto.plan_parallel.`,
		Example: `  webtensor auto parallel
  webtensor auto parallel --model block --batch 2 --seq 128 --dim 64 --heads 4 --run
  webtensor auto parallel --model mlp --batch 512 --dims 256,512,256 --workers 2 --json
  webtensor auto parallel --cluster cluster.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAutoParallel(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "block", "block (a transformer block) or mlp")
	fl.IntVar(&f.batch, "batch", 4, "sequences (block) or rows (mlp)")
	fl.IntVar(&f.seq, "seq", 64, "positions per sequence (block)")
	fl.IntVar(&f.dim, "dim", 64, "model width (block)")
	fl.IntVar(&f.heads, "heads", 4, "attention heads (block)")
	fl.IntVar(&f.hidden, "hidden", 256, "the MLP's width (block)")
	fl.IntSliceVar(&f.dims, "dims", []int{256, 512, 256}, "layer widths, input first (mlp)")
	fl.StringVar(&f.cluster, "cluster", "", "a cluster description (JSON file) instead of measuring this machine")
	fl.IntVar(&f.workers, "workers", 2, "worker processes to start and measure")
	fl.BoolVar(&f.webgpu, "webgpu", false, "measure the WebGPU device too")
	fl.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	fl.BoolVar(&f.run, "run", false, "run each plan that has an executor and print what it measured")
	fl.IntVar(&f.runs, "runs", 5, "steps per plan with --run (the median is printed)")
	return cmd
}

func runAutoParallel(cmd *cobra.Command, f parallelFlags) error {
	var m parallel.Model
	var err error
	block, mlp := parallel.Block{Batch: f.batch, Seq: f.seq, Dim: f.dim, Heads: f.heads, Hidden: f.hidden}, parallel.MLP{Rows: f.batch, Dims: f.dims}
	switch f.model {
	case "block":
		m, err = parallel.BlockModel(block)
	case "mlp":
		m, err = parallel.MLPModel(mlp)
	default:
		return fail("auto parallel: --model is block or mlp, got %q", f.model)
	}
	if err != nil {
		return err
	}
	var ws []*parallel.Worker
	if f.cluster != "" && f.run {
		return fail("auto parallel: --run measures this machine's plans; it cannot run a described --cluster")
	}
	if f.cluster == "" && (f.workers > 0) {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		if ws, err = parallel.StartWorkers(f.workers, exe); err != nil {
			return err
		}
		defer parallel.StopWorkers(ws)
	}
	c, err := loadOrMeasureCluster(f, ws)
	if err != nil {
		return err
	}
	r, err := parallel.PlanModel(m, c)
	if err != nil && r.Candidates == nil {
		return err
	}
	measured := map[string]float64{}
	if f.run {
		x, y, w := randomInputs(f, block, mlp)
		for _, p := range r.Candidates {
			if !p.Feasible {
				continue
			}
			var ts []float64
			for range max(f.runs, 1) {
				var s parallel.Step
				var err error
				if f.model == "block" {
					s, err = parallel.RunBlockPlan(p, block, ws, x, y, w)
				} else {
					s, err = parallel.RunMLPPlan(p, mlp, ws, x, y, w)
				}
				if err != nil {
					break // no executor for this plan
				}
				ts = append(ts, s.Seconds)
			}
			if len(ts) > 0 {
				sort.Float64s(ts)
				measured[p.Name()] = ts[len(ts)/2]
			}
		}
	}
	out := cmd.OutOrStdout()
	if f.asJSON {
		b, err := json.MarshalIndent(struct {
			parallel.Report
			Measured map[string]float64 `json:"measured_seconds,omitempty"`
		}{r, measured}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(out, string(b))
		return nil
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "plan\tpredicted ms\tcompute ms\tcomm ms\tmemory MiB\tmeasured ms\tnote")
	for _, p := range r.Candidates {
		got, note := "", p.Why
		if v, ok := measured[p.Name()]; ok {
			got = fmt.Sprintf("%.2f", 1e3*v)
		}
		if r.Chosen != nil && p.Name() == r.Chosen.Name() {
			note = "chosen"
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.1f\t%s\t%s\n", p.Name(), 1e3*p.StepSeconds, 1e3*p.Compute, 1e3*p.Comm, float64(p.MemoryBytes)/(1<<20), got, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Chosen == nil {
		return fail("auto parallel: %s", r.Error)
	}
	return nil
}

func loadOrMeasureCluster(f parallelFlags, ws []*parallel.Worker) (parallel.Cluster, error) {
	if f.cluster != "" {
		var c parallel.Cluster
		b, err := os.ReadFile(f.cluster)
		if err != nil {
			return c, err
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return c, fail("auto parallel: reading the cluster %s: %v", f.cluster, err)
		}
		return c, c.Validate()
	}
	var gpu *core.Device
	if f.webgpu {
		gpu = &core.Device{Kind: "webgpu"}
	}
	return parallel.Measure(ws, gpu)
}

// randomInputs are a step's input, target and weights for the model.
func randomInputs(f parallelFlags, b parallel.Block, m parallel.MLP) (x, y []float32, ws [][]float32) {
	rng := rand.New(rand.NewSource(1))
	r := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.1)
		}
		return v
	}
	if f.model == "block" {
		for _, s := range b.Shapes() {
			ws = append(ws, r(s.Numel()))
		}
		return r(b.Batch * b.Seq * b.Dim), r(b.Batch * b.Seq * b.Dim), ws
	}
	for l := range len(m.Dims) - 1 {
		ws = append(ws, r(m.Dims[l]*m.Dims[l+1]))
	}
	return r(m.Rows * m.Dims[0]), r(m.Rows * m.Dims[len(m.Dims)-1]), ws
}
