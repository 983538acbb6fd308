package diffuse

import (
	"fmt"
	"slices"

	"github.com/webtensor/webtensor/core"
)

// Scheduler is one of diffusers' noise schedulers: the loop is
//
//	s.SetTimesteps(n)
//	x := initial noise * s.InitNoiseSigma()
//	for _, t := range s.Timesteps() {
//		in, _ := s.ScaleModelInput(x, t)
//		x, _ = s.Step(model(in, t), t, x, noise)
//	}
//
// Multistep schedulers (PNDM, LMS, DPM-Solver) keep the history of model
// outputs between Steps, so one Scheduler runs one loop at a time;
// SetTimesteps starts a new one. A Scheduler is not safe for concurrent use.
type Scheduler interface {
	// Name is the diffusers class name.
	Name() string
	// SetTimesteps prepares a loop of n steps and forgets the last loop's state.
	SetTimesteps(n int) error
	// Timesteps are the training timesteps the loop visits, in order.
	// Euler, LMS and Karras schedules have fractional ones (float32 values).
	Timesteps() []float64
	// InitNoiseSigma scales unit-variance noise into the first sample.
	InitNoiseSigma() float64
	// ScaleModelInput is the model's input at timestep t (sigma-based
	// schedulers divide by sqrt(sigma^2 + 1); the others return sample).
	ScaleModelInput(sample *core.Tensor, t float64) (*core.Tensor, error)
	// Step returns the previous (less noisy) sample. noise is drawn from only
	// by the stochastic schedulers (DDPM, DDIM with eta > 0, Euler
	// ancestral, SDE-DPM-Solver++) and may be nil for the others.
	Step(modelOutput *core.Tensor, t float64, sample *core.Tensor, noise Noise) (*core.Tensor, error)
	// AddNoise noises original samples to timesteps t: one timestep for the
	// whole batch, or one per batch element (the first dimension).
	AddNoise(original, noise *core.Tensor, t []float64) (*core.Tensor, error)
}

// Noise draws a standard normal tensor of the given shape, dtype and
// device, for the schedulers' stochastic steps. Tests pass the noise
// diffusers drew; SeededNoise is the usual choice.
type Noise func(shape core.Shape, dtype core.DType, dev core.Device) (*core.Tensor, error)

// SeededNoise draws from core's Philox stream (core.Randn): the same
// numbers on every device for a seed; each call continues the stream.
func SeededNoise(seed uint64) Noise {
	var offset int64
	return func(shape core.Shape, dtype core.DType, dev core.Device) (*core.Tensor, error) {
		t := core.Randn(core.Attrs{"shape": []int(shape), "dtype": dtype, "device": dev.String(),
			"seed": int64(seed), "offset": offset})
		offset += int64(shape.Numel())
		return t, t.Err()
	}
}

// New builds the scheduler class name (diffusers' spelling, see Names) from
// cfg. cfg.Class, when set, must be name: Config.For converts between classes.
func New(name string, cfg Config) (Scheduler, error) {
	if !slices.Contains(Names(), name) {
		return nil, unknownClass(name)
	}
	if cfg.Class == "" {
		cfg.Class = name
	}
	if cfg.Class != name {
		return nil, fmt.Errorf("diffuse: New(%q) given a %s config; convert it with cfg.For(%q)", name, cfg.Class, name)
	}
	b, err := newBase(&cfg)
	if err != nil {
		return nil, err
	}
	switch name {
	case "DDPMScheduler":
		return newDDPM(b)
	case "DDIMScheduler":
		return newDDIM(b)
	case "PNDMScheduler":
		return newPNDM(b)
	case "LMSDiscreteScheduler":
		return newSigmaScheduler(b, lms)
	case "EulerDiscreteScheduler":
		return newSigmaScheduler(b, euler)
	case "EulerAncestralDiscreteScheduler":
		return newSigmaScheduler(b, eulerAncestral)
	default:
		return newDPM(b)
	}
}

// base is what every scheduler shares: the config, the alphas_cumprod
// table and the loop's timesteps.
type base struct {
	cfg       Config
	ac        []float32 // alphas_cumprod
	timesteps []float64
}

func newBase(c *Config) (*base, error) {
	ac, err := alphasCumprod(c)
	if err != nil {
		return nil, err
	}
	return &base{cfg: *c, ac: ac}, nil
}

func (b *base) Name() string         { return b.cfg.Class }
func (b *base) Timesteps() []float64 { return slices.Clone(b.timesteps) }

// prediction checks prediction_type against the ones the class takes.
func (b *base) prediction(allowed ...string) error {
	if !slices.Contains(allowed, b.cfg.PredictionType) {
		return fmt.Errorf("diffuse: %s: prediction_type %q is not supported (use one of %v)", b.cfg.Class, b.cfg.PredictionType, allowed)
	}
	return nil
}

func (b *base) needTimesteps(op string) error {
	if b.timesteps == nil {
		return fmt.Errorf("diffuse: %s.%s before SetTimesteps", b.cfg.Class, op)
	}
	return nil
}

// checkStep checks what every Step needs: the timesteps set, and a model
// output of the sample's shape.
func (b *base) checkStep(m, x *core.Tensor) error {
	if err := b.needTimesteps("Step"); err != nil {
		return err
	}
	return sameShape(b.Name(), m, x)
}

