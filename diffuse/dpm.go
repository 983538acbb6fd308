package diffuse

import (
	"fmt"
	"math"

	"github.com/webtensor/webtensor/core"
)

// DPM-Solver++ (multistep, orders 1-3) and its SDE variant, in the data
// prediction form: every model output is first turned into a prediction
// of x0, and the update integrates exactly in lambda = log(alpha / sigma)
// with the last one or two x0 predictions as a polynomial.

type dpm struct {
	*base
	table     []float32 // sigma of each training timestep
	sigmas    []float32
	step      int
	outs      []*core.Tensor // the last solver_order x0 predictions, oldest first
	lowerNums int            // diffusers' lower_order_nums
}

func newDPM(b *base) (Scheduler, error) {
	c := &b.cfg
	if err := b.prediction("epsilon", "sample", "v_prediction"); err != nil {
		return nil, err
	}
	switch {
	case c.AlgorithmType != "dpmsolver++" && c.AlgorithmType != "sde-dpmsolver++":
		return nil, fmt.Errorf("diffuse: DPMSolverMultistepScheduler: algorithm_type %q is not supported (dpmsolver++, sde-dpmsolver++; diffusers deprecates the others)", c.AlgorithmType)
	case c.SolverOrder < 1 || c.SolverOrder > 3:
		return nil, fmt.Errorf("diffuse: DPMSolverMultistepScheduler: solver_order must be 1, 2 or 3, got %d", c.SolverOrder)
	case c.SolverType != "midpoint" && c.SolverType != "heun":
		return nil, fmt.Errorf("diffuse: DPMSolverMultistepScheduler: solver_type %q is not one of midpoint, heun", c.SolverType)
	case c.FinalSigmasType != "zero" && c.FinalSigmasType != "sigma_min":
		return nil, fmt.Errorf("diffuse: DPMSolverMultistepScheduler: final_sigmas_type %q is not one of zero, sigma_min", c.FinalSigmasType)
	case c.VarianceType != "":
		return nil, fmt.Errorf("diffuse: DPMSolverMultistepScheduler: variance_type %q (learned variance) is not supported", c.VarianceType)
	}
	return &dpm{base: b, table: sigmaTable(b.ac), step: -1}, nil
}

func (s *dpm) SetTimesteps(n int) error {
	c := &s.cfg
	T := c.NumTrainTimesteps // diffusers' last_timestep, with lambda_min_clipped = -inf
	if n < 1 || n > T {
		return fmt.Errorf("diffuse: %s: SetTimesteps(%d): the number of steps must be in [1, num_train_timesteps=%d]", c.Class, n, T)
	}
	var ts []float64
	switch c.TimestepSpacing {
	case "linspace":
		for _, v := range npLinspace(0, float64(T-1), n+1) {
			ts = append(ts, math.RoundToEven(v))
		}
		reverse(ts)
		ts = ts[:n]
	case "leading":
		ratio := T / (n + 1)
		for i := n; i >= 1; i-- {
			ts = append(ts, float64(i*ratio+c.StepsOffset))
		}
	case "trailing":
		for _, v := range npArange(float64(T), 0, -float64(T)/float64(n)) {
			ts = append(ts, math.RoundToEven(v)-1)
		}
	default:
		return fmt.Errorf("diffuse: %s: timestep_spacing %q is not one of linspace, leading, trailing", c.Class, c.TimestepSpacing)
	}
	var sig []float64
	if c.UseKarrasSigmas {
		sig = karras(float64(s.table[0]), float64(s.table[T-1]), n)
		logs := make([]float32, T)
		for i, v := range s.table {
			logs[i] = log32(v)
		}
		ts = ts[:0]
		for _, v := range sig {
			t := sigmaToT(v, logs)
			if c.BetaSchedule != "squaredcos_cap_v2" {
				t = math.RoundToEven(t)
			}
			ts = append(ts, math.Trunc(t)) // .to(int64)
		}
	} else {
		for _, t := range ts {
			sig = append(sig, interp(t, s.table))
		}
	}
	s.sigmas = make([]float32, len(sig)+1)
	for i, v := range sig {
		s.sigmas[i] = float32(v)
	}
	if c.FinalSigmasType == "sigma_min" {
		s.sigmas[len(sig)] = s.table[0]
	}
	s.timesteps, s.step, s.lowerNums = ts, -1, 0
	s.outs = make([]*core.Tensor, c.SolverOrder)
	return nil
}

