package conformance

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// The cross-SDK training check: every SDK with an nn library builds the
// same MLP (4-16-3) after the same seed, trains it for TrainSteps steps of
// Adam on the same seeded data, records the loss curve and saves a
// checkpoint; the report requires the curves to agree and every SDK's
// checkpoint to load into every other's model with the same values.
const (
	TrainSeed  = 2026
	TrainSteps = 20
	TrainLR    = 0.05
)

// TrainMLP runs the check on dev through the public Go API and saves the
// final weights to ckpt.
func TrainMLP(dev core.Device, ckpt string) ([]float64, error) {
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
	cfg.LR = TrainLR
	opt, err := nn.NewAdam(model.Parameters(), cfg)
	if err != nil {
		return nil, err
	}
	losses := make([]float64, 0, TrainSteps)
	for range TrainSteps {
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

func trainModel() (*nn.Sequential, error) {
	core.ManualSeed(TrainSeed)
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
