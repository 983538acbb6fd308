package diffuse

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// DDPM, DDIM and PNDM: the schedulers that work on alphas_cumprod at
// integer training timesteps. Coefficients are float32 arithmetic on the
// float32 table, as diffusers computes them with 0-dim float32 tensors.

// alphaBase is what the three share beyond base: the model takes the
// sample as it is, the initial noise has sigma 1, and noise is added by
// alphas_cumprod.
type alphaBase struct{ *base }

func (s alphaBase) InitNoiseSigma() float64 { return 1 }

func (s alphaBase) ScaleModelInput(sample *core.Tensor, t float64) (*core.Tensor, error) {
	return result(s.Name(), "ScaleModelInput", sample)
}

func (s alphaBase) AddNoise(original, noise *core.Tensor, t []float64) (*core.Tensor, error) {
	return s.addNoiseAlpha(original, noise, t)
}

type ddpm struct{ alphaBase }

func newDDPM(b *base) (Scheduler, error) {
	if err := b.prediction("epsilon", "sample", "v_prediction"); err != nil {
		return nil, err
	}
	switch b.cfg.VarianceType {
	case "fixed_small", "fixed_small_log", "fixed_large":
	default:
		return nil, fmt.Errorf("diffuse: DDPMScheduler: variance_type %q is not supported (fixed_small, fixed_small_log, fixed_large)", b.cfg.VarianceType)
	}
	return &ddpm{alphaBase{b}}, nil
}

func (s *ddpm) SetTimesteps(n int) error {
	ts, err := spacing(&s.cfg, n, true)
	if err == nil {
		s.timesteps = ts
	}
	return err
}

// predX0 is the predicted original sample of DDPM and DDIM, clipped.
func predX0(c *Config, ap float32, m, x *core.Tensor) *core.Tensor {
	bp := 1 - ap
	var x0 *core.Tensor
	switch c.PredictionType {
	case "epsilon":
		x0 = div(x.Sub(mul(m, float64(sqrt32(bp)))), float64(sqrt32(ap)))
	case "sample":
		x0 = m
	default: // v_prediction
		x0 = mul(x, float64(sqrt32(ap))).Sub(mul(m, float64(sqrt32(bp))))
	}
	if c.ClipSample {
		x0 = x0.Clamp(core.Attrs{"min": -c.ClipSampleRange, "max": c.ClipSampleRange})
	}
	return x0
}

func (s *ddpm) Step(m *core.Tensor, t float64, x *core.Tensor, noise Noise) (*core.Tensor, error) {
	name := s.Name()
	if err := s.checkStep(m, x); err != nil {
		return nil, err
	}
	i, err := s.index("Step", t)
	if err != nil {
		return nil, err
	}
	ti := int(t)
	ap, apPrev := s.ac[ti], float32(1)
	if i+1 < len(s.timesteps) {
		apPrev = s.ac[int(s.timesteps[i+1])]
	}
	bp, bpPrev := 1-ap, 1-apPrev
	curAlpha := ap / apPrev
	curBeta := 1 - curAlpha
	x0 := predX0(&s.cfg, ap, m, x)
	coefX0 := sqrt32(apPrev) * curBeta / bp
	coefX := sqrt32(curAlpha) * bpPrev / bp
	prev := mul(x0, float64(coefX0)).Add(mul(x, float64(coefX)))
	if ti > 0 {
		z, err := draw(name, t, noise, m, m.DType())
		if err != nil {
			return nil, err
		}
		variance := max(bpPrev/bp*curBeta, float32(1e-20))
		var std float32
		switch s.cfg.VarianceType {
		case "fixed_small":
			std = sqrt32(variance)
		case "fixed_small_log":
			std = exp32(0.5 * log32(variance))
		default: // fixed_large
			std = sqrt32(curBeta)
		}
		prev = prev.Add(mul(z, float64(std)))
	}
	return result(name, "Step", prev)
}

type ddim struct {
	alphaBase
	final float32 // alphas_cumprod before the first training step
}

func newDDIM(b *base) (Scheduler, error) {
	if err := b.prediction("epsilon", "sample", "v_prediction"); err != nil {
		return nil, err
	}
	if b.cfg.Eta < 0 {
		return nil, fmt.Errorf("diffuse: DDIMScheduler: eta must be >= 0, got %v", b.cfg.Eta)
	}
	s := &ddim{alphaBase: alphaBase{b}, final: b.ac[0]}
	if b.cfg.SetAlphaToOne {
		s.final = 1
	}
	return s, nil
}

