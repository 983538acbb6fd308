package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/trace"
)

// webtensor trace records a run's op calls into a valid Chrome trace with
// the environment; webtensor flame draws it as SVG and pprof.
func TestTraceAndFlame(t *testing.T) {
	dir := t.TempDir()
	tr, svg, pb := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.svg"), filepath.Join(dir, "run.pb.gz")
	out, err := execute(t, "trace", "-o", tr, "--", "run", "--steps", "5", "--points", "30", "--quiet", "--device", "cpu",
		"--plot", filepath.Join(dir, "loss.png"))
	require.NoError(t, err, out)
	assert.Contains(t, out, "op calls written to "+tr)
	data, err := os.ReadFile(tr)
	require.NoError(t, err)
	require.NoError(t, trace.Validate(data))
	assert.Contains(t, string(data), `"name":"matmul"`)
	assert.Contains(t, string(data), `"default_device":"cpu"`)

	out, err = execute(t, "flame", tr, "-o", svg, "--pprof", pb)
	require.NoError(t, err, out)
	assert.Contains(t, out, "drawn to "+svg)
	s, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(s), "<svg"))
	assert.Contains(t, string(s), "matmul:")
	f, err := os.Open(pb)
	require.NoError(t, err)
	defer f.Close()
	p, err := profile.Parse(f)
	require.NoError(t, err)
	assert.Equal(t, "time", p.DefaultSampleType)
	assert.NotEmpty(t, p.Sample)
}

func TestTraceAndFlameErrorsSayWhatToDo(t *testing.T) {
	_, err := execute(t, "flame", filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorContains(t, err, "write a trace with `webtensor trace")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"nope": 1}`), 0o644))
	_, err = execute(t, "flame", bad)
	assert.ErrorContains(t, err, "no traceEvents array")
	_, err = execute(t, "trace", "--", "flame", "x.json")
	assert.ErrorContains(t, err, "record a command that runs ops")
}
