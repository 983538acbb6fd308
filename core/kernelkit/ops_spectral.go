package kernelkit

import "math"

// FFTScale is the factor a transform of length n applies for a norm mode;
// inverse selects the inverse direction.
func FFTScale(norm string, n int, inverse bool) float64 {
	switch {
	case norm == "ortho":
		return 1 / math.Sqrt(float64(n))
	case (norm == "forward") != inverse:
		return 1 / float64(n)
	}
	return 1
}
