package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/auto"
)

// webtensor auto kernel decides on a built-in workload with the shipped
// policy (built here as make plugins builds it), auto decisions lists the
// journal, and auto rollback, run as a later invocation, restores the
// kernel cache of a kept decision and refuses one that was not kept.
func TestAutoCommands(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy-auto.wasm")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", policy, "./plugins-wasm/policies/auto")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	dir := t.TempDir()

	got, err := execute(t, "auto", "workloads")
	require.NoError(t, err)
	assert.Contains(t, got, "graph-ew-large")

	got, err = execute(t, "auto", "kernel", "--dir", dir, "--policy", policy+"#kernel", "--workload", "graph-ew-large", "--runs", "5")
	require.NoError(t, err, got)
	assert.Contains(t, got, "graph.graph-ew-large.fuse=on")
	j, err := auto.OpenJournal(dir)
	require.NoError(t, err)
	ds := j.Decisions()
	require.NotEmpty(t, ds)

	got, err = execute(t, "auto", "decisions", "--dir", dir, "--json")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Len(t, lines, len(ds))
	var first auto.Decision
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	assert.Equal(t, ds[0].ID, first.ID)

	// The first kept decision (rolling it back undoes any later one too).
	for _, d := range ds {
		if d.Verdict != auto.Kept {
			_, err := execute(t, "auto", "rollback", "--dir", dir, d.ID)
			assert.ErrorContains(t, err, "not kept")
			continue
		}
		cache := filepath.Join(dir, auto.KernelCacheFile)
		require.FileExists(t, cache)
		got, err := execute(t, "auto", "rollback", "--dir", dir, d.ID)
		require.NoError(t, err, got)
		assert.Contains(t, got, "restored the state before "+d.ID)
		assert.NoFileExists(t, cache, "the cache did not exist before the first decision")
		break
	}
	_, err = execute(t, "auto", "kernel", "--dir", dir, "--policy", policy+"#kernel", "--workload", "nope")
	assert.ErrorContains(t, err, `no built-in workload "nope"`)
}
