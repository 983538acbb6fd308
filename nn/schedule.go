package nn

import (
	"fmt"
	"math"
	"sort"
)

// Schedule gives the learning rate at a step, from the optimiser's base
// (initial) learning rate. The built-in schedules are torch's closed forms,
// so they agree with torch.optim.lr_scheduler step for step.
type Schedule interface {
	LR(base float64, step int) float64
}

// ScheduleFunc adapts a function to Schedule.
type ScheduleFunc func(base float64, step int) float64

// LR calls f.
func (f ScheduleFunc) LR(base float64, step int) float64 { return f(base, step) }

// StepLR is torch's StepLR: the rate is multiplied by Gamma every StepSize steps.
type StepLR struct {
	StepSize int
	Gamma    float64
}

// LR is base·Gamma^⌊step/StepSize⌋.
func (s StepLR) LR(base float64, step int) float64 {
	if s.StepSize <= 0 {
		return base
	}
	return base * math.Pow(s.Gamma, float64(step/s.StepSize))
}

// Validate rejects a step size below 1.
func (s StepLR) Validate() error {
	if s.StepSize < 1 {
		return fmt.Errorf("nn: StepLR: step size must be >= 1, got %d", s.StepSize)
	}
	return nil
}

// MultiStepLR is torch's MultiStepLR: the rate is multiplied by Gamma at
// each milestone step (milestones increasing).
type MultiStepLR struct {
	Milestones []int
	Gamma      float64
}

// LR is base·Gamma^(the number of milestones <= step).
func (s MultiStepLR) LR(base float64, step int) float64 {
	n := sort.SearchInts(s.Milestones, step+1)
	return base * math.Pow(s.Gamma, float64(n))
}

// Validate rejects milestones that are not increasing.
func (s MultiStepLR) Validate() error {
	for i, m := range s.Milestones {
		if m < 0 || (i > 0 && m <= s.Milestones[i-1]) {
			return fmt.Errorf("nn: MultiStepLR: milestones must be increasing and >= 0, got %v", s.Milestones)
		}
	}
	return nil
}

// ExponentialLR is torch's ExponentialLR: the rate is multiplied by Gamma
// every step.
type ExponentialLR struct {
	Gamma float64
}

// LR is base·Gamma^step.
func (s ExponentialLR) LR(base float64, step int) float64 {
	return base * math.Pow(s.Gamma, float64(step))
}

// LinearLR is torch's LinearLR: the factor on the base rate moves linearly
// from StartFactor to EndFactor over TotalIters steps, then stays.
type LinearLR struct {
	StartFactor, EndFactor float64
	TotalIters             int
}

// LR is base·(StartFactor + (EndFactor-StartFactor)·min(step, TotalIters)/TotalIters).
func (s LinearLR) LR(base float64, step int) float64 {
	if s.TotalIters <= 0 {
		return base * s.EndFactor
	}
	frac := float64(min(step, s.TotalIters)) / float64(s.TotalIters)
	return base * (s.StartFactor + (s.EndFactor-s.StartFactor)*frac)
}

// Validate rejects what torch rejects: a start factor outside (0, 1], an
// end factor outside [0, 1], a negative length.
func (s LinearLR) Validate() error {
	if !(s.StartFactor > 0 && s.StartFactor <= 1) || !(s.EndFactor >= 0 && s.EndFactor <= 1) || s.TotalIters < 0 {
		return fmt.Errorf("nn: LinearLR: want 0 < StartFactor <= 1, 0 <= EndFactor <= 1 and TotalIters >= 0, got %v, %v and %d",
			s.StartFactor, s.EndFactor, s.TotalIters)
	}
	return nil
}

// CosineAnnealingLR is torch's CosineAnnealingLR: half a cosine from the
// base rate down to EtaMin over TMax steps (and back up after, as torch's
// closed form does).
type CosineAnnealingLR struct {
	TMax   int
	EtaMin float64
}

// LR is EtaMin + (base-EtaMin)·(1+cos(π·step/TMax))/2.
func (s CosineAnnealingLR) LR(base float64, step int) float64 {
	if s.TMax <= 0 {
		return base
	}
	return s.EtaMin + (base-s.EtaMin)*(1+math.Cos(math.Pi*float64(step)/float64(s.TMax)))/2
}

// Validate rejects a period below 1.
func (s CosineAnnealingLR) Validate() error {
	if s.TMax < 1 {
		return fmt.Errorf("nn: CosineAnnealingLR: TMax must be >= 1, got %d", s.TMax)
	}
	return nil
}

