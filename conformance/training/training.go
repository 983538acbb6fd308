package training

import (
	"fmt"

	"github.com/webtensor/webtensor/conformance"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The check's constants: every SDK uses the same ones.
const (
	Seed  = 2026 // core.ManualSeed before the model is built
	Steps = 20   // Adam steps, one loss each
	LR    = 0.05 // Adam's learning rate
)

// Run runs the check on dev through the public Go API and saves the final
// weights to ckpt (none when ""). It returns the loss of each step.
func Run(dev core.Device, ckpt string) ([]float64, error) {
	if err := core.SetDefaultDevice(dev); err != nil {
		return nil, err
	}
	defer func() { _ = core.SetDefaultDevice(core.CPU) }()
	model, err := trainModel()
	if err != nil {
		return nil, err
	}
	x := core.Call1("randn", core.Attrs{"shape": []int{32, 4}, "seed": 11, "device": dev.String()})
	y := core.Call1("randint", core.Attrs{"shape": []int{32}, "low": 0, "high": 3, "seed": 12, "device": dev.String()})
	cfg := nn.DefaultAdam()
	cfg.LR = LR
	opt, err := nn.NewAdam(model.Parameters(), cfg)
	if err != nil {
		return nil, err
	}
	losses := make([]float64, 0, Steps)
	for range Steps {
		opt.ZeroGrad()
		loss := core.Call1("cross_entropy", nil, model.Forward(x), y)
		if err := loss.Backward(); err != nil {
			return nil, err
		}
		v, err := loss.Float64s()
		if err != nil {
			return nil, err
		}
		losses = append(losses, v[0])
		if err := opt.Step(); err != nil {
			return nil, err
		}
	}
	if ckpt != "" {
		if err := nn.Save(ckpt, model); err != nil {
			return nil, err
		}
	}
	return losses, nil
}

// Record runs the check on dev into res, a column of the Go runner
// (conformance.RunColumn), saving the weights to ckpt: its losses, or the
// error in place of the checkpoint's path, and its CPU fallbacks added to
// the column's, which counts from a reset before its cases.
func Record(res *conformance.Result, dev core.Device, ckpt string) {
	res.Checkpoint = ckpt
	var err error
	if res.Training, err = Run(dev, ckpt); err != nil {
		res.Training, res.Checkpoint = nil, "error: "+err.Error()
	}
	res.Fallbacks = append([]core.Fallback{}, core.Fallbacks()...)
}

func trainModel() (*nn.Sequential, error) {
	core.ManualSeed(Seed)
	l1, err := nn.NewLinear(4, 16)
	if err != nil {
		return nil, err
	}
	l2, err := nn.NewLinear(16, 3)
	if err != nil {
		return nil, err
	}
	return nn.NewSequential(l1, &nn.ReLU{}, l2)
}

// CheckpointValues loads a checkpoint written by any SDK into a fresh Go
// model on the CPU and returns its state as name -> values.
func CheckpointValues(path string) (map[string][]float64, error) {
	model, err := trainModel()
	if err != nil {
		return nil, err
	}
	if err := nn.Load(path, model); err != nil {
		return nil, err
	}
	out := map[string][]float64{}
	for _, s := range model.StateDict() {
		v, err := s.Value.Tensor().Float64s()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		out[s.Name] = v
	}
	return out, nil
}
