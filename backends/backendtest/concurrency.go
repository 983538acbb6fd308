package backendtest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/webtensor/webtensor/core"
)

// RunConcurrentAutograd trains from several goroutines at once on dev and
// requires exactly the gradients each gets alone: autograd state is per
// goroutine, so neither a Backward nor a NoGrad scope on one goroutine may
// change what another records. Beside the trainers, one goroutine
// evaluates the shared weights under NoGrad and one takes optimiser-like
// steps under NoGrad, the mix of a data-parallel training loop.
func RunConcurrentAutograd(t *testing.T, dev core.Device) {
	const workers, iters = 4, 20
	shared := mlpParams(dev, 100)
	want := make([][][]float32, workers)
	for i := range want {
		g, err := mlpGradients(dev, i, shared)
		if err != nil {
			t.Fatalf("serial run %d: %v", i, err)
		}
		want[i] = g
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*workers)
	report := func(err error) {
		select {
		case errs <- err:
		default: // enough to say what went wrong
		}
	}
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range iters {
				got, err := mlpGradients(dev, i, shared)
				if err != nil {
					report(fmt.Errorf("worker %d, iteration %d: %w", i, it, err))
					return
				}
				if !slices.EqualFunc(want[i], got, slices.Equal[[]float32]) {
					report(fmt.Errorf("worker %d, iteration %d: gradients differ from the serial run", i, it))
					return
				}
			}
		}()
	}
	wg.Add(2)
	go func() { // evaluation with the shared weights, which require grad
		defer wg.Done()
		x := core.Call1("randn", core.Attrs{"shape": []int{16, 8}, "seed": 7, "device": dev.String()})
		for it := range iters {
			var out *core.Tensor
			core.NoGrad(func() { out = mlp(x, shared) })
			if err := out.Err(); err != nil {
				report(fmt.Errorf("evaluation %d: %w", it, err))
				return
			}
			if out.RequiresGrad() {
				report(fmt.Errorf("evaluation %d: an op inside NoGrad was recorded", it))
				return
			}
		}
	}()
	go func() { // optimiser steps on weights of its own
		defer wg.Done()
		own := mlpParams(dev, 200)
		for it := range iters {
			core.NoGrad(func() {
				for j, p := range own {
					own[j] = core.Call1("sub", nil, p, core.Call1("mul", nil, p, core.Call1("full_like", core.Attrs{"value": 0.01}, p)))
				}
			})
			for _, p := range own {
				if err := p.Err(); err != nil {
					report(fmt.Errorf("optimiser step %d: %w", it, err))
					return
				}
				if p.RequiresGrad() {
					report(fmt.Errorf("optimiser step %d: an update inside NoGrad was recorded", it))
					return
				}
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// mlpParams are the weights of a two-layer perceptron, requiring grad.
func mlpParams(dev core.Device, seed int) []*core.Tensor {
	ps := []*core.Tensor{}
	for i, shape := range [][]int{{8, 16}, {16}, {16, 4}} {
		p := core.Call1("randn", core.Attrs{"shape": shape, "seed": seed + i, "device": dev.String()})
		ps = append(ps, p.SetRequiresGrad(true))
	}
	return ps
}

func mlp(x *core.Tensor, p []*core.Tensor) *core.Tensor {
	h := core.Call1("tanh", nil, core.Call1("add", nil, core.Call1("matmul", nil, x, p[0]), p[1]))
	return core.Call1("matmul", nil, h, p[2])
}

// mlpGradients is one training step of worker i: the gradients of a loss
// with respect to the worker's own weights (accumulated by Backward) and
// to the shared ones (returned by Gradients, which accumulates nothing,
// so workers do not race on the shared weights' Grad).
func mlpGradients(dev core.Device, i int, shared []*core.Tensor) ([][]float32, error) {
	own := mlpParams(dev, 10*i)
	x := core.Call1("randn", core.Attrs{"shape": []int{16, 8}, "seed": 50 + i, "device": dev.String()})
	lossOf := func(p []*core.Tensor) *core.Tensor {
		y := mlp(x, p)
		return core.Call1("sum", nil, core.Call1("mul", nil, y, y))
	}
	if err := lossOf(own).Backward(); err != nil {
		return nil, err
	}
	grads, err := core.Gradients(lossOf(shared), shared)
	if err != nil {
		return nil, err
	}
	for _, p := range own {
		grads = append(grads, p.Grad())
	}
	out := make([][]float32, len(grads))
	for j, g := range grads {
		if g == nil {
			return nil, fmt.Errorf("weight %d got no gradient", j)
		}
		if out[j], err = g.Float32s(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
