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

	// The data agent on a built-in loader, its dataset made under the
	// folder: whatever it keeps, the report and the journal say so.
	got, err = execute(t, "auto", "data", "--dir", dir, "--data-policy", policy+"#data", "--workload", "data-npy-features", "--runs", "3", "--json")
	require.NoError(t, err, got)
	var r auto.DataReport
	require.NoError(t, json.Unmarshal([]byte(got), &r))
	assert.Equal(t, "data-npy-features", r.Loader)
	assert.Greater(t, r.SamplesPerSecBefore, 0.0)
	assert.DirExists(t, filepath.Join(dir, "datasets", "data-jpeg-folder"))
	j, err = auto.OpenJournal(dir)
	require.NoError(t, err)
	for _, d := range r.Decisions {
		rec, ok := j.Find(d.ID)
		require.True(t, ok, d.ID)
		assert.Equal(t, auto.DataAgentName, rec.Agent)
		if rec.Verdict != auto.Invalid {
			require.NotNil(t, rec.Guard, rec.Reason)
			assert.True(t, rec.Guard.OK, "the built-in readers keep their samples under any pipeline: %s", rec.Reason)
		}
	}
	got, err = execute(t, "auto", "workloads")
	require.NoError(t, err)
	assert.Contains(t, got, "data-parquet-table")
	_, err = execute(t, "auto", "suite", "--dir", dir, "--agent", "nope")
	assert.ErrorContains(t, err, `no agent "nope"`)
}
