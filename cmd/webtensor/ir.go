package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/backends/webgpu"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/ir"
	"github.com/webtensor/webtensor/geom"
	"github.com/webtensor/webtensor/nn"
)

func irCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ir",
		Short: "Polygraph, the graph IR: capture a model and show it before and after the passes",
	}
	var model, device string
	var seqLen int
	var train, profile bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Trace a built-in model and print its graph before and after the passes",
		Long: `Trace a built-in model (its forward pass on example inputs, on the CPU or
--device) into the IR, print the graph, run the passes (constant folding, layout
simplification, common subexpression elimination, dead code elimination)
and print it again with what each pass removed, then the memory plan: the
peak bytes the graph holds when Run releases each intermediate after its
last use against all it allocates, and what is freed after which node.
Nodes that are not dense carry their kind (layout, sparse, segment, fft,
random, select, control, fused) after a #.

On a device that fuses (webgpu) it then prints the graph after fusion:
elementwise trees become one kernel (fused), trees feeding a reduction run
inside it (fused_reduce_<op>) and trees consuming a matmul or sparse
product run in its store (fused_matmul, fused_spmm); a bias gradient is
summed by its weight gradient's product (fused_matmul_colsum), attention
writes its heads transposed for the projection after it
(fused_attention_transposed), and each constant weight is stored in the
layout that measured faster on the device.

With --train the graph is a whole training step - the forward pass, a
sum loss and the gradient of every parameter (core.Gradients), the
parameters as inputs - so the passes and fusion reach the backward pass.
With --profile (webgpu) the fused graph runs with every dispatch waited
for, and the time of each op's kernels is printed.

Models: mlp (2-64-64-3), transformer (one encoder layer: layer_norm,
attention, GELU MLP, residuals), gcn (a GCNConv layer on a small graph).`,
		Example: `  webtensor ir show --model transformer
  webtensor ir show --model transformer --device webgpu
  webtensor ir show --model transformer --device webgpu --train --profile
  webtensor ir show --model gcn`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dev, err := runDevice(device)
			if err != nil {
				return err
			}
			if device == "" {
				dev = core.CPU
			}
			g, ins, err := traceModel(model, seqLen, dev, train)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			s := g.Stats()
			fmt.Fprintf(out, "# %s, captured: %d nodes, %d constants\n%s\n", model, s.Nodes, s.Consts, g)
			p, err := g.OptimizeStats()
			if err != nil {
				return err
			}
			s = g.Stats()
			fmt.Fprintf(out, "# after the passes: %d nodes (%d folded into constants, %d layout nodes dropped or merged, %d slice-gradient sums made concats, %d merged, %d dead removed)\n%s",
				s.Nodes, p.Folded, p.Layout, p.Slices, p.Merged, p.Dead, g)
			plan := g.MemoryPlan()
			fmt.Fprintf(out, "\n# memory plan\n")
			for _, line := range strings.SplitAfter(strings.TrimSuffix(plan.String(), "\n"), "\n") {
				fmt.Fprintf(out, "# %s", line)
			}
			fmt.Fprintln(out)
			rep, err := g.Fuse(dev)
			if err != nil {
				return err
			}
			if rep != (ir.FuseReport{}) {
				fmt.Fprintf(out, "\n# after fusion on %s: %d nodes (%d ops in elementwise kernels, %d reductions with a fused prologue, %d epilogues, %d second stores, %d bias gradients in their weight gradient, %d attention outputs written transposed, %d weights in their other layout, %d group norms with their SiLU)\n%s",
					dev, len(g.Nodes), rep.Elementwise, rep.Reductions, rep.Epilogues, rep.Pairs, rep.ColumnSums, rep.Attention, rep.Layouts, rep.Norms, g)
			}
			if profile {
				return printKernelProfile(out, g, ins, dev)
			}
			return nil
		},
	}
	show.Flags().StringVar(&model, "model", "mlp", "what to trace: mlp, transformer or gcn")
	show.Flags().IntVar(&seqLen, "seq", 8, "transformer: sequence length of the example input")
	show.Flags().StringVar(&device, "device", "", deviceFlagUsage("cpu"))
	show.Flags().BoolVar(&train, "train", false, "trace a whole training step: forward, a sum loss and every parameter's gradient")
	show.Flags().BoolVar(&profile, "profile", false, "with --device webgpu: run the fused graph and print each op's kernel time")
	cmd.AddCommand(show)
	return cmd
}

