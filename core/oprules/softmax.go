package oprules

// The softmax family's axis (softmax, log_softmax and their backward ops).

// SoftmaxAxis normalises the softmax axis. A scalar behaves as a
// one-element vector (axis 0 or -1), as in PyTorch.
func SoftmaxAxis(shape Shape, a Attrs) (int, error) {
	return NormAxis(a.Int("axis"), max(len(shape), 1))
}