// LinearWarmup ramps the rate linearly from StartFactor·base to base over
// Steps steps, then holds it: torch's LinearLR with end_factor 1.
type LinearWarmup struct {
	Steps       int
	StartFactor float64
}

// LR is base·(StartFactor + (1-StartFactor)·min(step, Steps)/Steps).
func (s LinearWarmup) LR(base float64, step int) float64 {
	if s.Steps <= 0 {
		return base
	}
	frac := float64(min(step, s.Steps)) / float64(s.Steps)
	return base * (s.StartFactor + (1-s.StartFactor)*frac)
}

// Validate rejects a negative length or a start factor outside [0, 1].
func (s LinearWarmup) Validate() error {
	if s.Steps < 0 || s.StartFactor < 0 || s.StartFactor > 1 {
		return fmt.Errorf("nn: LinearWarmup: want Steps >= 0 and StartFactor in [0, 1], got %d and %g", s.Steps, s.StartFactor)
	}
	return nil
}

// Sequence runs Schedules one after another, like torch's SequentialLR:
// schedule i+1 takes over at step Milestones[i] and counts its own steps from
// there; every schedule starts from the optimiser's base rate.
type Sequence struct {
	Schedules  []Schedule
	Milestones []int
}

// LR delegates to the schedule whose span holds step.
func (s Sequence) LR(base float64, step int) float64 {
	if len(s.Schedules) == 0 {
		return base
	}
	idx, start := 0, 0
	for idx < len(s.Milestones) && idx+1 < len(s.Schedules) && step >= s.Milestones[idx] {
		start = s.Milestones[idx]
		idx++
	}
	return s.Schedules[idx].LR(base, step-start)
}

// Validate checks there is one milestone between each pair of schedules, in
// increasing order, and validates the parts.
func (s Sequence) Validate() error {
	if len(s.Schedules) == 0 || len(s.Milestones) != len(s.Schedules)-1 {
		return fmt.Errorf("nn: Sequence: %d schedules need %d milestones, got %d", len(s.Schedules), max(len(s.Schedules)-1, 0), len(s.Milestones))
	}
	for i, m := range s.Milestones {
		if m < 1 || (i > 0 && m <= s.Milestones[i-1]) {
			return fmt.Errorf("nn: Sequence: milestones must be positive and increasing, got %v", s.Milestones)
		}
	}
	for _, part := range s.Schedules {
		if err := validateSchedule(part); err != nil {
			return err
		}
	}
	return nil
}

// WarmupCosine is the usual transformer schedule: linear warm-up from 0 over
// warmup steps, then cosine annealing to etaMin by step total.
func WarmupCosine(warmup, total int, etaMin float64) (Sequence, error) {
	if warmup < 1 || total <= warmup {
		return Sequence{}, fmt.Errorf("nn: WarmupCosine: want 1 <= warmup < total, got warmup %d, total %d", warmup, total)
	}
	s := Sequence{
		Schedules:  []Schedule{LinearWarmup{Steps: warmup}, CosineAnnealingLR{TMax: total - warmup, EtaMin: etaMin}},
		Milestones: []int{warmup},
	}
	return s, s.Validate()
}

// ValidateSchedule checks s as NewScheduler does: not nil, and its
// Validate method, where it has one, passes.
func ValidateSchedule(s Schedule) error { return validateSchedule(s) }

func validateSchedule(s Schedule) error {
	if s == nil {
		return fmt.Errorf("nn: nil schedule")
	}
	if v, ok := s.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// Scheduler drives an optimiser's learning rate from a Schedule. Call Step
// once per epoch or per iteration, after the optimiser's Step, as in torch.
type Scheduler struct {
	opt      Optimizer
	schedule Schedule
	base     float64
	step     int
}

// NewScheduler takes the optimiser's current rate as the base rate and sets
// the rate for step 0.
func NewScheduler(opt Optimizer, s Schedule) (*Scheduler, error) {
	if opt == nil {
		return nil, fmt.Errorf("nn: scheduler: nil optimizer")
	}
	if err := validateSchedule(s); err != nil {
		return nil, err
	}
	sc := &Scheduler{opt: opt, schedule: s, base: opt.LR()}
	opt.SetLR(s.LR(sc.base, 0))
	return sc, nil
}

// Step advances one step and updates the optimiser's rate.
func (s *Scheduler) Step() {
	s.step++
	s.opt.SetLR(s.schedule.LR(s.base, s.step))
}

// Steps is how many times Step has been called (torch's last_epoch).
func (s *Scheduler) Steps() int { return s.step }

// LR is the rate the optimiser now uses.
func (s *Scheduler) LR() float64 { return s.opt.LR() }
