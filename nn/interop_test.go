package nn_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// pythonWithSafetensors finds a Python that can import safetensors and
// NumPy: $WEBTENSOR_PYTHON (set by `make test`), the repository's virtual
// environment, then python3 on PATH. Under CI, where `make test` installs
// the packages, not finding one is a failure rather than a skip.
func pythonWithSafetensors(t *testing.T) string {
	var tried []string
	candidates := []string{filepath.Join("..", ".venv", "bin", "python")}
	if p := os.Getenv("WEBTENSOR_PYTHON"); p != "" {
		candidates = append([]string{p}, candidates...)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	for _, py := range candidates {
		out, err := exec.Command(py, "-c", "import numpy, safetensors.numpy").CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, py+": "+strings.TrimSpace(lastLine(string(out), err)))
	}
	msg := fmt.Sprintf("interop test needs a Python with the safetensors and numpy packages (pip install safetensors numpy); tried %s",
		strings.Join(tried, "; "))
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func lastLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

type pyReport struct {
	Metadata map[string]string `json:"metadata"`
	Tensors  map[string]struct {
		DType  string    `json:"dtype"`
		Shape  []int     `json:"shape"`
		Values []float64 `json:"values"`
	} `json:"tensors"`
}

// Our checkpoint must load in the reference implementation with the same
// names, dtypes, shapes and values, and a file it writes must load here.
func TestCheckpointInteropWithPythonSafetensors(t *testing.T) {
	py := pythonWithSafetensors(t)
	dir := t.TempDir()
	ours, theirs := filepath.Join(dir, "ours.safetensors"), filepath.Join(dir, "theirs.safetensors")
	m := smallModel(t, 5)
	x := core.FromSlice([]float32{1, 2, 3, -1, 0, 2}, core.Shape{2, 3})
	require.NoError(t, m.Forward(x).Err())
	require.NoError(t, nn.Save(ours, m))

	out, err := exec.Command(py, filepath.Join("testdata", "interop.py"), ours, theirs).Output()
	require.NoError(t, err, "interop.py failed: %s", errOutput(err))
	var report pyReport
	require.NoError(t, json.Unmarshal(out, &report))
	assert.Equal(t, "pt", report.Metadata["format"])

	want := stateValues(t, m)
	require.Len(t, report.Tensors, len(want))
	for _, s := range m.StateDict() {
		got, ok := report.Tensors[s.Name]
		require.True(t, ok, "python did not see %s", s.Name)
		d, err := core.ParseDType(got.DType)
		require.NoError(t, err)
		assert.Equal(t, s.Value.Tensor().DType(), d, s.Name)
		assert.Equal(t, []int(s.Value.Tensor().Shape()), append([]int{}, got.Shape...), s.Name)
		assert.Equal(t, want[s.Name], got.Values, s.Name)
	}

	require.NoError(t, nn.Load(theirs, m))
	for _, s := range m.StateDict() {
		for i, v := range values(t, s.Value.Tensor()) {
			expected := want[s.Name][i] * 2
			if s.Value.Tensor().DType() == core.I64 {
				expected = want[s.Name][i] + 1
			}
			assert.Equal(t, expected, v, "%s[%d]", s.Name, i)
		}
	}
}

func errOutput(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
