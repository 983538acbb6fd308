package plugins

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

// The pool of instances per plugin: concurrent calls run on instances of
// their own, up to the cap, and a broken instance never serves again. The
// overlap of calls is made certain, not likely: a gated plugin writes to
// standard output in every call, and the test's writer holds each write
// until the test opens the gate.

// gate is the standard output of a gated plugin.
type gate struct {
	arrived chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{arrived: make(chan struct{}, 1024), open: make(chan struct{})}
	t.Cleanup(g.release) // a failing test must not leave calls held
	return g
}

func (g *gate) Write(p []byte) (int, error) {
	select {
	case g.arrived <- struct{}{}:
	case <-g.open:
	}
	<-g.open
	return len(p), nil
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// await waits until n more calls are held at the gate, all at once.
func (g *gate) await(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-g.arrived:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d calls reached the plugin at once", i, n)
		}
	}
}

// gatedPlugin loads a fixture whose kernel traps for op fail and otherwise
// writes to standard output (the gate) before running the good kernel.
func gatedPlugin(t *testing.T, g *gate, maxInstances int) *Plugin {
	t.Helper()
	h := newTestHost(t, NewConfig().WithStdout(g).WithMaxInstances(maxInstances))
	f := newFixture(uniq("gated"))
	f.imports = []wasmImportSpec{{module: wasiModule, name: "fd_write",
		params: []byte{tI32, tI32, tI32, tI32}, results: []byte{tI32}}}
	f.kernel = func(f *fixture) []byte {
		return code(
			lget(0), i32c(1), opI32Eq, opIf, blockEmpty, opUnreachable, opEnd,
			i32c(iovecAt), i32c(errMsgAt), opI32Store, 2, 0,
			i32c(iovecAt+4), i32c(int32(len(f.errMsg))), opI32Store, 2, 0,
			i32c(1), i32c(iovecAt), i32c(1), i32c(iovecAt+8), call(0), opDrop,
			goodKernel(f))
	}
	p, err := h.Load(context.Background(), "gated.wasm", f.wasm())
	require.NoError(t, err)
	return p
}

// add1 calls <plugin>.add1 on n values starting at from and checks the
// result, returning the error of the call or of its values.
func add1(plugin string, from float32, n int) error {
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = from + float32(i)
	}
	y := core.Call1(plugin+".add1", nil, core.FromSlice(vals, core.Shape{n}))
	got, err := y.Float32s()
	if err != nil {
		return err
	}
	for i, v := range got {
		if v != vals[i]+1 {
			return fmt.Errorf("add1(%v) = %v at %d", vals[i], v, i)
		}
	}
	return nil
}

// goAdd1 starts add1 in a goroutine; its error arrives on the channel.
func goAdd1(plugin string, from float32, n int) <-chan error {
	done := make(chan error, 1)
	go func() { done <- add1(plugin, from, n) }()
	return done
}

type poolCounts struct{ idle, live, made, peakBusy, waiting int }

func counts(p *Plugin) poolCounts {
	p.pool.mu.Lock()
	defer p.pool.mu.Unlock()
	return poolCounts{len(p.pool.idle), p.pool.live, p.pool.made, p.pool.peakBusy, p.pool.waiting}
}

func TestCallsRunOnInstancesOfTheirOwn(t *testing.T) {
	const n = 4
	g := newGate(t)
	p := gatedPlugin(t, g, n)
	var calls []<-chan error
	for i := range n {
		calls = append(calls, goAdd1(p.Name(), float32(100*i), 3+i))
	}
	g.await(t, n) // all n calls are inside the plugin at the same time
	g.release()
	for _, c := range calls {
		require.NoError(t, <-c)
	}
	assert.Equal(t, poolCounts{idle: n, live: n, made: n, peakBusy: n}, counts(p))
}

func TestInstanceCapHolds(t *testing.T) {
	const capacity, n = 2, 5
	g := newGate(t)
	p := gatedPlugin(t, g, capacity)
	var calls []<-chan error
	for i := range n {
		calls = append(calls, goAdd1(p.Name(), float32(10*i), 2))
	}
	g.await(t, capacity)
	require.Eventually(t, func() bool { return counts(p).waiting == n-capacity }, 10*time.Second, time.Millisecond,
		"the calls beyond the cap wait for an instance")
	assert.Empty(t, g.arrived, "no call past the cap reached the plugin")
	g.release()
	for _, c := range calls {
		require.NoError(t, <-c, "a call beyond the cap waits; it does not fail")
	}
	assert.Equal(t, poolCounts{idle: capacity, live: capacity, made: capacity, peakBusy: capacity}, counts(p))
}

func TestTrapSparesConcurrentCalls(t *testing.T) {
	g := newGate(t)
	p := gatedPlugin(t, g, 2)
	x := []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}
	held := goAdd1(p.Name(), 7, 5)
	g.await(t, 1) // add1 is inside the plugin on one instance ...
	_, err := core.Call(p.Name()+".fail", x, nil)
	require.ErrorContains(t, err, "unreachable") // ... while fail traps on another
	g.release()
	require.NoError(t, <-held)
	assert.Equal(t, poolCounts{idle: 1, live: 1, made: 2, peakBusy: 2}, counts(p), "the trapped instance was dropped")

	// With one instance: the trapped one is closed and never serves again.
	p.pool.mu.Lock()
	first := p.pool.idle[0]
	p.pool.max = 1
	p.pool.mu.Unlock()
	_, err = core.Call(p.Name()+".fail", x, nil)
	require.ErrorContains(t, err, "unreachable")
	assert.True(t, first.mod.IsClosed())
	require.NoError(t, add1(p.Name(), 0, 3))
	p.pool.mu.Lock()
	assert.NotSame(t, first, p.pool.idle[0])
	p.pool.mu.Unlock()
}

