package ir

import (
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// hostMeter is a CPU host allocator that counts the bytes held: with the
// garbage collector off, memory comes back only through Release, so the
// peak it sees during a run is what the run's releasing achieves.
type hostMeter struct {
	mu                 sync.Mutex
	live, peak, frees  int64
	allocs, freedBytes int64
}

func (m *hostMeter) alloc(n int) (cpu.HostMemory, error) {
	var mem []byte
	if n > 0 {
		words := make([]uint64, (n+7)/8)
		mem = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
	} else {
		mem = []byte{}
	}
	m.mu.Lock()
	m.live += int64(n)
	m.peak = max(m.peak, m.live)
	m.allocs++
	m.mu.Unlock()
	return cpu.HostMemory{Mem: mem, Free: func() {
		m.mu.Lock()
		m.live -= int64(n)
		m.frees++
		m.freedBytes += int64(n)
		m.mu.Unlock()
	}}, nil
}

// measure runs fn with the meter installed and the GC off and returns the
// peak bytes held above what was held when it started, and the frees.
func (m *hostMeter) measure(fn func()) (peak, frees int64) {
	m.mu.Lock()
	base, f0 := m.live, m.frees
	m.peak = m.live
	m.mu.Unlock()
	fn()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak - base, m.frees - f0
}

func withMeter(t *testing.T) *hostMeter {
	m := &hostMeter{}
	// The CPU backend's cache would keep released blocks instead of
	// freeing them: the meter counts what the graph allocates and frees.
	limit := cpu.SetCacheLimit(0)
	cpu.SetHostAllocator(m.alloc)
	gc := debug.SetGCPercent(-1)
	t.Cleanup(func() {
		cpu.SetHostAllocator(nil)
		cpu.SetCacheLimit(limit)
		debug.SetGCPercent(gc)
	})
	return m
}

func traceModel(t *testing.T, model string) (*Graph, *core.Tensor) {
	t.Helper()
	core.ManualSeed(3)
	dev := nn.WithDevice(core.CPU)
	var fwd func(*core.Tensor) *core.Tensor
	var x *core.Tensor
	switch model {
	case "mlp":
		l1, _ := nn.NewLinear(64, 256, dev)
		l2, _ := nn.NewLinear(256, 256, dev)
		l3, _ := nn.NewLinear(256, 10, dev)
		m, err := nn.NewSequential(l1, &nn.ReLU{}, l2, &nn.ReLU{}, l3)
		require.NoError(t, err)
		fwd, x = m.Forward, c1("randn", core.Attrs{"shape": []int{128, 64}, "device": "cpu"})
	case "transformer":
		l, err := nn.NewTransformerEncoderLayer(64, 4, 256, dev, nn.WithBatchFirst())
		require.NoError(t, err)
		l.Train(false)
		fwd, x = l.Forward, c1("randn", core.Attrs{"shape": []int{8, 32, 64}, "device": "cpu"})
	}
	g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{fwd(in[0])}, nil }, x)
	require.NoError(t, err)
	_, err = g.OptimizeStats()
	require.NoError(t, err)
	return g, x
}

// The peak bytes a model's graph holds while it runs, with intermediates
// released after their last use against kept to the end: what the static
// plan predicts and what the CPU allocator sees, results unchanged.
func TestMemoryPlanLowersThePeakOfModelGraphs(t *testing.T) {
	for _, model := range []string{"mlp", "transformer"} {
		g, x := traceModel(t, model)
		plan := g.MemoryPlan()
		assert.Less(t, plan.Peak, plan.Allocated, model)
		freed := 0
		for _, vs := range plan.FreeAfter {
			freed += len(vs)
		}
		assert.Positive(t, freed, model)

		m := withMeter(t)
		core.EnterNoGrad() // inference: the parameters require gradients
		var kept, released []*core.Tensor
		g.KeepIntermediates = true
		keptPeak, keptFrees := m.measure(func() {
			var err error
			kept, err = g.Run(x)
			require.NoError(t, err)
		})
		g.KeepIntermediates = false
		relPeak, relFrees := m.measure(func() {
			var err error
			released, err = g.Run(x)
			require.NoError(t, err)
		})
		require.NoError(t, core.ExitNoGrad())
		t.Logf("%s: %d nodes; plan: peak %s released vs %s allocated; measured on the CPU: peak %s released (%d frees) vs %s kept",
			model, len(g.Nodes), byteSize(plan.Peak), byteSize(plan.Allocated), byteSize(relPeak), relFrees, byteSize(keptPeak))
		assert.Equal(t, plan.Peak, relPeak, "%s: the plan predicts the peak", model)
		assert.Equal(t, plan.Allocated, keptPeak, "%s: and what a run allocates", model)
		assert.Zero(t, keptFrees, "KeepIntermediates releases nothing")
		assert.Positive(t, relFrees)
		assert.Less(t, relPeak, keptPeak, model)
		assert.Equal(t, values(t, kept[0]), values(t, released[0]), "%s: releasing changes no result", model)
	}
}

// While autograd records (here: the parameters require gradients), Run
// releases nothing, and backward through the run works.
func TestRunReleasesNothingWhileAutogradRecords(t *testing.T) {
	g, x := traceModel(t, "mlp")
	m := withMeter(t)
	var out []*core.Tensor
	_, frees := m.measure(func() {
		var err error
		out, err = g.Run(x)
		require.NoError(t, err)
	})
	assert.Zero(t, frees)
	require.True(t, out[0].RequiresGrad())
	require.NoError(t, c1("sum", nil, out[0]).Backward())
}

