package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/nn"
)

type runOptions struct {
	steps, hidden, points int
	batch, samples        int // diffusion
	sampleSteps           int
	images, save          string
	lr                    float64
	blocks, blockSize     int
	seed                  uint64
	device, plot, task    string
	quiet                 bool
}

func runCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Train a demo model (spiral classification, GNN node classification, or a diffusion model) on the best device",
		Long: `Train a demo model on the best device found (--device to choose), with a
progress bar, the loss printed as it falls and the final accuracy; --plot
writes the loss curve as an image.

--task spirals (default): a small MLP (2-H-H-3, ReLU) with Adam classifies
three interleaved spirals.
--task gnn: a two-layer GCN (geom package) classifies the nodes of a
synthetic stochastic-block-model graph (--blocks communities of --block-size
nodes, 16 noisy features) from 30% of the labels; the accuracy is on the rest.
--task diffusion: a DDPM (a UNet2DModel of --hidden and twice --hidden
channels, diffuse package) learns to denoise 16x16 digits the command draws
itself, then DDIM samples --samples new ones in --sample-steps steps into a
PNG grid (--images); --save writes the trained pipeline as a diffusers
folder (a DDIMPipeline: model_index.json, unet/, scheduler/), which
diffusers' from_pretrained, the SDKs' diffuse.Pipeline and, zipped, the
browser example sdk/js/examples/diffusion load.`,
		Example: `  webtensor run
  webtensor run --plot loss.png --steps 500
  webtensor run --task gnn --plot gnn-loss.png
  webtensor run --task diffusion --images digits.png --plot diffusion-loss.png
  webtensor run --task diffusion --steps 3000 --save build/diffusion-digits
  webtensor run --device cpu --seed 7 --lr 0.005`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, o) },
	}
	f := cmd.Flags()
	f.IntVar(&o.steps, "steps", 300, "training steps (full batch)")
	f.IntVar(&o.hidden, "hidden", 64, "hidden layer width")
	f.IntVar(&o.points, "points", 200, "points per spiral")
	f.Float64Var(&o.lr, "lr", 0.01, "Adam learning rate")
	f.Uint64Var(&o.seed, "seed", 0, "random seed (data and weights)")
	f.StringVar(&o.device, "device", "", deviceFlagUsage("the best that opens"))
	f.StringVar(&o.plot, "plot", "", "write the loss curve to this file (.png, .svg or .pdf)")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bar")
	f.StringVar(&o.task, "task", "spirals", "what to train: spirals (an MLP), gnn (a GCN on a synthetic graph) or diffusion (a DDPM on drawn digits)")
	f.IntVar(&o.blocks, "blocks", 4, "gnn: communities (classes) in the graph")
	f.IntVar(&o.blockSize, "block-size", 500, "gnn: nodes per community")
	f.IntVar(&o.batch, "batch", 32, "diffusion: images per training step")
	f.IntVar(&o.samples, "samples", 16, "diffusion: images to sample after training")
	f.IntVar(&o.sampleSteps, "sample-steps", 50, "diffusion: DDIM sampling steps")
	f.StringVar(&o.images, "images", "diffusion-samples.png", "diffusion: write the sampled images to this PNG (empty: don't)")
	f.StringVar(&o.save, "save", "", "diffusion: write the trained pipeline to this folder as diffusers' save_pretrained does (empty: don't)")
	return cmd
}

func runDemo(cmd *cobra.Command, o runOptions) error {
	switch o.task {
	case "spirals":
	case "gnn":
		return runGNN(cmd, o)
	case "diffusion":
		return runDiffusion(cmd, o)
	default:
		return fail("--task must be spirals, gnn or diffusion, got %q", o.task)
	}
	if o.steps <= 0 || o.hidden <= 0 || o.points <= 1 {
		return fail("--steps, --hidden must be positive and --points at least 2 (got %d, %d, %d)", o.steps, o.hidden, o.points)
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
	fmt.Fprintf(out, "webtensor %s: 3 spirals x %d points, MLP 2-%d-%d-3, Adam lr %g, %d steps on %s (%s)\n",
		core.Version, o.points, o.hidden, o.hidden, o.lr, o.steps, dev, b.Capabilities().Description)

	core.ManualSeed(o.seed)
	x, y := spirals(o.points, 3, o.seed, dev)
	model, err := mlp(o.hidden, dev)
	if err != nil {
		return err
	}
	cfg := nn.DefaultAdam()
	cfg.LR = o.lr
	opt, err := nn.NewAdam(model.Parameters(), cfg)
	if err != nil {
		return err
	}
	start := time.Now()
	losses, err := trainLoop(out, o.steps, o.quiet, func() (*core.Tensor, error) {
		opt.ZeroGrad()
		loss := core.Call1("cross_entropy", nil, model.Forward(x), y)
		if err := loss.Backward(); err != nil {
			return nil, err
		}
		return loss, opt.Step()
	})
	if err != nil {
		return err
	}
	acc, err := accuracy(model, x, y)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "final loss %.4f (from %.4f), accuracy %.1f%%, %.2fs (%.1f ms/step)\n",
		losses[len(losses)-1], losses[0], 100*acc, time.Since(start).Seconds(),
		float64(time.Since(start).Milliseconds())/float64(o.steps))
	return writePlot(out, o.plot, "webtensor run: spiral MLP training loss", losses)
}

