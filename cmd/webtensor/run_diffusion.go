package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/numerics"
	"github.com/webtensor/webtensor/diffuse"
	"github.com/webtensor/webtensor/nn"
)

// The diffusion demo's data: 16×16 grey digits the command draws itself
// (a 5×7 bitmap font at twice its size, at a random place), so it needs no
// download. Each training batch is new draws: an endless data set.
const (
	digitSide  = 16
	trainSteps = 1000 // the DDPM's num_train_timesteps
)

var digitFont = [10][7]string{
	{"01110", "10001", "10011", "10101", "11001", "10001", "01110"},
	{"00100", "01100", "00100", "00100", "00100", "00100", "01110"},
	{"01110", "10001", "00001", "00010", "00100", "01000", "11111"},
	{"11111", "00010", "00100", "00010", "00001", "10001", "01110"},
	{"00010", "00110", "01010", "10010", "11111", "00010", "00010"},
	{"11111", "10000", "11110", "00001", "00001", "10001", "01110"},
	{"00110", "01000", "10000", "11110", "10001", "10001", "01110"},
	{"11111", "00001", "00010", "00100", "01000", "01000", "01000"},
	{"01110", "10001", "10001", "01110", "10001", "10001", "01110"},
	{"01110", "10001", "10001", "01111", "00001", "00010", "01100"},
}

// digitBatch draws n digits for batch number b: (n, 1, 16, 16) in [-1, 1]
// (ink 1, paper -1), digit and place from the Philox stream at seed.
func digitBatch(n, b int, seed uint64, dev core.Device) *core.Tensor {
	vals := make([]float32, n*digitSide*digitSide)
	for i := range vals {
		vals[i] = -1
	}
	for i := range n {
		u := func(k int) float64 { return numerics.PhiloxUniform(seed, uint64(b)<<8, 3*i+k) }
		d := int(u(0) * 10)
		ox, oy := int(u(1)*7), int(u(2)*3) // 16 - 2·5 + 1 and 16 - 2·7 + 1 places
		img := vals[i*digitSide*digitSide : (i+1)*digitSide*digitSide]
		for r, row := range digitFont[d] {
			for c, bit := range row {
				if bit != '1' {
					continue
				}
				for dy := range 2 {
					for dx := range 2 {
						img[(oy+2*r+dy)*digitSide+ox+2*c+dx] = 1
					}
				}
			}
		}
	}
	return core.FromSlice(vals, core.Shape{n, 1, digitSide, digitSide}, dev)
}

// diffusionUNet is the demo's UNet2DModel: two levels (width w and 2w),
// self-attention with two heads at 8×8, one grey channel.
func diffusionUNet(width int) diffuse.UNet2DConfig {
	c := diffuse.DefaultUNet2DConfig()
	c.SampleSize, c.InChannels, c.OutChannels = digitSide, 1, 1
	c.BlockOutChannels = []int{width, 2 * width}
	c.DownBlockTypes = []string{"DownBlock2D", "AttnDownBlock2D"}
	c.UpBlockTypes = []string{"AttnUpBlock2D", "UpBlock2D"}
	c.LayersPerBlock, c.NormNumGroups, c.AttentionHeadDim = 1, 8, width // two heads at 8×8
	return c
}

