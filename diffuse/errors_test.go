package diffuse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
)

func newT(t *testing.T, name string, edit func(*Config)) Scheduler {
	t.Helper()
	cfg, err := Defaults(name)
	require.NoError(t, err)
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(name, cfg)
	require.NoError(t, err)
	return s
}

func TestConfigErrors(t *testing.T) {
	_, err := ParseConfig([]byte(`{"_class_name": "DDIMScheduler", "beta_shedule": "linear"}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `DDIMScheduler has no option "beta_shedule"`)

	_, err = ParseConfig([]byte(`{"_class_name": "EulerDiscreteScheduler", "clip_sample": true}`))
	require.Error(t, err, "an option of another class")
	assert.Contains(t, err.Error(), `EulerDiscreteScheduler has no option "clip_sample"`)

	_, err = ParseConfig([]byte(`{"_class_name": "DDPMScheduler", "thresholding": true}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "thresholding=true is not supported")

	_, err = ParseConfig([]byte(`{"beta_schedule": "linear"}`))
	require.ErrorContains(t, err, "no _class_name")

	_, err = ParseConfig([]byte(`{"_class_name": "DDIMScheduler", "steps_offset": "one"}`))
	require.ErrorContains(t, err, "steps_offset")

	_, err = New("KarrasVeScheduler", Config{})
	require.Error(t, err)
	for _, n := range Names() {
		assert.Contains(t, err.Error(), n, "the error lists the known schedulers")
	}

	cfg, err := Defaults("DDPMScheduler")
	require.NoError(t, err)
	_, err = New("DDIMScheduler", cfg)
	require.ErrorContains(t, err, "cfg.For")

	for name, edit := range map[string]func(*Config){
		"DDPMScheduler":                   func(c *Config) { c.BetaSchedule = "cubic" },
		"PNDMScheduler":                   func(c *Config) { c.PredictionType = "sample" },
		"EulerAncestralDiscreteScheduler": func(c *Config) { c.PredictionType = "sample" },
		"DPMSolverMultistepScheduler":     func(c *Config) { c.AlgorithmType = "dpmsolver" },
	} {
		cfg, _ := Defaults(name)
		edit(&cfg)
		_, err := New(name, cfg)
		assert.Error(t, err, name)
	}
}

func TestConfigFor(t *testing.T) {
	ddim, err := ParseConfig([]byte(`{"_class_name": "DDIMScheduler", "beta_schedule": "scaled_linear",
		"beta_start": 0.00085, "beta_end": 0.012, "clip_sample": false, "set_alpha_to_one": false, "steps_offset": 1}`))
	require.NoError(t, err)
	e, err := ddim.For("EulerDiscreteScheduler")
	require.NoError(t, err)
	assert.Equal(t, "EulerDiscreteScheduler", e.Class)
	assert.Equal(t, "scaled_linear", e.BetaSchedule)
	assert.Equal(t, 0.012, e.BetaEnd)
	assert.Equal(t, 1, e.StepsOffset)
	assert.Equal(t, "leading", e.TimestepSpacing, "carried over, as diffusers' from_config does")
	_, err = New("EulerDiscreteScheduler", e)
	require.NoError(t, err)
}

func TestStepErrors(t *testing.T) {
	x := core.Zeros(core.Shape{1, 2, 2, 2}, core.F32, core.CPU)
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s := newT(t, name, nil)
			_, err := s.Step(x, 999, x, SeededNoise(1))
			require.ErrorContains(t, err, "before SetTimesteps")

			require.Error(t, s.SetTimesteps(0))
			require.NoError(t, s.SetTimesteps(10))
			ts := s.Timesteps()

			_, err = s.Step(x, 12345, x, SeededNoise(1))
			require.ErrorContains(t, err, "12345")

			y := core.Zeros(core.Shape{1, 2, 2, 3}, core.F32, core.CPU)
			_, err = s.Step(y, ts[0], x, SeededNoise(1))
			require.ErrorContains(t, err, "differs from sample shape")

			_, err = s.AddNoise(x, y, ts[:1])
			require.ErrorContains(t, err, "noise shape")
			_, err = s.AddNoise(x, x, []float64{ts[0], ts[1], ts[2]})
			require.ErrorContains(t, err, "one per batch element")

			// A whole loop with seeded noise runs and keeps float32.
			cur := core.Ones(core.Shape{1, 2, 2, 2}, core.F32, core.CPU)
			for _, tt := range ts {
				in, err := s.ScaleModelInput(cur, tt)
				require.NoError(t, err)
				cur, err = s.Step(mul(in, 0.1), tt, cur, SeededNoise(7))
				require.NoError(t, err)
			}
			assert.Equal(t, core.F32, cur.DType())
		})
	}
}

func TestStochasticStepNeedsNoise(t *testing.T) {
	s := newT(t, "EulerAncestralDiscreteScheduler", nil)
	require.NoError(t, s.SetTimesteps(5))
	x := core.Zeros(core.Shape{1, 4}, core.F32, core.CPU)
	_, err := s.Step(x, s.Timesteps()[0], x, nil)
	require.ErrorContains(t, err, "draws noise")
}

func TestOutOfOrderStep(t *testing.T) {
	s := newT(t, "DPMSolverMultistepScheduler", nil)
	require.NoError(t, s.SetTimesteps(5))
	ts := s.Timesteps()
	x := core.Zeros(core.Shape{1, 4}, core.F32, core.CPU)
	_, err := s.Step(x, ts[0], x, nil)
	require.NoError(t, err)
	_, err = s.Step(x, ts[2], x, nil)
	require.ErrorContains(t, err, "step 1 of 5")
}
