package parallel

import (
	"math"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cost model against measured steps, a benchmark (speed is never a
// pass/fail test here: a loaded CI machine would make it flaky): on this
// machine's CPU and two worker processes, each plan with an executor is
// run (median of 5 after a warm-up) beside its prediction, for two MLPs
// and a transformer block (sequence, tensor and data parallel), and the
// plan the model chooses against the best measured one. The log is the
// result; docs/perf.md keeps a run of it.
//
//	go test -run '^$' -bench CostModelAgainstMeasuredSteps -benchtime 1x ./auto/parallel
func BenchmarkCostModelAgainstMeasuredSteps(b *testing.B) {
	for b.Loop() {
		costModelAgainstMeasured(b)
	}
}

type benchCase struct {
	name  string
	model Model
	run   func(Plan) (Step, error)
}

func costModelAgainstMeasured(t *testing.B) {
	ws := workers(t, 2)
	c, err := Measure(ws, nil)
	require.NoError(t, err)
	for _, d := range c.Devices {
		t.Logf("device %s: %.1f GFLOP/s (%.1f with every worker busy), %.1f GB/s, %.0f us an op", d.Name, d.GFLOPS, d.SharedGFLOPS, d.GBps, d.OpMicros)
	}
	for _, l := range c.Links {
		t.Logf("link %s-%s: %.2f GB/s (%.2f all at once), %.0f us", l.A, l.B, l.GBps, l.SharedGBps, l.LatencyUs)
	}
	var cases []benchCase
	for _, m := range []MLP{{Rows: 512, Dims: []int{256, 512, 256}}, {Rows: 256, Dims: []int{512, 256}}} {
		model, err := MLPModel(m)
		require.NoError(t, err)
		x, y, w := randomModel(m, 4)
		cases = append(cases, benchCase{name: "mlp " + dimsName(m), model: model,
			run: func(p Plan) (Step, error) { return RunMLPPlan(p, m, ws, x, y, w) }})
	}
	for _, blk := range []Block{{Batch: 2, Seq: 256, Dim: 128, Heads: 4, Hidden: 512}, {Batch: 2, Seq: 1024, Dim: 64, Heads: 4, Hidden: 256}} {
		model, err := BlockModel(blk)
		require.NoError(t, err)
		x, y, w := randomBlock(blk, 4)
		cases = append(cases, benchCase{name: blockName(blk), model: model,
			run: func(p Plan) (Step, error) { return RunBlockPlan(p, blk, ws, x, y, w) }})
	}
	for _, bc := range cases {
		chosen, plans, err := Choose(bc.model, c)
		require.NoError(t, err)
		measured := map[string]float64{}
		for _, p := range plans {
			if !p.Feasible {
				continue
			}
			var ts []float64
			for range 6 {
				s, err := bc.run(p)
				if err != nil {
					break // no executor for this plan
				}
				ts = append(ts, s.Seconds)
			}
			if len(ts) < 6 {
				t.Logf("%s: %s predicted %.2f ms (no executor)", bc.name, p.Name(), 1e3*p.StepSeconds)
				continue
			}
			sort.Float64s(ts[1:])
			got := ts[1+len(ts[1:])/2]
			measured[p.Name()] = got
			t.Logf("%s: %s predicted %.2f ms (compute %.2f, comm %.2f), measured %.2f ms, ratio %.2f",
				bc.name, p.Name(), 1e3*p.StepSeconds, 1e3*p.Compute, 1e3*p.Comm, 1e3*got, got/p.StepSeconds)
		}
		best, bestName := math.Inf(1), ""
		for n, v := range measured {
			if v < best {
				best, bestName = v, n
			}
		}
		t.Logf("%s: chosen %s measured %.2f ms; best measured %s %.2f ms (%.2fx)", bc.name, chosen.Name(), 1e3*measured[chosen.Name()],
			bestName, 1e3*best, measured[chosen.Name()]/best)
	}
}

func dimsName(m MLP) string {
	s := ""
	for i, d := range m.Dims {
		if i > 0 {
			s += "-"
		}
		s += strconv.Itoa(d)
	}
	return strconv.Itoa(m.Rows) + " rows " + s
}

func blockName(b Block) string {
	return "block " + strconv.Itoa(b.Batch) + "x" + strconv.Itoa(b.Seq) + " d" + strconv.Itoa(b.Dim) + " h" + strconv.Itoa(b.Heads) + " ff" + strconv.Itoa(b.Hidden)
}