// runDiffusion is `webtensor run --task diffusion`: a DDPM (UNet2DModel,
// epsilon prediction, cosine betas) trained on drawn digits, then DDIM
// sampling of a grid of new ones.
func runDiffusion(cmd *cobra.Command, o runOptions) error {
	f := cmd.Flags()
	// The other tasks' defaults suit small MLPs; a UNet wants more steps,
	// a smaller rate and a narrower width.
	if !f.Changed("steps") {
		o.steps = 400
	}
	if !f.Changed("lr") {
		o.lr = 2e-3
	}
	if !f.Changed("hidden") {
		o.hidden = 16
	}
	switch {
	case o.steps <= 0 || o.batch <= 0 || o.sampleSteps <= 0 || o.samples <= 0:
		return fail("--steps, --batch, --sample-steps and --samples must be positive (got %d, %d, %d, %d)",
			o.steps, o.batch, o.sampleSteps, o.samples)
	case o.hidden < 8 || o.hidden%8 != 0:
		return fail("--hidden must be a positive multiple of 8 for the UNet's group norms (got %d)", o.hidden)
	case o.sampleSteps > trainSteps:
		return fail("--sample-steps %d is more than the %d training timesteps", o.sampleSteps, trainSteps)
	case !(o.lr > 0) || math.IsInf(o.lr, 0):
		return fail("--lr must be a positive number, got %v", o.lr)
	}
	dev, err := runDevice(o.device)
	if err != nil {
		return err
	}
	b, _ := core.BackendFor(dev)
	out := cmd.OutOrStdout()
	model, err := diffuse.NewUNet2D(diffusionUNet(o.hidden), o.seed, diffuse.WithDevice(dev))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "webtensor %s: DDPM on drawn 16x16 digits, UNet2DModel %d-%d (%d parameters), batch %d, Adam lr %g, %d steps on %s (%s)\n",
		core.Version, o.hidden, 2*o.hidden, nn.NumParameters(model), o.batch, o.lr, o.steps, dev, b.Capabilities().Description)
	cfg, err := diffuse.Defaults("DDPMScheduler")
	if err != nil {
		return err
	}
	// Cosine betas keep more of a 16-pixel image's signal at mid timesteps
	// than the linear schedule, which a small model learns faster from.
	cfg.BetaSchedule, cfg.NumTrainTimesteps = "squaredcos_cap_v2", trainSteps
	ddpm, err := diffuse.New("DDPMScheduler", cfg)
	if err != nil {
		return err
	}
	adam := nn.DefaultAdam()
	adam.LR = o.lr
	opt, err := nn.NewAdam(model.Parameters(), adam)
	if err != nil {
		return err
	}
	noise := diffuse.SeededNoise(o.seed + 1)
	start := time.Now()
	step := 0
	losses, err := trainLoop(out, o.steps, o.quiet, func() (*core.Tensor, error) {
		x0 := digitBatch(o.batch, step, o.seed, dev)
		ts := make([]float64, o.batch)
		for i := range ts {
			ts[i] = math.Floor(numerics.PhiloxUniform(o.seed+2, uint64(step), i) * trainSteps)
		}
		step++
		eps, err := noise(x0.Shape(), core.F32, dev)
		if err != nil {
			return nil, err
		}
		xt, err := ddpm.AddNoise(x0, eps, ts)
		if err != nil {
			return nil, err
		}
		opt.ZeroGrad()
		pred, err := model.ForwardTimesteps(xt, core.FromFloat64s(core.I64, core.Shape{o.batch}, ts, dev))
		if err != nil {
			return nil, err
		}
		loss := core.Call1("mean", nil, core.Call1("mse_loss", nil, pred, eps))
		if err := loss.Backward(); err != nil {
			return nil, err
		}
		return loss, opt.Step()
	})
	if err != nil {
		return err
	}
	trained := time.Since(start)
	fmt.Fprintf(out, "final loss %.4f (from %.4f), %.2fs (%.1f ms/step)\n", losses[len(losses)-1], losses[0],
		trained.Seconds(), float64(trained.Milliseconds())/float64(o.steps))

	model.Train(false)
	dcfg, err := cfg.For("DDIMScheduler")
	if err != nil {
		return err
	}
	ddim, err := diffuse.New("DDIMScheduler", dcfg)
	if err != nil {
		return err
	}
	start = time.Now()
	images, err := diffuse.NewUNet2DPipeline(model, ddim).Generate(o.samples, o.sampleSteps, diffuse.SeededNoise(o.seed+3))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "sampled %d digits with DDIM in %d steps, %.2fs\n", o.samples, o.sampleSteps, time.Since(start).Seconds())
	if o.images != "" {
		if err := writeGrid(o.images, images); err != nil {
			return err
		}
		fmt.Fprintf(out, "samples written to %s\n", o.images)
	}
	if o.save != "" {
		// The DDIM config it sampled with: the pipeline then samples the
		// same way wherever it is loaded.
		if err := diffuse.SavePipeline(o.save, model, dcfg); err != nil {
			return err
		}
		fmt.Fprintf(out, "pipeline saved to %s (a diffusers DDIMPipeline folder)\n", o.save)
	}
	return writePlot(out, o.plot, "webtensor run --task diffusion: DDPM training loss (noise MSE)", losses)
}

// writeGrid writes images (B, 1, H, W) in [0, 1] as a PNG grid, each
// pixel 4×4 and a 4-pixel gap around every image.
func writeGrid(path string, images *core.Tensor) error {
	vals, err := images.Float64s()
	if err != nil {
		return err
	}
	s := images.Shape()
	n, h, w := s[0], s[2], s[3]
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	rows := (n + cols - 1) / cols
	const zoom, gap = 4, 4
	cw, ch := w*zoom+gap, h*zoom+gap
	img := image.NewGray(image.Rect(0, 0, cols*cw+gap, rows*ch+gap))
	for i := range img.Pix {
		img.Pix[i] = 40
	}
	for k := range n {
		x0, y0 := gap+(k%cols)*cw, gap+(k/cols)*ch
		for y := range h * zoom {
			for x := range w * zoom {
				v := vals[k*h*w+(y/zoom)*w+x/zoom]
				img.SetGray(x0+x, y0+y, color.Gray{Y: uint8(math.Round(255 * math.Max(0, math.Min(1, v))))})
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing samples: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("writing samples %s: %w", path, err)
	}
	return f.Close()
}