func (s *dpm) InitNoiseSigma() float64 { return 1 }

// setBegin places the loop at step i, diffusers' set_begin_index; the
// solver's history starts empty there, so its first steps are lower order.
func (s *dpm) setBegin(i int) error {
	s.step = i
	return nil
}

func (s *dpm) ScaleModelInput(x *core.Tensor, t float64) (*core.Tensor, error) {
	return result(s.Name(), "ScaleModelInput", x)
}

// alphaSigma is _sigma_to_alpha_sigma_t: alpha_t and sigma_t of a
// k-diffusion sigma, in float32.
func alphaSigma(sigma float32) (float32, float32) {
	a := 1 / sqrt32(sigma*sigma+1)
	return a, sigma * a
}

func lambda(a, s float32) float32 { return log32(a) - log32(s) }

func (s *dpm) Step(m *core.Tensor, t float64, x *core.Tensor, noise Noise) (*core.Tensor, error) {
	name, c := s.Name(), &s.cfg
	if err := s.checkStep(m, x); err != nil {
		return nil, err
	}
	if s.step < 0 {
		i, err := s.index("Step", t)
		if err != nil {
			return nil, err
		}
		s.step = i
	}
	if err := expectStep(name, s.timesteps, s.step, t); err != nil {
		return nil, err
	}
	i, n := s.step, len(s.timesteps)
	lowerFinal := i == n-1 && (c.EulerAtFinal || (c.LowerOrderFinal && n < 15) || c.FinalSigmasType == "zero")
	lowerSecond := i == n-2 && c.LowerOrderFinal && n < 15

	a, sg := alphaSigma(s.sigmas[i])
	var x0 *core.Tensor
	switch c.PredictionType {
	case "epsilon":
		x0 = div(x.Sub(mul(m, float64(sg))), float64(a))
	case "v_prediction":
		x0 = mul(x, float64(a)).Sub(mul(m, float64(sg)))
	default:
		x0 = m
	}
	copy(s.outs, s.outs[1:])
	s.outs[len(s.outs)-1] = x0

	var z *core.Tensor
	if c.AlgorithmType == "sde-dpmsolver++" {
		var err error
		if z, err = draw(name, t, noise, x, core.F32); err != nil {
			return nil, err
		}
		z = z.Cast(x.DType())
	}
	var prev *core.Tensor
	switch {
	case c.SolverOrder == 1 || s.lowerNums < 1 || lowerFinal:
		prev = s.first(x0, x, z)
	case c.SolverOrder == 2 || s.lowerNums < 2 || lowerSecond:
		prev = s.second(x, z)
	default:
		prev = s.third(x, z)
	}
	if s.lowerNums < c.SolverOrder {
		s.lowerNums++
	}
	s.step++
	return result(name, "Step", prev)
}

// lambdas returns alpha_t, sigma_t of the target and lambda of the target
// and of the current and k earlier points.
func (s *dpm) lambdas(k int) (at, st float32, lt float32, ls []float32, ss0 float32) {
	i := s.step
	at, st = alphaSigma(s.sigmas[i+1])
	lt = lambda(at, st)
	for j := 0; j <= k; j++ {
		a, sg := alphaSigma(s.sigmas[i-j])
		if j == 0 {
			ss0 = sg
		}
		ls = append(ls, lambda(a, sg))
	}
	return
}

// noiseTerm is sigma_t * sqrt(1 - exp(-2h)) * z of the SDE variant.
func noiseTerm(prev, z *core.Tensor, st, h float32) *core.Tensor {
	if z == nil {
		return prev
	}
	return prev.Add(mul(z, float64(st*sqrt32(1-exp32(-2*h)))))
}