func TestConcurrentCallsWithTraps(t *testing.T) {
	h := newTestHost(t, NewConfig().WithMaxInstances(3))
	f := newFixture(uniq("traps"))
	f.kernel = func(f *fixture) []byte {
		return code(lget(0), i32c(1), opI32Eq, opIf, blockEmpty, opUnreachable, opEnd, goodKernel(f))
	}
	p, err := h.Load(context.Background(), "t.wasm", f.wasm())
	require.NoError(t, err)
	const workers, rounds, trappers = 6, 40, 2
	errs := make(chan error, workers*rounds)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				if w < trappers {
					_, err := core.Call(p.Name()+".fail", []*core.Tensor{core.FromSlice([]float32{1}, core.Shape{1})}, nil)
					if err == nil || !assert.Contains(t, err.Error(), "unreachable") {
						errs <- fmt.Errorf("trap %d: %v", i, err)
					}
					continue
				}
				if err := add1(p.Name(), float32(1000*w+i), 1+(w*7+i)%200); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	c := counts(p)
	assert.LessOrEqual(t, c.peakBusy, 3)
	assert.Equal(t, trappers*rounds+c.live, c.made, "every trap cost its instance, and only traps cost one")
	p.pool.mu.Lock()
	for _, inst := range p.pool.idle {
		assert.False(t, inst.mod.IsClosed(), "a closed instance is back in the pool")
	}
	p.pool.mu.Unlock()
}

func TestCloseDuringCalls(t *testing.T) {
	const capacity = 2
	g := newGate(t)
	p := gatedPlugin(t, g, capacity)
	var inFlight, waiting []<-chan error
	for i := range capacity {
		inFlight = append(inFlight, goAdd1(p.Name(), float32(i), 4))
	}
	g.await(t, capacity)
	for i := range 3 {
		waiting = append(waiting, goAdd1(p.Name(), float32(i), 4))
	}
	require.Eventually(t, func() bool { return counts(p).waiting == 3 }, 10*time.Second, time.Millisecond)

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	for _, c := range waiting {
		assert.ErrorContains(t, <-c, "was closed", "a call waiting for an instance fails at Close")
	}
	select {
	case <-closed:
		t.Fatal("Close returned while calls were still running in the plugin")
	default:
	}
	g.release()
	for _, c := range inFlight {
		assert.NoError(t, <-c, "a call in flight at Close finishes")
	}
	require.NoError(t, <-closed)
	assert.Equal(t, 0, counts(p).live, "every instance was closed")
	assert.ErrorContains(t, add1(p.Name(), 0, 1), "was closed")
	require.NoError(t, p.Close())
}

func TestCloseWhileCallsLoop(t *testing.T) {
	h := newTestHost(t, NewConfig().WithMaxInstances(3))
	p := loadGood(t, h)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	start := make(chan struct{})
	for w := range 6 {
		wg.Go(func() {
			<-start
			for i := 0; ; i++ {
				err := add1(p.Name(), float32(w*1000+i), 1+i%64)
				mu.Lock()
				if err == nil {
					ok++
				} else {
					refused++
				}
				mu.Unlock()
				if err != nil {
					assert.ErrorContains(t, err, "was closed")
					return
				}
			}
		})
	}
	close(start)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return ok >= 20 }, 10*time.Second, time.Millisecond)
	require.NoError(t, h.Close(context.Background())) // closes the plugin, then the runtime
	wg.Wait()
	assert.Equal(t, 6, refused, "every worker ends on the closed plugin")
	assert.Equal(t, 0, counts(p).live)
}

func TestPoliciesShareThePool(t *testing.T) {
	h := newTestHost(t, NewConfig().WithMaxInstances(2))
	reply := `[{"shape": [1024], "dtype": "u8"}]` // the fixture's infer answer, at answerAt
	p, err := h.Load(context.Background(), "pol.wasm", policyFixture(t, i64c(packed(answerAt, uint32(len(reply))))))
	require.NoError(t, err)
	pol, err := p.Policy("pick")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 20 {
				var got []map[string]any
				if assert.NoError(t, pol.Decide(map[string]int{"i": i}, &got)) {
					assert.Equal(t, "u8", got[0]["dtype"])
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, counts(p).made, 2)
	require.NoError(t, p.Close())
	var got any
	assert.ErrorContains(t, pol.Decide(1, &got), "policy "+pol.PolicyName()+": was closed")
}

func TestMaxInstancesConfig(t *testing.T) {
	_, err := NewHost(context.Background(), NewConfig().WithMaxInstances(-1))
	assert.ErrorContains(t, err, "max instances -1 is negative")
	h := newTestHost(t, NewConfig())
	assert.GreaterOrEqual(t, h.cfg.maxInstances, 1, "the default is GOMAXPROCS, at least 1")
}
