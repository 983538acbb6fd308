package abi

import "github.com/webtensor/webtensor/nn"

// Gradient clipping (wt_clip_grad_*) and learning-rate schedules
// (wt_lr_schedule), nn's, for the SDKs' training loops.

// gradParams wraps the tensors of handles that have a gradient (torch's
// clipping skips the others).
func gradParams(what string, handles []int64) ([]*nn.Parameter, error) {
	ts, err := paramList(handles, what+": parameter")
	if err != nil {
		return nil, err
	}
	var ps []*nn.Parameter
	for _, t := range ts {
		if t.Grad() == nil {
			continue
		}
		p, err := nn.ParameterOf(t)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// ClipGradNorm is wt_clip_grad_norm: torch's clip_grad_norm_, on the
// device (nothing waits); the total norm comes back as a 0-d tensor.
func ClipGradNorm(handles []int64, maxNorm, normType float64) (int64, error) {
	ps, err := gradParams("wt_clip_grad_norm", handles)
	if err != nil {
		return 0, err
	}
	total, err := nn.ClipGradNormP(ps, maxNorm, normType)
	if err != nil {
		return 0, err
	}
	return NewOutput(total)
}

// ClipGradValue is wt_clip_grad_value: torch's clip_grad_value_.
func ClipGradValue(handles []int64, clip float64) error {
	ps, err := gradParams("wt_clip_grad_value", handles)
	if err != nil {
		return err
	}
	return nn.ClipGradValue(ps, clip)
}

// A schedule is a pure function of the base rate and the step (torch's
// closed forms), so the ABI exports it as one: an SDK's scheduler object
// keeps its step count and calls LRSchedule, and there is no schedule
// object to free or to keep in step with the SDK's optimiser settings.
var schedules = map[string]func(s *settings) (nn.Schedule, error){
	"step": func(s *settings) (nn.Schedule, error) {
		c := nn.StepLR{Gamma: 0.1}
		return c, firstOf(s.integer("step_size", &c.StepSize), s.float("gamma", &c.Gamma), s.done("step_size", "gamma"))
	},
	"multistep": func(s *settings) (nn.Schedule, error) {
		c := nn.MultiStepLR{Gamma: 0.1}
		return c, firstOf(s.ints("milestones", &c.Milestones), s.float("gamma", &c.Gamma), s.done("milestones", "gamma"))
	},
	"exponential": func(s *settings) (nn.Schedule, error) {
		var c nn.ExponentialLR
		return c, firstOf(s.float("gamma", &c.Gamma), s.done("gamma"))
	},
	"cosine": func(s *settings) (nn.Schedule, error) {
		var c nn.CosineAnnealingLR
		return c, firstOf(s.integer("t_max", &c.TMax), s.float("eta_min", &c.EtaMin), s.done("t_max", "eta_min"))
	},
	"linear": func(s *settings) (nn.Schedule, error) {
		c := nn.LinearLR{StartFactor: 1.0 / 3, EndFactor: 1, TotalIters: 5}
		return c, firstOf(s.float("start_factor", &c.StartFactor), s.float("end_factor", &c.EndFactor),
			s.integer("total_iters", &c.TotalIters), s.done("start_factor", "end_factor", "total_iters"))
	},
	"warmup_cosine": func(s *settings) (nn.Schedule, error) {
		var warmup, total int
		var etaMin float64
		if err := firstOf(s.integer("warmup", &warmup), s.integer("total", &total), s.float("eta_min", &etaMin),
			s.done("warmup", "total", "eta_min")); err != nil {
			return nil, err
		}
		return nn.WarmupCosine(warmup, total, etaMin)
	},
}

// LRSchedule is wt_lr_schedule: the learning rate at step (0 before the
// first scheduler step) of the schedule kind with its settings, from the
// base rate. Bad settings are an error at every step, the first included,
// so an SDK checks them by asking for step 0 when its scheduler is made.
func LRSchedule(kind string, attrs AttrList, base float64, step int64) (float64, error) {
	mk, ok := schedules[kind]
	if !ok {
		return 0, Invalidf("wt_lr_schedule: unknown schedule %q (step, multistep, exponential, cosine, linear, warmup_cosine)", kind)
	}
	s, err := newSettings(kind+" schedule", attrs)
	if err != nil {
		return 0, err
	}
	sched, err := mk(s)
	if err != nil {
		return 0, err
	}
	if err := nn.ValidateSchedule(sched); err != nil {
		return 0, err
	}
	if step < 0 || step > 1<<40 {
		return 0, Invalidf("wt_lr_schedule: step %d out of range (0..2^40)", step)
	}
	return sched.LR(base, int(step)), nil
}
