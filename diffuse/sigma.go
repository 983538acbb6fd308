package diffuse

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// LMS, Euler and Euler ancestral: the k-diffusion samplers, which work in
// sigma = sqrt((1 - alpha_cumprod) / alpha_cumprod) at fractional
// timesteps, scale the model's input by 1 / sqrt(sigma^2 + 1) and count
// their steps (diffusers' step_index).

type sigmaKind int

const (
	lms sigmaKind = iota
	euler
	eulerAncestral
)

type sigmaSched struct {
	*base
	kind   sigmaKind
	table  []float32 // sigma of each training timestep
	sigmas []float32 // of the loop's timesteps, then the final sigma
	step   int       // diffusers' step_index; -1 until the first call
	derivs []*core.Tensor
}

func newSigmaScheduler(b *base, kind sigmaKind) (Scheduler, error) {
	preds := []string{"epsilon", "v_prediction", "sample"}
	if kind == eulerAncestral {
		preds = preds[:2] // diffusers raises NotImplementedError for sample
	}
	if err := b.prediction(preds...); err != nil {
		return nil, err
	}
	if kind == euler && b.cfg.FinalSigmasType != "zero" && b.cfg.FinalSigmasType != "sigma_min" {
		return nil, fmt.Errorf("diffuse: %s: final_sigmas_type %q is not one of zero, sigma_min", b.cfg.Class, b.cfg.FinalSigmasType)
	}
	s := &sigmaSched{base: b, kind: kind, table: sigmaTable(b.ac), step: -1}
	s.sigmas = append(append([]float32{}, s.table...), 0) // before SetTimesteps, as diffusers
	reverse(s.sigmas[:len(s.table)])
	return s, nil
}

func (s *sigmaSched) SetTimesteps(n int) error {
	ts, err := spacing(&s.cfg, n, false)
	if err != nil {
		return err
	}
	for i, t := range ts {
		ts[i] = float64(float32(t))
	}
	sig := make([]float64, n)
	for i, t := range ts {
		sig[i] = interp(t, s.table)
	}
	if s.cfg.UseKarrasSigmas {
		sig = karras(sig[n-1], sig[0], n)
		logs := make([]float32, len(s.table))
		for i, v := range s.table {
			logs[i] = log32(v)
		}
		for i, v := range sig {
			ts[i] = float64(float32(sigmaToT(v, logs)))
		}
	}
	s.sigmas = make([]float32, n+1)
	for i, v := range sig {
		s.sigmas[i] = float32(v)
	}
	if s.kind == euler && s.cfg.FinalSigmasType == "sigma_min" {
		s.sigmas[n] = s.table[0]
	}
	s.timesteps, s.step, s.derivs = ts, -1, nil
	return nil
}

// setBegin places the loop at step i, diffusers' set_begin_index.
func (s *sigmaSched) setBegin(i int) error {
	s.step = i
	return nil
}

func (s *sigmaSched) InitNoiseSigma() float64 {
	m := float32(0)
	for _, v := range s.sigmas {
		m = max(m, v)
	}
	if s.cfg.TimestepSpacing == "linspace" || s.cfg.TimestepSpacing == "trailing" {
		return float64(m)
	}
	return float64(sqrt32(m*m + 1))
}

// at finds the step of timestep t: the first call places the loop (as
// diffusers' _init_step_index), later ones must follow the schedule.
func (s *sigmaSched) at(op string, t float64) (int, error) {
	if err := s.needTimesteps(op); err != nil {
		return 0, err
	}
	if s.step < 0 {
		i, err := s.index(op, t)
		if err != nil {
			return 0, err
		}
		s.step = i
	}
	return s.step, expectStep(s.Name(), s.timesteps, s.step, t)
}

func (s *sigmaSched) ScaleModelInput(x *core.Tensor, t float64) (*core.Tensor, error) {
	i, err := s.at("ScaleModelInput", t)
	if err != nil {
		return nil, err
	}
	sigma := s.sigmas[i]
	return result(s.Name(), "ScaleModelInput", div(x, float64(sqrt32(sigma*sigma+1))))
}

