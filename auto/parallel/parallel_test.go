package parallel

import (
	"math"
	"math/rand"
	"os"
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

// A plan that does not fit says why.
func TestInfeasiblePlansSayWhy(t *testing.T) {
	c := Cluster{Cores: map[string]int{"h": 2}, Devices: []Device{
		{Name: "proc0", Kind: "process", Host: "h", GFLOPS: 10, MemoryBytes: 1 << 20},
		{Name: "proc1", Kind: "process", Host: "h", GFLOPS: 10, MemoryBytes: 1 << 20}},
		Links: []Link{{A: "parent", B: "proc0", GBps: 1}, {A: "parent", B: "proc1", GBps: 1}}}
	m, err := MLPModel(MLP{Rows: 64, Dims: []int{1024, 1024, 1024}}) // 8 MiB of weights
	require.NoError(t, err)
	_, plans, err := Choose(m, c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs")
	for _, p := range plans {
		assert.False(t, p.Feasible)
		assert.NotEmpty(t, p.Why, p.Name())
	}
	odd, err := MLPModel(MLP{Rows: 63, Dims: []int{8, 8}})
	require.NoError(t, err)
	p := Predict(odd, c, Spec{Strategy: "data", Degree: 2})
	assert.Contains(t, p.Why, "a batch of 63 does not split over 2 devices")
	narrow, err := MLPModel(MLP{Rows: 64, Dims: []int{8, 7, 8}})
	require.NoError(t, err)
	p = Predict(narrow, c, Spec{Strategy: "tensor", Degree: 2})
	assert.Contains(t, p.Why, "tensor parallel: a split width (columns or heads) of 7 does not divide over 2 devices")
	p = Predict(odd, c, Spec{Strategy: "single", Device: "webgpu"})
	assert.Contains(t, p.Why, `no such device "webgpu"`)
	p = Predict(odd, c, Spec{Strategy: "data", Degree: 3})
	assert.Contains(t, p.Why, "degree 3, but the cluster has 2 worker processes")
	p = Predict(odd, c, Spec{Strategy: "sideways", Degree: 2})
	assert.Contains(t, p.Why, `unknown strategy "sideways"`)
}