func (s *ddim) SetTimesteps(n int) error {
	ts, err := spacing(&s.cfg, n, true)
	if err == nil {
		s.timesteps = ts
	}
	return err
}

func (s *ddim) Step(m *core.Tensor, t float64, x *core.Tensor, noise Noise) (*core.Tensor, error) {
	name := s.Name()
	if err := s.checkStep(m, x); err != nil {
		return nil, err
	}
	if _, err := s.index("Step", t); err != nil {
		return nil, err
	}
	// As diffusers: the previous timestep is t - T/n whatever the spacing.
	ti := int(t)
	prevT := ti - s.cfg.NumTrainTimesteps/len(s.timesteps)
	ap, apPrev := s.ac[ti], s.final
	if prevT >= 0 {
		apPrev = s.ac[prevT]
	}
	bp := 1 - ap
	x0 := predX0(&s.cfg, ap, m, x)
	var eps *core.Tensor
	switch s.cfg.PredictionType {
	case "epsilon":
		eps = m
	case "sample":
		eps = div(x.Sub(mul(m, float64(sqrt32(ap)))), float64(sqrt32(bp)))
	default:
		eps = mul(m, float64(sqrt32(ap))).Add(mul(x, float64(sqrt32(bp))))
	}
	variance := (1 - apPrev) / bp * (1 - ap/apPrev)
	std := float32(s.cfg.Eta) * sqrt32(variance)
	dir := mul(eps, float64(sqrt32(1-apPrev-std*std)))
	prev := mul(x0, float64(sqrt32(apPrev))).Add(dir)
	if s.cfg.Eta > 0 {
		z, err := draw(name, t, noise, m, m.DType())
		if err != nil {
			return nil, err
		}
		prev = prev.Add(mul(z, float64(std)))
	}
	return result(name, "Step", prev)
}

// pndm is pseudo numerical methods: four Runge-Kutta (PRK) steps to start,
// unless skip_prk_steps, then linear multistep (PLMS) over the last four
// model outputs.
type pndm struct {
	alphaBase
	final    float32
	n        int // num_inference_steps
	prk      int // how many of the timesteps are PRK steps
	counter  int
	begin    int // the loop's first step (img2img starts part-way)
	ets      []*core.Tensor
	curModel *core.Tensor // nil is diffusers' cur_model_output = 0
	curX     *core.Tensor
}

func newPNDM(b *base) (Scheduler, error) {
	if err := b.prediction("epsilon", "v_prediction"); err != nil {
		return nil, err
	}
	s := &pndm{alphaBase: alphaBase{b}, final: b.ac[0]}
	if b.cfg.SetAlphaToOne {
		s.final = 1
	}
	return s, nil
}

func (s *pndm) SetTimesteps(n int) error {
	desc, err := spacing(&s.cfg, n, true)
	if err != nil {
		return err
	}
	ts := append([]float64(nil), desc...)
	reverse(ts) // diffusers' _timesteps, ascending
	var all []float64
	if s.cfg.SkipPRKSteps {
		if len(ts) < 2 {
			return fmt.Errorf("diffuse: PNDMScheduler: SetTimesteps(%d): needs at least 2 steps", n)
		}
		plms := append(append(append([]float64{}, ts[:len(ts)-1]...), ts[len(ts)-2]), ts[len(ts)-1])
		reverse(plms)
		all, s.prk = plms, 0
	} else {
		if len(ts) < 4 {
			return fmt.Errorf("diffuse: PNDMScheduler: SetTimesteps(%d): the PRK warm-up needs at least 4 steps (or skip_prk_steps)", n)
		}
		half := float64(s.cfg.NumTrainTimesteps / n / 2)
		var e []float64 // _timesteps[-4:].repeat(2) + tile([0, half], 4), without its last
		for _, v := range ts[len(ts)-4:] {
			e = append(e, v, v+half)
		}
		e = e[:len(e)-1]
		var prk []float64 // e.repeat(2)[1:-1], reversed
		for _, v := range e {
			prk = append(prk, v, v)
		}
		prk = prk[1 : len(prk)-1]
		reverse(prk)
		plms := append([]float64{}, ts[:len(ts)-3]...)
		reverse(plms)
		all, s.prk = append(prk, plms...), len(prk)
	}
	s.timesteps, s.n = all, n
	s.counter, s.begin, s.ets, s.curModel, s.curX = 0, 0, nil, nil, nil
	return nil
}

