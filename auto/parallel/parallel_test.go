package parallel

import (
	"math"
	"math/rand"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

func TestMain(m *testing.M) {
	ServeIfWorker() // this binary is also the workers
	os.Exit(m.Run())
}

func workers(t testing.TB, n int) []*Worker {
	t.Helper()
	ws, err := StartWorkers(n, os.Args[0], "-test.run", "^$")
	require.NoError(t, err)
	t.Cleanup(func() { StopWorkers(ws) })
	return ws
}

func randomModel(m MLP, seed int64) (x, y []float32, ws [][]float32) {
	rng := rand.New(rand.NewSource(seed))
	r := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		return v
	}
	x, y = r(m.Rows*m.Dims[0], 1), r(m.Rows*m.Dims[len(m.Dims)-1], 1)
	for l := range len(m.Dims) - 1 {
		ws = append(ws, r(m.Dims[l]*m.Dims[l+1], 1/math.Sqrt(float64(m.Dims[l]))))
	}
	return
}

func assertClose(t *testing.T, want, got []float32, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	worst := 0.0
	for i := range want {
		worst = max(worst, math.Abs(float64(want[i]-got[i]))/(1+math.Abs(float64(want[i]))))
	}
	assert.LessOrEqual(t, worst, 1e-4, "%s: worst relative difference %g", what, worst)
}

// Data, tensor and pipeline parallel steps on worker processes give the
// single-device step's output, loss and gradients (f32: different
// summation orders, 1e-4 relative).
func TestExecutorsMatchOneDevice(t *testing.T) {
	ws := workers(t, 3)
	for _, m := range []MLP{{Rows: 24, Dims: []int{16, 32, 8}}, {Rows: 24, Dims: []int{16, 32, 24, 8}}} {
		x, y, w := randomModel(m, 3)
		ref, err := RunSingle(m, core.Device{Kind: "cpu"}, x, y, w)
		require.NoError(t, err)
		check := func(name string, s Step, err error) {
			require.NoError(t, err, name)
			assertClose(t, ref.Out, s.Out, name+" output")
			assert.InDelta(t, ref.Loss, s.Loss, 1e-4*ref.Loss, name+" loss")
			for l := range w {
				assertClose(t, ref.Grads[l], s.Grads[l], name+" gradient")
			}
		}
		s, err := RunDP(m, ws[:2], x, y, w)
		check("data", s, err)
		s, err = RunDP(m, ws, x, y, w)
		check("data x3", s, err)
		s, err = RunPP(m, ws, 4, x, y, w)
		check("pipeline", s, err)
		if len(w) == 2 {
			s, err = RunTP(m, ws[:2], x, y, w)
			check("tensor", s, err)
		}
	}
}

// The cost model against measured steps, a benchmark (speed is never a
// pass/fail test here: a loaded CI machine would make it flaky): on this
// machine's two worker processes, each runnable plan's measured step
// (median of 5) against its prediction, reported and flagged when off by
// more than 4x, and the plan the model chooses against the best measured
// one, flagged past 1.5x. Why 4 and not 2: on the loaded 2-core machine
// the model underpredicts every plan by 1.5-3.9x (this benchmark's log):
// it prices the pipes by one echo's bandwidth and not gob's per-message
// encoding, the parent's own work (splitting, loss, sums) competes with
// the workers for the two cores, and other jobs take a share that varies
// by the second. The ranking survives that, which is what choosing a plan
// needs; the absolute factor is what this machine can show.
//
//	go test -run '^$' -bench CostModelAgainstMeasuredSteps -benchtime 1x ./auto/parallel
func BenchmarkCostModelAgainstMeasuredSteps(b *testing.B) {
	for b.Loop() {
		costModelAgainstMeasured(b)
	}
}

func costModelAgainstMeasured(t *testing.B) {
	ws := workers(t, 2)
	c, err := Measure(ws, nil)
	require.NoError(t, err)
	for _, d := range c.Devices {
		t.Logf("device %s: %.1f GFLOP/s, %.1f GB/s", d.Name, d.GFLOPS, d.GBps)
	}
	for _, l := range c.Links {
		t.Logf("link %s-%s: %.2f GB/s, %.0f us", l.A, l.B, l.GBps, l.LatencyUs)
	}
	for _, m := range []MLP{{Rows: 512, Dims: []int{256, 512, 256}}, {Rows: 256, Dims: []int{512, 256}}} {
		x, y, w := randomModel(m, 4)
		chosen, plans, err := Choose(m, c)
		require.NoError(t, err)
		measured := map[string]float64{}
		for _, p := range plans {
			if !p.Feasible {
				continue
			}
			run := func() (Step, error) {
				switch p.Strategy {
				case "single":
					return RunDP(m, ws[:1], x, y, w)
				case "data", "sequence":
					return RunDP(m, ws[:p.Degree], x, y, w)
				case "tensor":
					return RunTP(m, ws[:p.Degree], x, y, w)
				}
				return RunPP(m, ws, p.Micro, x, y, w)
			}
			var ts []float64
			for range 6 {
				s, err := run()
				require.NoError(t, err, p.Strategy)
				ts = append(ts, s.Seconds)
			}
			sort.Float64s(ts[1:])
			got := ts[1+len(ts[1:])/2]
			name := p.Strategy + string(rune('0'+p.Degree)) + string(rune('0'+p.Micro))
			measured[name] = got
			ratio := got / p.StepSeconds
			t.Logf("dims %v rows %d: %s degree %d micro %d: predicted %.2f ms (compute %.2f, comm %.2f), measured %.2f ms, ratio %.2f",
				m.Dims, m.Rows, p.Strategy, p.Degree, p.Micro, 1e3*p.StepSeconds, 1e3*p.Compute, 1e3*p.Comm, 1e3*got, ratio)
			if ratio <= 1.0/4 || ratio >= 4 {
				t.Errorf("%s: predicted %.2f ms, measured %.2f ms: off by more than 4x", name, 1e3*p.StepSeconds, 1e3*got)
			}
		}
		best := math.Inf(1)
		for _, v := range measured {
			best = min(best, v)
		}
		got := measured[chosen.Strategy+string(rune('0'+chosen.Degree))+string(rune('0'+chosen.Micro))]
		t.Logf("chosen %s (degree %d): measured %.2f ms, best measured %.2f ms", chosen.Strategy, chosen.Degree, 1e3*got, 1e3*best)
		if got > 1.5*best {
			t.Errorf("the chosen plan measured %.2f ms, more than 1.5x the best, %.2f ms", 1e3*got, 1e3*best)
		}
	}
}

// A plan that does not fit says why.
func TestInfeasiblePlansSayWhy(t *testing.T) {
	c := Cluster{Cores: map[string]int{"h": 2}, Devices: []Device{
		{Name: "proc0", Kind: "process", Host: "h", GFLOPS: 10, MemoryBytes: 1 << 20},
		{Name: "proc1", Kind: "process", Host: "h", GFLOPS: 10, MemoryBytes: 1 << 20}},
		Links: []Link{{A: "parent", B: "proc0", GBps: 1}, {A: "parent", B: "proc1", GBps: 1}}}
	m := MLP{Rows: 64, Dims: []int{1024, 1024, 1024}} // 8 MiB of weights
	_, plans, err := Choose(m, c)
	require.Error(t, err)
	for _, p := range plans {
		assert.False(t, p.Feasible)
		assert.NotEmpty(t, p.Why, p.Strategy)
	}
	p := Predict(MLP{Rows: 63, Dims: []int{8, 8}}, c, "data", 2, 0)
	assert.Contains(t, p.Why, "do not split")
}
