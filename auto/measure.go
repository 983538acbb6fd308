package auto

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Workload is the user's own job, run once per call: a training step, an
// inference graph. Run returns the KPI of that run, lower being better -
// seconds for Timed workloads, bytes or an error rate for others.
type Workload interface {
	Name() string
	Run() (float64, error)
}

type timed struct {
	name string
	fn   func() error
}

// Timed is a workload whose KPI is fn's wall time in seconds. fn must
// finish its work before returning (read a result back from an
// asynchronous device), or the time is only its submission.
func Timed(name string, fn func() error) Workload { return timed{name, fn} }

func (w timed) Name() string { return w.name }

func (w timed) Run() (float64, error) {
	start := time.Now()
	err := w.fn()
	return time.Since(start).Seconds(), err
}

// Measurement is one A/B comparison: KPI samples of the baseline (A) and
// the proposal (B), their medians, the relative gain of B and the
// one-sided p-value of "B is lower" from a Mann-Whitney U test.
type Measurement struct {
	Workload string    `json:"workload"`
	A        []float64 `json:"a"`
	B        []float64 `json:"b"`
	MedianA  float64   `json:"median_a"`
	MedianB  float64   `json:"median_b"`
	Gain     float64   `json:"gain"` // (MedianA - MedianB) / MedianA: 0.2 is 20% better
	P        float64   `json:"p"`
}

// Wins is whether B beat A by at least margin with confidence alpha.
func (m Measurement) Wins(margin, alpha float64) bool { return m.Gain >= margin && m.P <= alpha }

// Regressed is whether B measured worse than A: a lower median than the
// baseline's by any amount that the rank test supports at alpha, or a
// median worse by more than margin whatever the test says.
func (m Measurement) Regressed(margin, alpha float64) bool {
	return m.Gain <= -margin || (m.Gain < 0 && 1-m.P <= alpha)
}

// MeasureAB runs w interleaved between state A and state B: after one
// discarded warm-up run of each, pairs alternate A-B then B-A, so drift
// in the machine's load (other processes, frequency, caches) falls on both
// sides alike. setA and setB switch the state; they are not timed.
func MeasureAB(w Workload, setA, setB func() error, runs int) (Measurement, error) {
	if runs < 3 {
		return Measurement{}, fmt.Errorf("auto: an A/B test of %s needs at least 3 runs a side, got %d", w.Name(), runs)
	}
	m := Measurement{Workload: w.Name()}
	one := func(set func() error, side string) (float64, error) {
		if err := set(); err != nil {
			return 0, fmt.Errorf("auto: switching %s to %s: %w", w.Name(), side, err)
		}
		v, err := w.Run()
		if err != nil {
			return 0, fmt.Errorf("auto: workload %s on %s: %w", w.Name(), side, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("auto: workload %s on %s returned KPI %v", w.Name(), side, v)
		}
		return v, nil
	}
	for _, side := range []struct {
		set  func() error
		name string
	}{{setA, "A"}, {setB, "B"}} {
		if _, err := one(side.set, side.name); err != nil {
			return m, err
		}
	}
	for i := range runs {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, isB := range order {
			set, side := setA, "A"
			if isB {
				set, side = setB, "B"
			}
			v, err := one(set, side)
			if err != nil {
				return m, err
			}
			if isB {
				m.B = append(m.B, v)
			} else {
				m.A = append(m.A, v)
			}
		}
	}
	m.summarise()
	return m, nil
}

// summarise fills the medians, the gain and the p-value from A and B.
func (m *Measurement) summarise() {
	m.MedianA, m.MedianB = median(m.A), median(m.B)
	if m.MedianA != 0 {
		m.Gain = (m.MedianA - m.MedianB) / math.Abs(m.MedianA)
	} else if m.MedianB < 0 {
		m.Gain = 1
	}
	m.P = mannWhitneyLess(m.B, m.A)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mannWhitneyLess is the one-sided p-value that samples of x tend to be
// lower than those of y: the Mann-Whitney U statistic with mid-ranks for
// ties, tie-corrected variance and continuity correction, through the
// normal approximation. The test assumes nothing about the distribution,
// which suits run times: skewed, with a long tail of interrupted runs.
func mannWhitneyLess(x, y []float64) float64 {
	n1, n2 := float64(len(x)), float64(len(y))
	if n1 == 0 || n2 == 0 {
		return 1
	}
	type obs struct {
		v   float64
		inX bool
	}
	all := make([]obs, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	var rankX, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1 .. j
		t := float64(j - i)
		ties += t*t*t - t
		for k := i; k < j; k++ {
			if all[k].inX {
				rankX += mid
			}
		}
		i = j
	}
	// U counts pairs with x above y; small U means x lower.
	u := rankX - n1*(n1+1)/2
	n := n1 + n2
	sigma := math.Sqrt(n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return 0.5
	}
	z := (u - n1*n2/2 + 0.5) / sigma
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}
