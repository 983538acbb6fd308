package cpu_test

import (
	"testing"

	"github.com/webtensor/webtensor/backends/backendtest"
	"github.com/webtensor/webtensor/core"
)

// The CPU backend runs the shared suite: reference vectors and finite
// differences for every op in the registry.
func TestOpsMatchReference(t *testing.T) { backendtest.RunVectors(t, core.CPU) }

func TestGradientsMatchFiniteDifferences(t *testing.T) { backendtest.RunGradCheck(t, core.CPU) }