func (s *dpm) first(x0, x, z *core.Tensor) *core.Tensor {
	at, st, lt, ls, ss := s.lambdas(0)
	h := lt - ls[0]
	if z == nil {
		return mul(x, float64(st/ss)).Sub(mul(x0, float64(at*(exp32(-h)-1))))
	}
	e2 := exp32(-2 * h)
	out := mul(x, float64(st/ss*exp32(-h))).Add(mul(x0, float64(at*(1-e2))))
	return noiseTerm(out, z, st, h)
}

func (s *dpm) second(x, z *core.Tensor) *core.Tensor {
	at, st, lt, ls, ss0 := s.lambdas(1)
	m0, m1 := s.outs[len(s.outs)-1], s.outs[len(s.outs)-2]
	h, h0 := lt-ls[0], ls[0]-ls[1]
	r0 := h0 / h
	d1 := mul(m0.Sub(m1), float64(1/r0))
	e := exp32(-h)
	heun := s.cfg.SolverType == "heun"
	if z == nil {
		out := mul(x, float64(st/ss0)).Sub(mul(m0, float64(at*(e-1))))
		if heun {
			return out.Add(mul(d1, float64(at*((e-1)/h+1))))
		}
		return out.Sub(mul(d1, float64(0.5*(at*(e-1)))))
	}
	e2 := exp32(-2 * h)
	out := mul(x, float64(st/ss0*e)).Add(mul(m0, float64(at*(1-e2))))
	if heun {
		out = out.Add(mul(d1, float64(at*((1-e2)/(-2*h)+1))))
	} else {
		out = out.Add(mul(d1, float64(0.5*(at*(1-e2)))))
	}
	return noiseTerm(out, z, st, h)
}

func (s *dpm) third(x, z *core.Tensor) *core.Tensor {
	at, st, lt, ls, ss0 := s.lambdas(2)
	k := len(s.outs)
	m0, m1, m2 := s.outs[k-1], s.outs[k-2], s.outs[k-3]
	h, h0, h1 := lt-ls[0], ls[0]-ls[1], ls[1]-ls[2]
	r0, r1 := h0/h, h1/h
	d10 := mul(m0.Sub(m1), float64(1/r0))
	d11 := mul(m1.Sub(m2), float64(1/r1))
	d1 := d10.Add(mul(d10.Sub(d11), float64(r0/(r0+r1))))
	d2 := mul(d10.Sub(d11), float64(1/(r0+r1)))
	e := exp32(-h)
	if z == nil {
		return mul(x, float64(st/ss0)).Sub(mul(m0, float64(at*(e-1)))).
			Add(mul(d1, float64(at*((e-1)/h+1)))).
			Sub(mul(d2, float64(at*((e-1+h)/(h*h)-0.5))))
	}
	e2 := exp32(-2 * h)
	out := mul(x, float64(st/ss0*e)).Add(mul(m0, float64(at*(1-e2)))).
		Add(mul(d1, float64(at*((1-e2)/(-2*h)+1)))).
		Add(mul(d2, float64(at*((1-e2-2*h)/((2*h)*(2*h))-0.5))))
	return noiseTerm(out, z, st, h)
}

func (s *dpm) AddNoise(original, noise *core.Tensor, t []float64) (*core.Tensor, error) {
	name := s.Name()
	if err := checkAddNoise(name, original, noise, t); err != nil {
		return nil, err
	}
	if err := s.needTimesteps("AddNoise"); err != nil {
		return nil, err
	}
	as, ss := make([]float64, len(t)), make([]float64, len(t))
	for i, ti := range t {
		k, err := s.index("AddNoise", ti)
		if err != nil {
			return nil, err
		}
		a, sg := alphaSigma(s.sigmas[k])
		as[i], ss[i] = float64(a), float64(sg)
	}
	ca, err := perBatch(original, as)
	if err != nil {
		return nil, fmt.Errorf("diffuse: %s.AddNoise: %w", name, err)
	}
	cs, _ := perBatch(original, ss)
	return result(name, "AddNoise", ca.Mul(original).Add(cs.Mul(noise)))
}
