package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The op scaffold's round trip, as a contributor runs it: in a copy of the
// repository (git archive of HEAD), `webtensor op new` writes an op from its
// formula, make vectors makes PyTorch's vectors and regenerates, and the
// op's own training test and the CPU suites pass for it, then WebGPU's. The
// plan's number is under 3 minutes from scaffold to training; the time is
// logged and held to that.
func TestOpScaffoldRoundTrip(t *testing.T) {
	py := os.Getenv("WEBTENSOR_PYTHON")
	if py == "" {
		t.Skip("WEBTENSOR_PYTHON (a Python with PyTorch for make vectors) is not set; make test sets it")
	}
	for _, tool := range []string{"git", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout (git rev-parse: %v)", err)
	}
	dir := t.TempDir()
	archive := exec.Command("sh", "-c", "git archive HEAD | tar -x -C "+dir)
	archive.Dir = strings.TrimSpace(string(root))
	out, err := archive.CombinedOutput()
	require.NoError(t, err, string(out))

	start := time.Now()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
		return string(out)
	}
	out1 := run("go", "run", "./cmd/webtensor", "op", "new", "softsign_scaffolded", "--formula", "x / (1 + abs(x))", "--no-vectors")
	assert.Contains(t, out1, "wrote core/ops_unary_softsign_scaffolded.go")
	run("make", "--no-print-directory", "vectors", "VENV="+filepath.Dir(filepath.Dir(py)))
	_, err = os.Stat(filepath.Join(dir, "conformance", "vectors", "softsign_scaffolded.safetensors"))
	require.NoError(t, err, "make vectors wrote the op's vectors")
	gen, err := os.ReadFile(filepath.Join(dir, "sdk", "python", "webtensor", "_ops", "unary.py"))
	require.NoError(t, err)
	assert.Contains(t, string(gen), "def softsign_scaffolded(", "make generate wrote the Python method")
	suites := "TestOpsMatchReference/softsign_scaffolded$|TestGradientsMatchFiniteDifferences/softsign_scaffolded$"
	run("go", "test", "-count=1", "./core", "./backends/cpu", "-run", "TestTrainThroughsoftsign_scaffolded|"+suites)
	took := time.Since(start)
	t.Logf("op scaffold round trip (scaffold, vectors and generate, build, train, the CPU suites): %s", took.Round(time.Second))
	assert.Less(t, took, 3*time.Minute, "the plan's exit number for the scaffold round trip")
	// Then the GPU: the kernel WebGPU derives from the op's expression
	// matches PyTorch too (outside the timed part: its build is the GPU
	// backend's, not the op's).
	run("go", "test", "-count=1", "./backends/webgpu", "-run", suites)
}
