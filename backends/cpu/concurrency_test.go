package cpu_test

import (
	"testing"

	"github.com/webtensor/webtensor/backends/backendtest"
	"github.com/webtensor/webtensor/core"
)

// Goroutines training and evaluating at once get the serial gradients.
func TestConcurrentAutograd(t *testing.T) { backendtest.RunConcurrentAutograd(t, core.CPU) }
