package parallel

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// deviceOf is a single-device plan's device in this process.
func deviceOf(p Plan) (core.Device, error) {
	if p.Strategy != "single" || len(p.Devices) != 1 {
		return core.Device{}, fmt.Errorf("parallel: %s is not a single-device plan", p.Name())
	}
	return core.ParseDevice(p.Devices[0])
}

// planFits checks that p can run on workers: a single-device plan's
// device (returned), or as many workers as its degree.
func planFits(p Plan, workers []*Worker) (core.Device, error) {
	if p.Strategy == "single" {
		return deviceOf(p)
	}
	if p.Degree > len(workers) {
		return core.Device{}, fmt.Errorf("parallel: %s needs %d workers, got %d", p.Name(), p.Degree, len(workers))
	}
	return core.Device{}, nil
}

// RunMLPPlan runs a step of m the way plan p says, on the workers for
// plans across processes.
func RunMLPPlan(p Plan, m MLP, workers []*Worker, x, y []float32, ws [][]float32) (Step, error) {
	dev, err := planFits(p, workers)
	if err != nil {
		return Step{}, err
	}
	switch p.Strategy {
	case "single":
		return RunSingle(m, dev, x, y, ws)
	case "data", "sequence": // an MLP mixes no positions: its rows are its sequence
		return RunDP(m, workers[:p.Degree], x, y, ws)
	case "tensor":
		return RunTP(m, workers[:p.Degree], x, y, ws)
	case "pipeline":
		if p.Degree != len(m.Dims)-1 {
			return Step{}, fmt.Errorf("parallel: the MLP pipeline puts one layer on each worker: %d layers, %s", len(m.Dims)-1, p.Name())
		}
		return RunPP(m, workers[:p.Degree], p.Micro, x, y, ws)
	}
	return Step{}, fmt.Errorf("parallel: no MLP executor for %s", p.Name())
}

// RunBlockPlan runs a step of b the way plan p says.
func RunBlockPlan(p Plan, b Block, workers []*Worker, x, y []float32, ws [][]float32) (Step, error) {
	dev, err := planFits(p, workers)
	if err != nil {
		return Step{}, err
	}
	switch p.Strategy {
	case "single":
		return RunBlockSingle(b, dev, x, y, ws)
	case "data":
		return RunBlockDP(b, workers[:p.Degree], x, y, ws)
	case "sequence":
		return RunBlockSP(b, workers[:p.Degree], x, y, ws)
	case "tensor":
		return RunBlockTP(b, workers[:p.Degree], x, y, ws)
	}
	return Step{}, fmt.Errorf("parallel: no block executor for %s", p.Name())
}
