package backendtest_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The op suite depends on core (with its kit) and the reference vectors only: a backend's
// tests must not build (or break with) the modules, optimisers and domain
// libraries above it, nor another backend.
func TestSuiteDependsOnCoreAndVectorsOnly(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	const module = "github.com/webtensor/webtensor/"
	allowed := map[string]bool{"core": true, "core/config": true, "core/safetensors": true,
		"core/kernelkit": true, "core/numerics": true, "core/oprules": true, "core/types": true,
		"conformance": true, "backends/backendtest": true}
	for _, p := range strings.Fields(string(out)) {
		if rest, ours := strings.CutPrefix(p, module); ours {
			require.True(t, allowed[rest], "backendtest imports %s", rest)
		}
	}
}