// trainLoop runs step (one optimisation step returning its loss) steps
// times with the progress bar, printing the loss six times on the way, and
// returns the loss curve.
func trainLoop(out io.Writer, steps int, quiet bool, step func() (*core.Tensor, error)) ([]float64, error) {
	bar := newBar(steps, quiet)
	losses := make([]float64, 0, steps)
	for s := 1; s <= steps; s++ {
		loss, err := step()
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", s, err)
		}
		l, err := loss.Item()
		if err != nil {
			return nil, err
		}
		losses = append(losses, l)
		if bar != nil {
			bar.Describe(fmt.Sprintf("training  loss %.4f", l))
			_ = bar.Add(1)
		}
		if s == 1 || s%(max(steps/6, 1)) == 0 || s == steps {
			if bar != nil {
				_ = bar.Clear()
			}
			fmt.Fprintf(out, "step %4d  loss %.4f\n", s, l)
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	return losses, nil
}

// writePlot writes the loss curve when --plot names a file.
func writePlot(out io.Writer, path, title string, losses []float64) error {
	if path == "" {
		return nil
	}
	if err := plotLoss(path, title, losses); err != nil {
		return err
	}
	fmt.Fprintf(out, "loss curve written to %s\n", path)
	return nil
}

// runDevice is --device, checked, or the default device.
func runDevice(name string) (core.Device, error) {
	if name == "" {
		return core.DefaultDevice(), nil
	}
	d, err := core.ParseDevice(name)
	if err != nil {
		return d, err
	}
	if _, err := core.BackendFor(d); err != nil {
		return d, fail("device %s is not available: %v (devices here: %s; `webtensor doctor` says more)", d, err, openHere())
	}
	return d, nil
}

// newBar is the training progress bar on stderr (nil with --quiet).
func newBar(steps int, quiet bool) *progressbar.ProgressBar {
	if quiet {
		return nil
	}
	return progressbar.NewOptions(steps, progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription("training"), progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish())
}

// spirals makes `classes` interleaved noisy spirals (the cs231n data set),
// drawing the noise from webtensor's Philox stream so a seed reproduces it.
func spirals(n, classes int, seed uint64, dev core.Device) (x, y *core.Tensor) {
	xs := make([]float32, 0, 2*n*classes)
	ys := make([]int64, 0, n*classes)
	for c := 0; c < classes; c++ {
		for i := 0; i < n; i++ {
			r := float64(i) / float64(n-1)
			theta := float64(c)*4 + r*4 + 0.2*numerics.PhiloxNormal(seed, 1<<40, c*n+i)
			xs = append(xs, float32(r*math.Sin(theta)), float32(r*math.Cos(theta)))
			ys = append(ys, int64(c))
		}
	}
	return core.FromSlice(xs, core.Shape{n * classes, 2}, dev), core.FromSlice(ys, core.Shape{n * classes}, dev)
}

func mlp(hidden int, dev core.Device) (*nn.Sequential, error) {
	opt := nn.WithDevice(dev)
	l1, err := nn.NewLinear(2, hidden, opt)
	if err != nil {
		return nil, err
	}
	l2, err := nn.NewLinear(hidden, hidden, opt)
	if err != nil {
		return nil, err
	}
	l3, err := nn.NewLinear(hidden, 3, opt)
	if err != nil {
		return nil, err
	}
	return nn.NewSequential(l1, &nn.ReLU{}, l2, &nn.ReLU{}, l3)
}

func accuracy(model *nn.Sequential, x, y *core.Tensor) (float64, error) {
	var acc float64
	var err error
	core.NoGrad(func() {
		pred := core.Call1("argmax", core.Attrs{"axis": 1}, model.Forward(x))
		hits := core.Call1("eq", nil, pred, y).Cast(core.F32)
		acc, err = core.Call1("mean", nil, hits).Item()
	})
	return acc, err
}
