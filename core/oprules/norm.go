package oprules

// Normalisation: the count batch statistics are taken over.

// BatchNormCount is the number of values each channel's statistics are
// taken over: every dim but the channel dim 1.
func BatchNormCount(x Shape) int {
	n := 1
	for i, d := range x {
		if i != 1 {
			n *= d
		}
	}
	return n
}
