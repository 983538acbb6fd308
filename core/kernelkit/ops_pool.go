package kernelkit

// AdaptiveRange is the input range [start, end) that adaptive pooling
// averages into output index o: floor(o*in/out) to ceil((o+1)*in/out).
func AdaptiveRange(o, in, out int) (start, end int) {
	return o * in / out, ((o+1)*in + out - 1) / out
}
