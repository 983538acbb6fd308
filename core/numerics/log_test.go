package numerics

import (
	"math"
	"testing"
)

func TestLogOfSubnormals(t *testing.T) {
	for _, c := range []struct{ x, ln float64 }{
		{5e-324, -744.4400719213812}, {1e-310, -310 * math.Ln10}, {0x1p-1030, -1030 * math.Ln2},
		{0x1p-1022, -1022 * math.Ln2}, {1, 0}, {math.E, 1},
	} {
		if got := Log(c.x); math.Abs(got-c.ln) > 1e-13*math.Abs(c.ln) {
			t.Errorf("Log(%g) = %v, want %v", c.x, got, c.ln)
		}
		if got, want := Log10(c.x), c.ln/math.Ln10; math.Abs(got-want) > 1e-13*math.Abs(want) {
			t.Errorf("Log10(%g) = %v, want %v", c.x, got, want)
		}
	}
	if !math.IsInf(Log(0), -1) || !math.IsNaN(Log(-1)) || !math.IsInf(Log(math.Inf(1)), 1) {
		t.Error("Log's special cases")
	}
}
