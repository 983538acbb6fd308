package webgpu_test

import (
	"testing"

	"github.com/webtensor/webtensor/backends/backendtest"
)

// Goroutines training and evaluating at once on the GPU get the serial
// gradients.
func TestConcurrentAutograd(t *testing.T) { suiteOnGPU(t, backendtest.RunConcurrentAutograd) }
