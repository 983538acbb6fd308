package diffuse

import (
	"fmt"
	"math"
)

// The noise schedule: betas, their cumulative products and the inference
// timesteps, computed as diffusers computes them. diffusers builds these
// tables as float32 tensors (torch.linspace in float32, cumprod, sqrt), so
// they are kept here as float32 values: the same table bit for bit, which
// matters because samplers divide by 1 - alpha_cumprod where it is tiny.

// linspace32 is torch.linspace(start, end, n, dtype=float32): float32
// arithmetic, the first half counted up from start, the second down from end.
func linspace32(start, end float64, n int) []float32 {
	out := make([]float32, n)
	if n == 1 {
		out[0] = float32(start)
		return out
	}
	s, e := float32(start), float32(end)
	step := (e - s) / float32(n-1)
	half := n / 2
	for i := range out {
		if i < half {
			out[i] = s + step*float32(i)
		} else {
			out[i] = e - step*float32(n-i-1)
		}
	}
	return out
}

// alphasCumprod returns diffusers' alphas_cumprod for the config.
func alphasCumprod(c *Config) ([]float32, error) {
	n := c.NumTrainTimesteps
	if n < 1 {
		return nil, fmt.Errorf("diffuse: %s: num_train_timesteps must be positive, got %d", c.Class, n)
	}
	var betas []float32
	switch {
	case c.TrainedBetas != nil:
		if len(c.TrainedBetas) != n {
			return nil, fmt.Errorf("diffuse: %s: trained_betas has %d values, num_train_timesteps is %d", c.Class, len(c.TrainedBetas), n)
		}
		for _, b := range c.TrainedBetas {
			betas = append(betas, float32(b))
		}
	case c.BetaSchedule == "linear":
		betas = linspace32(c.BetaStart, c.BetaEnd, n)
	case c.BetaSchedule == "scaled_linear":
		betas = linspace32(math.Sqrt(c.BetaStart), math.Sqrt(c.BetaEnd), n)
		for i, b := range betas {
			betas[i] = b * b
		}
	case c.BetaSchedule == "squaredcos_cap_v2":
		// betas_for_alpha_bar with the cosine alpha_bar, in float64, then float32.
		abar := func(t float64) float64 { return math.Pow(math.Cos((t+0.008)/1.008*math.Pi/2), 2) }
		for i := 0; i < n; i++ {
			t1, t2 := float64(i)/float64(n), float64(i+1)/float64(n)
			betas = append(betas, float32(math.Min(1-abar(t2)/abar(t1), 0.999)))
		}
	default:
		return nil, fmt.Errorf("diffuse: %s: beta_schedule %q is not one of linear, scaled_linear, squaredcos_cap_v2", c.Class, c.BetaSchedule)
	}
	// torch.cumprod on the CPU accumulates float32 in float64 and rounds
	// each output.
	out := make([]float32, n)
	acc := 1.0
	for i, b := range betas {
		acc *= float64(1 - b)
		out[i] = float32(acc)
	}
	return out, nil
}

// sigmaTable is ((1 - alphas_cumprod) / alphas_cumprod) ** 0.5 in float32.
func sigmaTable(ac []float32) []float32 {
	out := make([]float32, len(ac))
	for i, a := range ac {
		out[i] = sqrt32((1 - a) / a)
	}
	return out
}

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
func log32(x float32) float32  { return float32(math.Log(float64(x))) }
func exp32(x float32) float32  { return float32(math.Exp(float64(x))) }

// npLinspace is np.linspace(start, stop, n) in float64.
func npLinspace(start, stop float64, n int) []float64 {
	out := make([]float64, n)
	if n == 1 {
		out[0] = start
		return out
	}
	step := (stop - start) / float64(n-1)
	for i := range out {
		out[i] = float64(i)*step + start
	}
	out[n-1] = stop
	return out
}

// npArange is np.arange(start, stop, step) for a float step.
func npArange(start, stop, step float64) []float64 {
	n := int(math.Ceil((stop - start) / step))
	out := make([]float64, 0, max(n, 0))
	for i := 0; i < n; i++ {
		out = append(out, start+float64(i)*step)
	}
	return out
}

// spacing returns the inference timesteps of diffusers' timestep_spacing,
// descending, in float64 (rounded where diffusers rounds; the caller casts).
// last is the last training timestep + 1 (DPM-Solver's last_timestep), and
// extra one more step that DPM-Solver computes and drops.
func spacing(c *Config, n int, round bool) ([]float64, error) {
	T := c.NumTrainTimesteps
	if n < 1 || n > T {
		return nil, fmt.Errorf("diffuse: %s: SetTimesteps(%d): the number of steps must be in [1, num_train_timesteps=%d]", c.Class, n, T)
	}
	var ts []float64
	switch c.TimestepSpacing {
	case "linspace":
		ts = npLinspace(0, float64(T-1), n)
		if round {
			for i := range ts {
				ts[i] = math.RoundToEven(ts[i])
			}
		}
		reverse(ts)
	case "leading":
		ratio := T / n
		for i := n - 1; i >= 0; i-- {
			ts = append(ts, float64(i*ratio+c.StepsOffset))
		}
	case "trailing":
		ratio := float64(T) / float64(n)
		for _, t := range npArange(float64(T), 0, -ratio) {
			ts = append(ts, math.RoundToEven(t)-1)
		}
	default:
		return nil, fmt.Errorf("diffuse: %s: timestep_spacing %q is not one of linspace, leading, trailing", c.Class, c.TimestepSpacing)
	}
	return ts, nil
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// interp is np.interp(x, arange(len(fp)), fp) in float64.
func interp(x float64, fp []float32) float64 {
	n := len(fp)
	switch {
	case x <= 0:
		return float64(fp[0])
	case x >= float64(n-1):
		return float64(fp[n-1])
	}
	j := int(math.Floor(x))
	if float64(j) == x {
		return float64(fp[j])
	}
	slope := float64(fp[j+1]) - float64(fp[j])
	return slope*(x-float64(j)) + float64(fp[j])
}

// karras is _convert_to_karras: Karras et al.'s rho = 7 ramp from sigmaMax
// down to sigmaMin, in float64.
func karras(sigmaMin, sigmaMax float64, n int) []float64 {
	const rho = 7.0
	minInv, maxInv := math.Pow(sigmaMin, 1/rho), math.Pow(sigmaMax, 1/rho)
	out := make([]float64, n)
	for i, r := range npLinspace(0, 1, n) {
		out[i] = math.Pow(maxInv+r*(minInv-maxInv), rho)
	}
	return out
}

// sigmaToT is _sigma_to_t: the fractional training timestep whose sigma
// is sigma, interpolating log sigma linearly. logSigmas is float32, as
// numpy's log of the float32 table.
func sigmaToT(sigma float64, logSigmas []float32) float64 {
	ls := math.Log(math.Max(sigma, 1e-10))
	low := 0
	for i, l := range logSigmas {
		if ls-float64(l) >= 0 {
			low = i
		}
	}
	low = min(low, len(logSigmas)-2)
	lo, hi := logSigmas[low], logSigmas[low+1]
	w := (float64(lo) - ls) / float64(lo-hi)
	w = math.Min(math.Max(w, 0), 1)
	return (1-w)*float64(low) + w*float64(low+1)
}