// Views: an output that is a view of an intermediate, and intermediates
// that are views of an input, keep their storage; a chain of ops frees as
// it goes.
func TestRunNeverReleasesStorageAnOutputOrInputSees(t *testing.T) {
	program := func(in []*core.Tensor) ([]*core.Tensor, error) {
		x := in[0]
		v := c1("reshape", core.Attrs{"shape": []int{4, 3}}, x) // a view of the input
		a := c1("exp", nil, c1("transpose", nil, v))
		b := c1("sin", nil, a)
		c := c1("cos", nil, b)
		out := c1("reshape", core.Attrs{"shape": []int{12}}, c) // a view of an intermediate
		s := c1("slice", core.Attrs{"axis": 0, "start": 1, "stop": 3}, a)
		return []*core.Tensor{out, c1("sum", nil, s), v}, nil
	}
	g, err := Trace(program, randn(1, 3, 4))
	require.NoError(t, err)
	plan := g.MemoryPlan()
	assert.Contains(t, plan.String(), "free %", plan)
	x := randn(2, 3, 4)
	want, _ := program([]*core.Tensor{x})
	m := withMeter(t)
	var got []*core.Tensor
	_, frees := m.measure(func() {
		got, err = g.Run(x)
		require.NoError(t, err)
	})
	assert.Positive(t, frees, "exp and sin's buffers go")
	for i := range want {
		assert.Equal(t, values(t, want[i]), values(t, got[i]), "output %d", i)
	}
	assert.Equal(t, values(t, randn(2, 3, 4)), values(t, x), "the input is intact")
}

// A loop releases the carried values of each iteration once the next has
// used them: the peak does not grow with the number of iterations.
func TestLoopReleasesCarriedValuesBetweenIterations(t *testing.T) {
	w := randn(1, 64, 64)
	steps := func(n int) *Graph {
		g, err := Trace(rnn(n, w), randn(2, 32, 64), randn(3, 32, 64))
		require.NoError(t, err)
		return g
	}
	short, long := steps(2), steps(40)
	x, h := randn(4, 32, 64), randn(5, 32, 64)
	m := withMeter(t)
	peak := func(g *Graph) int64 {
		p, _ := m.measure(func() {
			_, err := g.Run(x, h)
			require.NoError(t, err)
		})
		return p
	}
	shortPeak, longPeak := peak(short), peak(long)
	long.KeepIntermediates = true
	keptPeak := peak(long)
	t.Logf("rnn peak: 2 steps %s, 40 steps %s released, 40 steps %s kept", byteSize(shortPeak), byteSize(longPeak), byteSize(keptPeak))
	assert.Equal(t, shortPeak, longPeak)
	assert.Greater(t, keptPeak, 10*longPeak)
	want, _ := rnnUnrolled(40, w)([]*core.Tensor{x, h})
	long.KeepIntermediates = false
	got, err := long.Run(x, h)
	require.NoError(t, err)
	assert.Equal(t, values(t, want[0]), values(t, got[0]))
}

// On WebGPU, released buffers go back to the device's pool (when the work
// queued so far is submitted: here, when a run's result is read): a graph
// run that releases its intermediates takes the buffers of the run before
// from the pool instead of creating new ones. With the GC off, a dropped
// tensor's buffer never comes back, as when the GC has not come round yet.
func TestWebGPUReusesReleasedBuffers(t *testing.T) {
	dev := webgpuOrSkip(t)
	b, err := core.BackendFor(dev)
	require.NoError(t, err)
	pool, ok := b.(interface {
		PoolStats() (reused, created int64)
	})
	require.True(t, ok, "the WebGPU backend reports its pool")
	core.ManualSeed(3)
	l, err := nn.NewTransformerEncoderLayer(64, 4, 256, nn.WithDevice(dev), nn.WithBatchFirst())
	require.NoError(t, err)
	l.Train(false)
	x := c1("randn", core.Attrs{"shape": []int{8, 32, 64}, "device": dev.String()})
	core.EnterNoGrad()
	defer func() { require.NoError(t, core.ExitNoGrad()) }()
	g, err := Trace(func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{l.Forward(in[0])}, nil }, x)
	require.NoError(t, err)
	_, err = g.OptimizeStats()
	require.NoError(t, err)
	gc := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(gc)
	runs := func(keep bool) (reused, created int64, out []float64) {
		g.KeepIntermediates = keep
		r0, c0 := pool.PoolStats()
		for range 5 {
			outs, err := g.Run(x)
			require.NoError(t, err)
			out = values(t, outs[0]) // submits the queued work and waits for it
			outs[0].Release()
		}
		r1, c1 := pool.PoolStats()
		return r1 - r0, c1 - c0, out
	}
	runs(false) // warm up: kernels compiled, the pool filled
	relReused, relCreated, released := runs(false)
	keptReused, keptCreated, kept := runs(true)
	t.Logf("transformer layer on %s, 5 runs: released intermediates -> %d buffers reused, %d created; kept -> %d reused, %d created",
		dev, relReused, relCreated, keptReused, keptCreated)
	assert.Equal(t, kept, released)
	assert.Greater(t, keptCreated, int64(4*10), "after the first run, about one new buffer per intermediate")
	assert.Less(t, relCreated, keptCreated/4)
	assert.Greater(t, relReused, keptReused)
}
