package parity

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite docs/parity.md from the SDK sources")

var (
	root    = filepath.Join("..", "..")
	docPath = filepath.Join(root, "docs", "parity.md")
)

// docs/parity.md is what the SDK sources give today.
func TestParityDocIsCurrent(t *testing.T) {
	want, err := Report(root)
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(docPath, []byte(want), 0o644))
		return
	}
	got, err := os.ReadFile(docPath)
	require.NoError(t, err, "docs/parity.md is missing: go test ./internal/parity -update")
	assert.Equal(t, want, string(got), "docs/parity.md is stale: go test ./internal/parity -update")
}

// The readers find the names they are meant to: a regression here would
// make the report silently wrong rather than stale.
func TestReadersFindKnownNames(t *testing.T) {
	cats, err := Python(root)
	require.NoError(t, err)
	byName := map[string][]string{}
	for _, c := range cats {
		byName[c.Name] = c.Names
	}
	assert.Contains(t, byName["ops"], "matmul")
	assert.Contains(t, byName["core"], "manual_seed")
	assert.NotContains(t, byName["core"], "nn", "submodules are their own categories")
	assert.Contains(t, byName["nn"], "Linear")
	assert.Contains(t, byName["nn"], "functional.gelu")
	assert.Contains(t, byName["optim"], "AdamW")
	assert.Contains(t, byName["data"], "DataLoader")
	assert.Contains(t, byName["onnx"], "onnx.load")
	js, err := JS(root)
	require.NoError(t, err)
	java, err := Java(root)
	require.NoError(t, err)
	for _, s := range []SDK{js, java} {
		for _, k := range []string{"matmul", "manualseed", "linear", "adamw"} {
			assert.True(t, s.Keys[k], "%s has %s", s.Name, k)
		}
	}
	assert.Equal(t, "manualseed", key("manual_seed"))
	assert.Equal(t, "clipgradnorm", key("utils.clip_grad_norm_"))
}
