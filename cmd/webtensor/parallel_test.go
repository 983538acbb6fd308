package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/auto/parallel"
)

func TestMain(m *testing.M) {
	parallel.ServeIfWorker() // auto parallel's workers are this test binary
	os.Exit(m.Run())
}

// auto parallel measures this machine with two workers, prices every
// plan of an MLP, runs those with executors and prints the report.
func TestAutoParallelCommand(t *testing.T) {
	out, err := execute(t, "auto", "parallel", "--model", "mlp", "--batch", "8", "--dims", "16,32,8", "--workers", "2", "--run", "--runs", "1", "--json")
	require.NoError(t, err, out)
	var r struct {
		parallel.Report
		Measured map[string]float64 `json:"measured_seconds"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.NotNil(t, r.Chosen)
	assert.Contains(t, r.Measured, "data x2")
	assert.Contains(t, r.Measured, "tensor x2")
	assert.Contains(t, r.Measured, "single cpu")

	out, err = execute(t, "auto", "parallel", "--model", "block", "--batch", "2", "--seq", "8", "--dim", "16", "--heads", "2", "--hidden", "32", "--workers", "0")
	require.NoError(t, err, out)
	assert.Contains(t, out, "single cpu")

	_, err = execute(t, "auto", "parallel", "--model", "cnn")
	assert.ErrorContains(t, err, `--model is block or mlp, got "cnn"`)
	file := filepath.Join(t.TempDir(), "c.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"devices": [{"name": "cpu", "kind": "cpu", "gflops": 0, "gbps": 1, "memory_bytes": 1}]}`), 0o644))
	_, err = execute(t, "auto", "parallel", "--cluster", file)
	assert.ErrorContains(t, err, "device cpu needs positive gflops")
	_, err = execute(t, "auto", "parallel", "--cluster", file, "--run")
	assert.ErrorContains(t, err, "cannot run a described --cluster")
}
