package numerics

import "math"

// Log is math.Log with subnormal arguments right: Go's amd64 assembly Log
// treats them as if they were near the smallest normal (Log(5e-324) gives
// -709.09, not -744.44), so they are scaled by 2^54 first.
func Log(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// Log10 is math.Log10 with subnormal arguments right (see Log).
func Log10(x float64) float64 { return Log(x) * (1 / math.Ln10) }
