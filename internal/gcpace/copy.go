package gcpace

// copyStep is how many bytes Copy moves at a time.
const copyStep = 1 << 20

// Copy copies src into dst (as copy, up to the shorter of the two) a MiB
// at a time. One copy is one memmove, which cannot be preempted: a
// collection that starts during a copy of tens of MB (a model's weights as
// they are imported) spins, signalling the thread, until the copy ends,
// and the page faults of fresh memory make such a copy long. Between steps
// the goroutine can stop for it. The steps go in order from the start, so
// dst may overlap src from below (a move down within one buffer).
func Copy(dst, src []byte) {
	src = src[:min(len(src), len(dst))]
	for len(src) > copyStep {
		copy(dst[:copyStep], src[:copyStep])
		dst, src = dst[copyStep:], src[copyStep:]
	}
	copy(dst, src)
}
