package numerics

import (
	"fmt"
	"hash/fnv"
)

// Sample inputs (core.Gen, core.Sample) draw from the Philox stream under a
// key derived from the op, the sample and the input, so the export tool, the
// gradient checker and every backend see the same values without storing
// them.

// SampleSeed is the Philox key for a sample's inputs.
func SampleSeed(op, sample string, input int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%d", op, sample, input)
	return h.Sum64()
}