// setBegin starts the loop at step i. diffusers' PNDMScheduler has no
// set_begin_index: its counter starts at 0 wherever the loop begins, which
// is what the PLMS steps count (their warm-up), so only the timestep check
// is offset. The PRK warm-up looks timesteps up by the counter in the full
// schedule, so starting it part-way would mix two positions; it is refused.
func (s *pndm) setBegin(i int) error {
	if i > 0 && s.prk > 0 {
		return fmt.Errorf("diffuse: PNDMScheduler: a loop that starts at step %d cannot run the PRK warm-up; set skip_prk_steps", i)
	}
	s.begin = i
	return nil
}

func (s *pndm) Step(m *core.Tensor, t float64, x *core.Tensor, _ Noise) (*core.Tensor, error) {
	name := s.Name()
	if err := s.checkStep(m, x); err != nil {
		return nil, err
	}
	if err := expectStep(name, s.timesteps, s.begin+s.counter, t); err != nil {
		return nil, err
	}
	n := s.n
	var prev *core.Tensor
	if s.counter < s.prk {
		prev = s.stepPRK(m, int(t), x, n)
	} else {
		prev = s.stepPLMS(m, int(t), x, n)
	}
	s.counter++
	return result(name, "Step", prev)
}

func (s *pndm) stepPRK(m *core.Tensor, t int, x *core.Tensor, n int) *core.Tensor {
	diff := 0
	if s.counter%2 == 0 {
		diff = s.cfg.NumTrainTimesteps / n / 2
	}
	prevT := t - diff
	t = int(s.timesteps[s.counter/4*4])
	acc := func(c float64) {
		if s.curModel == nil {
			s.curModel = mul(m, c)
		} else {
			s.curModel = s.curModel.Add(mul(m, c))
		}
	}
	switch s.counter % 4 {
	case 0:
		acc(1.0 / 6)
		s.ets = append(s.ets, m)
		s.curX = x
	case 1, 2:
		acc(1.0 / 3)
	case 3:
		m = s.curModel.Add(mul(m, 1.0/6))
		s.curModel = nil
	}
	cur := x
	if s.curX != nil {
		cur = s.curX
	}
	return s.prevSample(cur, t, prevT, m)
}

func (s *pndm) stepPLMS(m *core.Tensor, t int, x *core.Tensor, n int) *core.Tensor {
	stride := s.cfg.NumTrainTimesteps / n
	prevT := t - stride
	if s.counter != 1 {
		if len(s.ets) > 3 {
			s.ets = s.ets[len(s.ets)-3:]
		}
		s.ets = append(s.ets, m)
	} else {
		prevT, t = t, t+stride
	}
	e := func(k int) *core.Tensor { return s.ets[len(s.ets)-k] }
	switch {
	case len(s.ets) == 1 && s.counter == 0:
		s.curX = x
	case len(s.ets) == 1 && s.counter == 1:
		m = div(m.Add(e(1)), 2)
		x, s.curX = s.curX, nil
	case len(s.ets) == 2:
		m = div(mul(e(1), 3).Sub(e(2)), 2)
	case len(s.ets) == 3:
		m = div(mul(e(1), 23).Sub(mul(e(2), 16)).Add(mul(e(3), 5)), 12)
	default:
		m = mul(mul(e(1), 55).Sub(mul(e(2), 59)).Add(mul(e(3), 37)).Sub(mul(e(4), 9)), 1.0/24)
	}
	return s.prevSample(x, t, prevT, m)
}

// prevSample is PNDM's _get_prev_sample (formula (9) of the paper).
func (s *pndm) prevSample(x *core.Tensor, t, prevT int, m *core.Tensor) *core.Tensor {
	ap, apPrev := s.ac[t], s.final
	if prevT >= 0 {
		apPrev = s.ac[prevT]
	}
	bp, bpPrev := 1-ap, 1-apPrev
	if s.cfg.PredictionType == "v_prediction" {
		m = mul(m, float64(sqrt32(ap))).Add(mul(x, float64(sqrt32(bp))))
	}
	coefX := sqrt32(apPrev / ap)
	denom := ap*sqrt32(bpPrev) + sqrt32(ap*bp*apPrev)
	return mul(x, float64(coefX)).Sub(div(mul(m, float64(apPrev-ap)), float64(denom)))
}

// expectStep checks that t is the timestep the loop is at: multistep
// schedulers count their steps, as diffusers' do, and a timestep out of
// order would silently mix histories.
func expectStep(name string, ts []float64, i int, t float64) error {
	if i >= len(ts) {
		return fmt.Errorf("diffuse: %s.Step: all %d steps are done; call SetTimesteps to start a new loop", name, len(ts))
	}
	if ts[i] != t {
		return fmt.Errorf("diffuse: %s.Step: step %d of %d is at timestep %v, got %v", name, i, len(ts), ts[i], t)
	}
	return nil
}
