package core_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func leaf(vals ...float32) *core.Tensor {
	return core.FromSlice(vals, core.Shape{len(vals)}).SetRequiresGrad(true)
}

// NoGrad belongs to its goroutine: while one goroutine sits inside it,
// another goroutine's ops are recorded, and its own are not.
func TestNoGradIsPerGoroutine(t *testing.T) {
	w := leaf(1, 2, 3)
	entered, done, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var inside *core.Tensor
	go func() {
		defer close(finished)
		core.NoGrad(func() {
			close(entered)
			<-done
			inside = core.Call1("mul", nil, w, w)
		})
	}()
	<-entered
	outside := core.Call1("mul", nil, w, w)
	assert.True(t, core.GradEnabled(), "another goroutine's NoGrad switched this goroutine's recording off")
	assert.True(t, outside.RequiresGrad(), "an op was not recorded while another goroutine was in NoGrad")
	close(done)
	<-finished
	require.NoError(t, inside.Err())
	assert.False(t, inside.RequiresGrad(), "an op inside NoGrad was recorded")
}

// NoGradScope nests, ends once however often its end is called, and leaves
// recording on afterwards.
func TestNoGradScopeNests(t *testing.T) {
	w := leaf(1, 2)
	outer := core.NoGradScope()
	inner := core.NoGradScope()
	inner()
	inner() // a second call must not end the outer scope
	assert.False(t, core.GradEnabled())
	assert.False(t, core.Call1("neg", nil, w).RequiresGrad())
	outer()
	assert.True(t, core.GradEnabled())
	assert.True(t, core.Call1("neg", nil, w).RequiresGrad())
}

// Backward switches nothing off: while a backward rule runs, another
// goroutine's forward pass is recorded, and what the rule computes from its
// (detached) inputs is not.
func TestBackwardLeavesOtherGoroutinesRecording(t *testing.T) {
	w := leaf(1, 2, 3)
	other := leaf(4, 5, 6)
	var inRule, forward *core.Tensor
	var enabled bool
	step := func(x *core.Tensor) *core.Tensor {
		out := core.Call1("mul", nil, x, x)
		core.RecordFunction("probe", []*core.Tensor{x}, []*core.Tensor{out}, func(g *core.GradCtx) ([]*core.Tensor, error) {
			ran := make(chan struct{})
			go func() { // a forward pass on another goroutine, mid-backward
				defer close(ran)
				forward = core.Call1("mul", nil, other, other)
			}()
			<-ran
			enabled = core.GradEnabled()
			inRule = core.Call1("mul", nil, g.Inputs[0], g.Inputs[0])
			two := core.Call1("mul", nil, g.Inputs[0], core.Call1("full_like", core.Attrs{"value": 2.0}, g.Inputs[0]))
			return []*core.Tensor{core.Call1("mul", nil, g.Grad(0), two)}, nil
		})
		return out
	}
	require.NoError(t, core.Call1("sum", nil, step(w)).Backward())
	require.NoError(t, forward.Err())
	assert.True(t, forward.RequiresGrad(), "a forward pass during another goroutine's backward was not recorded")
	assert.True(t, enabled, "Backward switched recording off")
	assert.False(t, inRule.RequiresGrad(), "an op of a backward rule was recorded")
	g, err := w.Grad().Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6}, g)
	assert.False(t, w.Grad().RequiresGrad())
}

// A released tensor given as the gradient is an error, not "no gradient".
func TestBackwardWithReleasedGradientFails(t *testing.T) {
	w := leaf(1, 2)
	y := core.Call1("mul", nil, w, w)
	g := core.FromSlice([]float32{1, 1}, core.Shape{2})
	g.Release()
	err := y.Backward(g)
	require.Error(t, err)
	assert.True(t, errors.Is(err, core.ErrReleased), "%v", err)
	assert.Contains(t, err.Error(), "gradient")
	assert.Nil(t, w.Grad())
}

// Many goroutines training and evaluating at once get exactly the
// gradients one goroutine gets alone.
func TestConcurrentBackwardMatchesSerial(t *testing.T) {
	grad := func(seed int) []float32 {
		w := core.Call1("randn", core.Attrs{"shape": []int{8, 8}, "seed": seed}).SetRequiresGrad(true)
		y := core.Call1("add", nil, core.Call1("mul", nil, w, w), w)
		if err := core.Call1("sum", nil, y).Backward(); err != nil {
			return nil
		}
		g, _ := w.Grad().Float32s()
		return g
	}
	want := make([][]float32, 4)
	for i := range want {
		want[i] = grad(i)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 200 {
				if got := grad(i); !assert.ObjectsAreEqual(want[i], got) {
					errs <- "a gradient differs from the serial one"
					return
				}
			}
		}()
		go func() { // evaluation beside the training
			defer wg.Done()
			w := leaf(1, 2, 3)
			for range 200 {
				core.NoGrad(func() { core.Call1("mul", nil, w, w) })
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Goroutines that run Backward through graphs sharing a leaf each add their
// gradient to its Grad.
func TestConcurrentBackwardAccumulatesIntoASharedLeaf(t *testing.T) {
	w := leaf(1, 2, 3)
	const workers, iters = 8, 300
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range iters {
				assert.NoError(t, core.Call1("sum", nil, core.Call1("mul", nil, w, w)).Backward())
			}
		}()
	}
	wg.Wait()
	g, err := w.Grad().Float32s()
	require.NoError(t, err)
	n := float32(workers * iters)
	assert.Equal(t, []float32{2 * n, 4 * n, 6 * n}, g)
}
