package cpu_test

import (
	"testing"

	"github.com/webtensor/webtensor/backends/backendtest"
	"github.com/webtensor/webtensor/backends/cpu"
	"github.com/webtensor/webtensor/core"
)

// The CPU backend runs the shared suite: reference vectors and finite
// differences for every op in the registry.
func TestOpsMatchReference(t *testing.T) { backendtest.RunVectors(t, core.CPU) }

func TestGradientsMatchFiniteDifferences(t *testing.T) { backendtest.RunGradCheck(t, core.CPU) }

// Complex dtypes: every complex form against math/cmplx.
func TestComplexMatchesMathCmplx(t *testing.T) { backendtest.RunComplex(t, core.CPU) }

// u16 and u64: every integer path against Go's unsigned arithmetic.
func TestUnsignedMatchesGo(t *testing.T) { backendtest.RunUnsigned(t, core.CPU) }

// The suite again with every output a recycled block full of NaN bytes:
// a kernel that takes its output uncleared (fillsOutputs) and skips an
// element shows it here.
func TestOpsMatchReferenceOnRecycledMemory(t *testing.T) {
	defer cpu.PoisonCacheForTest()()
	backendtest.RunVectors(t, core.CPU)
}

// The vectors again on the Go loops that stand in for the vector kernels
// where there are none (js/wasm, arm64).
func TestOpsMatchReferenceOnTheGoLoops(t *testing.T) {
	defer cpu.WithoutSIMDForTest()()
	backendtest.RunVectors(t, core.CPU)
}