func (s *sigmaSched) Step(m *core.Tensor, t float64, x *core.Tensor, noise Noise) (*core.Tensor, error) {
	name := s.Name()
	if err := s.checkStep(m, x); err != nil {
		return nil, err
	}
	i, err := s.at("Step", t)
	if err != nil {
		return nil, err
	}
	sigma, next := s.sigmas[i], s.sigmas[i+1]
	var x0 *core.Tensor
	switch s.cfg.PredictionType {
	case "epsilon":
		x0 = x.Sub(mul(m, float64(sigma)))
	case "v_prediction":
		x0 = mul(m, float64(-sigma/sqrt32(sigma*sigma+1))).Add(div(x, float64(sigma*sigma+1)))
	default:
		x0 = m
	}
	deriv := div(x.Sub(x0), float64(sigma))
	var prev *core.Tensor
	switch s.kind {
	case euler:
		prev = x.Add(mul(deriv, float64(next-sigma)))
	case eulerAncestral:
		up := sqrt32(next * next * (sigma*sigma - next*next) / (sigma * sigma))
		down := sqrt32(next*next - up*up)
		z, err := draw(name, t, noise, m, m.DType())
		if err != nil {
			return nil, err
		}
		prev = x.Add(mul(deriv, float64(down-sigma))).Add(mul(z, float64(up)))
	default:
		prev = s.lmsStep(x, deriv, i)
	}
	s.step++
	return result(name, "Step", prev)
}

// lmsStep is linear multistep over the last four derivatives, with the
// coefficients integrated exactly (diffusers integrates the same
// polynomials numerically with scipy's quad).
func (s *sigmaSched) lmsStep(x, deriv *core.Tensor, i int) *core.Tensor {
	const maxOrder = 4
	s.derivs = append(s.derivs, deriv)
	if len(s.derivs) > maxOrder {
		s.derivs = s.derivs[1:]
	}
	order := min(i+1, maxOrder)
	var acc *core.Tensor
	// A loop begun part-way (img2img) has fewer derivatives than the order
	// its position implies; diffusers zips the coefficients with the
	// derivatives it has, so the surplus coefficients go unused.
	for k := 0; k < min(order, len(s.derivs)); k++ {
		term := mul(s.derivs[len(s.derivs)-1-k], s.lmsCoefficient(order, i, k))
		if acc == nil {
			acc = term
		} else {
			acc = acc.Add(term)
		}
	}
	return x.Add(acc)
}

// lmsCoefficient integrates the Lagrange basis polynomial of the current
// order's sigma points from sigma[t] to sigma[t+1] (Gauss-Legendre with
// three points: exact for these polynomials of degree <= 3).
func (s *sigmaSched) lmsCoefficient(order, t, cur int) float64 {
	sg := func(j int) float64 { return float64(s.sigmas[j]) }
	basis := func(tau float64) float64 {
		p := 1.0
		for k := 0; k < order; k++ {
			if k != cur {
				p *= (tau - sg(t-k)) / (sg(t-cur) - sg(t-k))
			}
		}
		return p
	}
	a, b := sg(t), sg(t+1)
	mid, half := (a+b)/2, (b-a)/2
	r := math.Sqrt(3.0 / 5)
	return half * (5.0/9*basis(mid-half*r) + 8.0/9*basis(mid) + 5.0/9*basis(mid+half*r))
}

func (s *sigmaSched) AddNoise(original, noise *core.Tensor, t []float64) (*core.Tensor, error) {
	name := s.Name()
	if err := checkAddNoise(name, original, noise, t); err != nil {
		return nil, err
	}
	if err := s.needTimesteps("AddNoise"); err != nil {
		return nil, err
	}
	sig := make([]float64, len(t))
	for i, ti := range t {
		k, err := s.index("AddNoise", ti)
		if err != nil {
			return nil, err
		}
		sig[i] = float64(s.sigmas[k])
	}
	c, err := perBatch(original, sig)
	if err != nil {
		return nil, fmt.Errorf("diffuse: %s.AddNoise: %w", name, err)
	}
	return result(name, "AddNoise", original.Add(noise.Mul(c)))
}
