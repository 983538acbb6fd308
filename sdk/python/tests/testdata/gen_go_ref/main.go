// Command gen_go_ref writes sdk/python/tests/testdata/go_ref.safetensors: weights
// drawn by the Go nn package and a few optimizer steps, which the Python SDK's
// wt.nn and wt.optim must reproduce (test_nn.py, test_optim.py). Run from the
// repository root:
//
//	go run ./sdk/python/tests/testdata/gen_go_ref
//
// (Under testdata, so ./... patterns, go vet and the linters leave it alone.)
package main

import (
	"fmt"
	"log"

	_ "github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/nn"
)

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

func put(out map[string]safetensors.Tensor, prefix string, m nn.Module) {
	for _, s := range m.StateDict() {
		out[prefix+s.Name] = must(safetensors.FromTensor(s.Value.Tensor()))
	}
}

func main() {
	out := map[string]safetensors.Tensor{}

	// Initialisation: one seed, the modules built in this order.
	core.ManualSeed(7)
	put(out, "init.linear.", must(nn.NewLinear(4, 8)))
	put(out, "init.conv.", must(nn.NewConv2d(3, 4, 3, 3, nn.WithPadding(1))))
	put(out, "init.ln.", must(nn.NewLayerNorm(core.Shape{6})))
	put(out, "init.emb.", must(nn.NewEmbedding(10, 4)))
	put(out, "init.mha.", must(nn.NewMultiheadAttention(8, 2)))
	put(out, "init.linear2.", must(nn.NewLinear(5, 3, nn.WithoutBias())))

	// Three steps of each optimizer on a small classifier.
	x := core.FromSlice([]float32{0.5, -1, 2, 0, 1, 1, -0.5, 0.25, -2, 0.3, 0.7, 1.5}, core.Shape{3, 4})
	target := core.FromSlice([]int64{2, 0, 1}, core.Shape{3})
	sgd := nn.SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 0.01}
	sgdDamp := nn.SGDConfig{LR: 0.05, Momentum: 0.5, Dampening: 0.1, Maximize: false}
	adam := nn.DefaultAdam()
	adam.LR, adam.WeightDecay, adam.AMSGrad = 0.01, 0.01, true
	adamw := nn.DefaultAdamW()
	adamw.LR = 0.01
	for _, c := range []struct {
		name string
		make func([]*nn.Parameter) nn.Optimizer
	}{
		{"sgd", func(p []*nn.Parameter) nn.Optimizer { return must(nn.NewSGD(p, sgd)) }},
		{"sgd_dampening", func(p []*nn.Parameter) nn.Optimizer { return must(nn.NewSGD(p, sgdDamp)) }},
		{"adam", func(p []*nn.Parameter) nn.Optimizer { return must(nn.NewAdam(p, adam)) }},
		{"adamw", func(p []*nn.Parameter) nn.Optimizer { return must(nn.NewAdamW(p, adamw)) }},
	} {
		core.ManualSeed(11)
		model := must(nn.NewSequential(must(nn.NewLinear(4, 8)), &nn.Tanh{}, must(nn.NewLinear(8, 3))))
		opt := c.make(model.Parameters())
		var losses []float32
		for range 3 {
			opt.ZeroGrad()
			loss := core.Call1("cross_entropy", nil, model.Forward(x), target)
			losses = append(losses, float32(must(loss.Item())))
			if err := loss.Backward(); err != nil {
				log.Fatal(err)
			}
			if err := opt.Step(); err != nil {
				log.Fatal(err)
			}
		}
		put(out, c.name+".", model)
		out[c.name+".losses"] = must(safetensors.FromTensor(core.FromSlice(losses, core.Shape{3})))
	}
	path := "sdk/python/tests/testdata/go_ref.safetensors"
	if err := safetensors.WriteFile(path, out, map[string]string{"format": "pt"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", path, len(out), "tensors")
}