// traceModel captures one of the built-in models on dev: its forward pass
// or, with train, a whole training step (forward, a sum loss and the
// gradient of every parameter, the parameters as inputs). It returns the
// graph and the inputs it was traced with.
func traceModel(model string, seqLen int, dev core.Device, train bool) (*ir.Graph, []*core.Tensor, error) {
	core.ManualSeed(0)
	on := nn.WithDevice(dev)
	var forward func(*core.Tensor) *core.Tensor
	var params []*nn.Parameter
	var x *core.Tensor
	switch model {
	case "mlp":
		l1, _ := nn.NewLinear(2, 64, on)
		l2, _ := nn.NewLinear(64, 64, on)
		l3, _ := nn.NewLinear(64, 3, on)
		m, err := nn.NewSequential(l1, &nn.ReLU{}, l2, &nn.ReLU{}, l3)
		if err != nil {
			return nil, nil, err
		}
		forward, params = m.Forward, m.Parameters()
		x = core.Call1("randn", core.Attrs{"shape": []int{16, 2}, "device": dev.String()})
	case "transformer":
		if seqLen < 1 {
			return nil, nil, fail("--seq must be at least 1, got %d", seqLen)
		}
		l, err := nn.NewTransformerEncoderLayer(32, 4, 64, on)
		if err != nil {
			return nil, nil, err
		}
		l.Train(false)
		forward, params = l.Forward, l.Parameters()
		x = core.Call1("randn", core.Attrs{"shape": []int{2, seqLen, 32}, "device": dev.String()})
	case "gcn":
		g, err := geom.NewGraph(4, []int64{0, 1, 2, 3}, []int64{1, 2, 3, 0}, nil, dev)
		if err != nil {
			return nil, nil, err
		}
		c, err := geom.NewGCNConv(8, 4, geom.Options{Device: dev})
		if err != nil {
			return nil, nil, err
		}
		forward = func(x *core.Tensor) *core.Tensor { return c.Forward(x, g) }
		params = c.Parameters()
		x = core.Call1("randn", core.Attrs{"shape": []int{4, 8}, "device": dev.String()})
	default:
		return nil, nil, fail("--model must be mlp, transformer or gcn, got %q", model)
	}
	ins := []*core.Tensor{x}
	fn := func(in []*core.Tensor) ([]*core.Tensor, error) { return []*core.Tensor{forward(in[0])}, nil }
	if train {
		for _, p := range params {
			ins = append(ins, p.Tensor())
		}
		fn = func(in []*core.Tensor) ([]*core.Tensor, error) {
			loss := core.Call1("sum", nil, forward(in[0]))
			grads, err := core.Gradients(loss, in[1:])
			return append([]*core.Tensor{loss}, grads...), err
		}
	}
	g, err := ir.Trace(fn, ins...)
	return g, ins, err
}

// printKernelProfile runs g on dev's WebGPU backend with every dispatch
// waited for and prints where the time goes, per op and kernel.
func printKernelProfile(out io.Writer, g *ir.Graph, ins []*core.Tensor, dev core.Device) error {
	b, err := core.BackendFor(dev)
	if err != nil {
		return err
	}
	wb, ok := b.(*webgpu.Backend)
	if !ok {
		return fail("--profile needs --device webgpu, got %s", dev)
	}
	defer core.NoGradScope()()
	if _, err := g.Run(ins...); err != nil { // builds every kernel first
		return err
	}
	const runs = 5
	wb.StartKernelProfile()
	for range runs {
		if _, err := g.Run(ins...); err != nil {
			wb.StopKernelProfile()
			return err
		}
	}
	prof := wb.StopKernelProfile()
	fmt.Fprintf(out, "\n# kernel profile on %s, per run (each dispatch waited for on its own, so the total exceeds a run's time)\n", dev)
	fmt.Fprintf(out, "# %-44s %6s %10s\n", "op/kernel", "calls", "ms")
	var total float64
	for _, k := range prof {
		ms := k.Total.Seconds() * 1e3 / runs
		total += ms
		fmt.Fprintf(out, "# %-44s %6d %10.3f\n", k.Kernel, k.Calls/runs, ms)
	}
	fmt.Fprintf(out, "# %-44s %6s %10.3f\n", "total", "", total)
	return nil
}
