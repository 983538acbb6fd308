package main

import (
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/geom"
	"github.com/webtensor/webtensor/nn"
)

// runGNN is `webtensor run --task gnn`: node classification with a GCN on a
// stochastic block model, trained full-batch on 30% of the labels.
func runGNN(cmd *cobra.Command, o runOptions) error {
	if o.steps <= 0 || o.hidden <= 0 || o.blocks < 2 || o.blockSize < 2 {
		return fail("--steps and --hidden must be positive, --blocks and --block-size at least 2 (got %d, %d, %d, %d)",
			o.steps, o.hidden, o.blocks, o.blockSize)
	}
	if !(o.lr > 0) || math.IsInf(o.lr, 0) {
		return fail("--lr must be a positive number, got %v", o.lr)
	}
	dev, err := runDevice(o.device)
	if err != nil {
		return err
	}
	b, _ := core.BackendFor(dev)
	out := cmd.OutOrStdout()
	// Sparse enough that features alone do not decide (noise 2), dense
	// enough inside a block (8 neighbours on average) that the graph helps.
	pIn := math.Min(1, 8/float64(o.blockSize))
	d, err := geom.SBM(geom.SBMConfig{Blocks: o.blocks, BlockSize: o.blockSize, PIn: pIn, POut: pIn / 20,
		Features: 16, Noise: 2, Seed: o.seed, TrainFraction: 0.3}, dev)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "webtensor %s: SBM graph, %d nodes, %d edges, %d classes; GCN 16-%d-%d, Adam lr %g, %d steps on %s (%s)\n",
		core.Version, d.Graph.NumNodes, d.Graph.NumEdges(), d.NumClasses, o.hidden, d.NumClasses, o.lr, o.steps,
		dev, b.Capabilities().Description)
	core.ManualSeed(o.seed)
	model, err := geom.NewGCN(16, o.hidden, d.NumClasses, 0.5, geom.Options{Device: dev})
	if err != nil {
		return err
	}
	cfg := nn.DefaultAdam()
	cfg.LR = o.lr
	opt, err := nn.NewAdam(model.Parameters(), cfg)
	if err != nil {
		return err
	}
	trainX, trainY := d.Train, geom.Gather(d.Y, d.Train)
	start := time.Now()
	losses, err := trainLoop(out, o.steps, o.quiet, func() (*core.Tensor, error) {
		opt.ZeroGrad()
		scores := model.Forward(d.X, d.Graph)
		loss := core.Call1("cross_entropy", nil, geom.Gather(scores, trainX), trainY)
		if err := loss.Backward(); err != nil {
			return nil, err
		}
		return loss, opt.Step()
	})
	if err != nil {
		return err
	}
	model.Train(false)
	acc, err := geom.Accuracy(model.Forward(d.X, d.Graph), d.Y, d.Test)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "final loss %.4f (from %.4f), test accuracy %.1f%% on %d unseen nodes, %.2fs (%.1f ms/step)\n",
		losses[len(losses)-1], losses[0], 100*acc, d.Test.Numel(), time.Since(start).Seconds(),
		float64(time.Since(start).Milliseconds())/float64(o.steps))
	return writePlot(out, o.plot, "webtensor run --task gnn: GCN node classification loss", losses)
}
