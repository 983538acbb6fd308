package nn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// Expected rates come from torch 2.15: an SGD optimiser with lr 0.1 and the
// named torch.optim.lr_scheduler, recording param_groups[0]["lr"] before the
// first step and after each opt.step(); sched.step().
func TestSchedulesMatchTorch(t *testing.T) {
	cases := []struct {
		name     string
		schedule nn.Schedule
		want     []float64
	}{
		{"StepLR(step_size=3, gamma=0.5)", nn.StepLR{StepSize: 3, Gamma: 0.5},
			[]float64{0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125, 0.0125}},
		{"CosineAnnealingLR(T_max=10, eta_min=0.001), past T_max", nn.CosineAnnealingLR{TMax: 10, EtaMin: 0.001},
			[]float64{0.1, 0.09757729755661011, 0.0905463412215599, 0.07959536998847742, 0.0657963412215599, 0.0505,
				0.03520365877844011, 0.02140463001152259, 0.010453658778440109, 0.0034227024433899004, 0.001,
				0.0034227024433899004, 0.01045365877844014, 0.02140463001152267, 0.035203658778440255,
				0.05050000000000022, 0.06579634122156018, 0.07959536998847777, 0.09054634122156031,
				0.09757729755661054, 0.10000000000000045, 0.09757729755661054, 0.09054634122156033,
				0.07959536998847778, 0.0657963412215602, 0.050500000000000225}},
		{"LinearLR(start_factor=0.1, total_iters=5)", nn.LinearWarmup{Steps: 5, StartFactor: 0.1},
			[]float64{0.010000000000000002, 0.028000000000000004, 0.046000000000000006, 0.064, 0.082, 0.1, 0.1, 0.1, 0.1}},
		{"SequentialLR(LinearLR(0.25, 3), CosineAnnealingLR(7), milestones=[3])",
			nn.Sequence{Schedules: []nn.Schedule{nn.LinearWarmup{Steps: 3, StartFactor: 0.25}, nn.CosineAnnealingLR{TMax: 7}}, Milestones: []int{3}},
			[]float64{0.025, 0.05, 0.07500000000000001, 0.1, 0.09504844339512096, 0.08117449009293669, 0.061126046697815725,
				0.03887395330218429, 0.018825509907063328, 0.004951556604879048, 0.0, 0.004951556604879043, 0.018825509907063314}},
		{"MultiStepLR(milestones=[2, 5], gamma=0.5)", nn.MultiStepLR{Milestones: []int{2, 5}, Gamma: 0.5},
			[]float64{0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025}},
		{"ExponentialLR(gamma=0.9)", nn.ExponentialLR{Gamma: 0.9},
			[]float64{0.1, 0.09000000000000001, 0.08100000000000002, 0.07290000000000002, 0.06561000000000002, 0.05904900000000002}},
		{"LinearLR(start_factor=0.5, end_factor=0.1, total_iters=4)", nn.LinearLR{StartFactor: 0.5, EndFactor: 0.1, TotalIters: 4},
			[]float64{0.05, 0.04000000000000001, 0.030000000000000006, 0.020000000000000004, 0.01, 0.01, 0.01}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := must(nn.NewParameter(core.Zeros(core.Shape{1}, core.F32)))(t)
			opt := must(nn.NewSGD([]*nn.Parameter{p}, nn.SGDConfig{LR: 0.1}))(t)
			sched := must(nn.NewScheduler(opt, c.schedule))(t)
			got := []float64{opt.LR()}
			for range len(c.want) - 1 {
				sched.Step()
				got = append(got, opt.LR())
			}
			assert.InDeltaSlice(t, c.want, got, 1e-15)
			assert.Equal(t, len(c.want)-1, sched.Steps())
		})
	}
}

func TestWarmupCosine(t *testing.T) {
	s, err := nn.WarmupCosine(4, 12, 0.01)
	require.NoError(t, err)
	assert.Equal(t, 0.0, s.LR(1, 0), "warm-up starts from zero")
	assert.InDelta(t, 0.5, s.LR(1, 2), 1e-15)
	assert.Equal(t, 1.0, s.LR(1, 4), "the peak is the base rate, at the end of warm-up")
	assert.InDelta(t, 0.01, s.LR(1, 12), 1e-15, "cosine reaches eta_min at total")

	_, err = nn.WarmupCosine(5, 5, 0)
	assert.ErrorContains(t, err, "warmup < total")
}

func TestScheduleValidation(t *testing.T) {
	p := must(nn.NewParameter(core.Zeros(core.Shape{1}, core.F32)))(t)
	opt := must(nn.NewSGD([]*nn.Parameter{p}, nn.SGDConfig{LR: 0.1}))(t)
	_, err := nn.NewScheduler(opt, nn.StepLR{})
	assert.ErrorContains(t, err, "step size")
	_, err = nn.NewScheduler(opt, nn.Sequence{Schedules: []nn.Schedule{nn.StepLR{StepSize: 1}, nn.StepLR{StepSize: 1}}})
	assert.ErrorContains(t, err, "milestones")
	_, err = nn.NewScheduler(opt, nil)
	assert.ErrorContains(t, err, "nil schedule")
	assert.Equal(t, 0.1, opt.LR(), "a rejected schedule leaves the rate alone")

	custom := must(nn.NewScheduler(opt, nn.ScheduleFunc(func(base float64, step int) float64 { return base / float64(step+1) })))(t)
	custom.Step()
	assert.InDelta(t, 0.05, opt.LR(), 1e-15)
}
