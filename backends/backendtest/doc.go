// Package backendtest is the one op suite every backend runs (gonum's
// testblas pattern): a backend's _test.go calls RunVectors, which checks every
// op of the registry against the NumPy/PyTorch reference vectors, forward and
// backward, on that backend's device, and RunGradCheck, which checks every
// differentiable sample against central finite differences in float64.
// RunConcurrentAutograd trains from several goroutines at once and requires
// the gradients of a serial run, bit for bit.
package backendtest