// index is the position of t in the timesteps (the second of two equal
// ones, as diffusers' index_for_timestep), or an error naming t.
func (b *base) index(op string, t float64) (int, error) {
	var at []int
	for i, s := range b.timesteps {
		if s == t {
			at = append(at, i)
		}
	}
	switch len(at) {
	case 0:
		return 0, fmt.Errorf("diffuse: %s.%s: timestep %v is not in the schedule %v", b.cfg.Class, op, t, b.timesteps)
	case 1:
		return at[0], nil
	}
	return at[1], nil
}

// trainIndex checks that t is an integer training timestep.
func (b *base) trainIndex(op string, t float64) (int, error) {
	i := int(t)
	if float64(i) != t || i < 0 || i >= len(b.ac) {
		return 0, fmt.Errorf("diffuse: %s.%s: timestep %v is not an integer in [0, %d)", b.cfg.Class, op, t, len(b.ac))
	}
	return i, nil
}

// sameShape checks the model output against the sample.
func sameShape(name string, a, b *core.Tensor) error {
	if err := a.Err(); err != nil {
		return fmt.Errorf("diffuse: %s.Step: model output: %w", name, err)
	}
	if err := b.Err(); err != nil {
		return fmt.Errorf("diffuse: %s.Step: sample: %w", name, err)
	}
	if !slices.Equal(a.Shape(), b.Shape()) {
		return fmt.Errorf("diffuse: %s.Step: model output shape %v differs from sample shape %v", name, a.Shape(), b.Shape())
	}
	return nil
}

// draw calls noise for a tensor like x, checking what comes back.
func draw(name string, t float64, noise Noise, x *core.Tensor, dtype core.DType) (*core.Tensor, error) {
	if noise == nil {
		return nil, fmt.Errorf("diffuse: %s.Step at timestep %v draws noise: pass a Noise (diffuse.SeededNoise(seed))", name, t)
	}
	n, err := noise(x.Shape(), dtype, x.Device())
	if err == nil {
		err = n.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("diffuse: %s.Step: noise: %w", name, err)
	}
	if !slices.Equal(n.Shape(), x.Shape()) {
		return nil, fmt.Errorf("diffuse: %s.Step: noise has shape %v, the sample %v", name, n.Shape(), x.Shape())
	}
	return n.Cast(dtype), nil
}

// The tensor work: elementwise ops with host scalars, in x's dtype on x's
// device. Each mirrors one torch expression of diffusers (a float32 0-dim
// tensor or Python float times a tensor), in the same order, so float32
// results round the same way.

// mul is x * c.
func mul(x *core.Tensor, c float64) *core.Tensor {
	return x.Mul(core.Scalar(c, x.DType(), x.Device()))
}

// div is x / c.
func div(x *core.Tensor, c float64) *core.Tensor {
	return x.Div(core.Scalar(c, x.DType(), x.Device()))
}

// result returns x or its error, wrapped with the scheduler's name.
func result(name, op string, x *core.Tensor) (*core.Tensor, error) {
	if err := x.Err(); err != nil {
		return nil, fmt.Errorf("diffuse: %s.%s: %w", name, op, err)
	}
	return x, nil
}

// perBatch makes a [B, 1, 1, ...] (or scalar) tensor of coefficients for
// AddNoise from one value per timestep.
func perBatch(x *core.Tensor, vals []float64) (*core.Tensor, error) {
	if len(vals) == 1 {
		return core.Scalar(vals[0], x.DType(), x.Device()), nil
	}
	shape := x.Shape()
	if len(shape) == 0 || shape[0] != len(vals) {
		return nil, fmt.Errorf("%d timesteps for a batch of shape %v: give one, or one per batch element", len(vals), shape)
	}
	s := make(core.Shape, len(shape))
	for i := range s {
		s[i] = 1
	}
	s[0] = len(vals)
	return core.FromFloat64s(x.DType(), s, vals, x.Device()), nil
}

// checkAddNoise checks AddNoise's inputs.
func checkAddNoise(name string, original, noise *core.Tensor, t []float64) error {
	if err := original.Err(); err != nil {
		return fmt.Errorf("diffuse: %s.AddNoise: original: %w", name, err)
	}
	if err := noise.Err(); err != nil {
		return fmt.Errorf("diffuse: %s.AddNoise: noise: %w", name, err)
	}
	if !slices.Equal(original.Shape(), noise.Shape()) {
		return fmt.Errorf("diffuse: %s.AddNoise: noise shape %v differs from original shape %v", name, noise.Shape(), original.Shape())
	}
	if len(t) == 0 {
		return fmt.Errorf("diffuse: %s.AddNoise: no timesteps", name)
	}
	return nil
}

// addNoiseAlpha is the alphas_cumprod form of add_noise (DDPM, DDIM, PNDM):
// sqrt(a_t) * original + sqrt(1 - a_t) * noise, a_t in the sample's dtype.
func (b *base) addNoiseAlpha(original, noise *core.Tensor, t []float64) (*core.Tensor, error) {
	name := b.cfg.Class
	if err := checkAddNoise(name, original, noise, t); err != nil {
		return nil, err
	}
	sa, sb := make([]float64, len(t)), make([]float64, len(t))
	for i, ti := range t {
		k, err := b.trainIndex("AddNoise", ti)
		if err != nil {
			return nil, err
		}
		a := b.ac[k]
		sa[i], sb[i] = float64(sqrt32(a)), float64(sqrt32(1-a))
	}
	ca, err := perBatch(original, sa)
	if err != nil {
		return nil, fmt.Errorf("diffuse: %s.AddNoise: %w", name, err)
	}
	cb, _ := perBatch(original, sb)
	return result(name, "AddNoise", ca.Mul(original).Add(cb.Mul(noise)))
}
