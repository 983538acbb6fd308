package kernelkit

import "slices"

// EinsumLabels is how one pairwise einsum contraction sorts the labels of
// its operands a and b: Batch (shared and kept), Contracted (shared and
// summed), AFree and BFree (in one operand only), each in operand order.
// The CPU and CUDA backends build the same batched product from it.
type EinsumLabels struct {
	Batch, Contracted, AFree, BFree []int
}

// SplitEinsumLabels sorts a's and b's labels for their contraction; keep
// says which shared labels stay in the result (become batch dims).
func SplitEinsumLabels(a, b []int, keep func(label int) bool) EinsumLabels {
	var s EinsumLabels
	for _, l := range a {
		switch {
		case !slices.Contains(b, l):
			s.AFree = append(s.AFree, l)
		case keep(l):
			s.Batch = append(s.Batch, l)
		default:
			s.Contracted = append(s.Contracted, l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			s.BFree = append(s.BFree, l)
		}
	}
	return s
}
