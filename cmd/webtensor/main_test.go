package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/diffuse"
)

func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := rootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestRunTrainsAndPlots(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "loss.png")
	out, err := execute(t, "run", "--steps", "120", "--points", "60", "--quiet", "--plot", plot)
	require.NoError(t, err, out)
	assert.Contains(t, out, "on cpu")
	assert.Contains(t, out, "accuracy")
	png, err := os.ReadFile(plot)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG")), "plot is a PNG")
	// The loss must fall: the first reported loss is ln(3), the last far below.
	var first, last float64
	for _, line := range strings.Split(out, "\n") {
		var step int
		var loss float64
		if n, _ := fmt.Sscanf(line, "step %d  loss %f", &step, &loss); n == 2 {
			if step == 1 {
				first = loss
			}
			last = loss
		}
	}
	assert.InDelta(t, 1.0986, first, 0.05)
	assert.Less(t, last, first/2)
}

func TestRunGNNTrainsAGCN(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "gnn.png")
	out, err := execute(t, "run", "--task", "gnn", "--steps", "40", "--block-size", "60", "--device", "cpu", "--quiet", "--plot", plot)
	require.NoError(t, err, out)
	assert.Contains(t, out, "SBM graph, 240 nodes")
	var acc float64
	for _, line := range strings.Split(out, "\n") {
		if i := strings.Index(line, "test accuracy "); i >= 0 {
			_, _ = fmt.Sscanf(line[i:], "test accuracy %f%%", &acc)
		}
	}
	assert.Greater(t, acc, 80.0, out)
	_, err = os.Stat(plot)
	require.NoError(t, err)
}

// The diffusion demo trains a UNet for a few steps (the loss falls from
// the first step's), samples, and writes the image grid and the loss plot.
func TestRunDiffusionTrainsAndSamples(t *testing.T) {
	dir := t.TempDir()
	images, plot, saved := filepath.Join(dir, "digits.png"), filepath.Join(dir, "loss.png"), filepath.Join(dir, "pipe")
	out, err := execute(t, "run", "--task", "diffusion", "--steps", "12", "--hidden", "8", "--batch", "8",
		"--samples", "6", "--sample-steps", "3", "--device", "cpu", "--quiet", "--images", images, "--plot", plot,
		"--save", saved)
	require.NoError(t, err, out)
	assert.Contains(t, out, "pipeline saved to "+saved)
	index, err := os.ReadFile(filepath.Join(saved, "model_index.json"))
	require.NoError(t, err)
	assert.Contains(t, string(index), `"DDIMPipeline"`)
	m, err := diffuse.LoadUNet2D(filepath.Join(saved, "unet"))
	require.NoError(t, err, "the saved UNet loads")
	assert.Equal(t, 1, m.Config.InChannels)
	assert.Contains(t, out, "DDPM on drawn 16x16 digits, UNet2DModel 8-16")
	assert.Contains(t, out, "sampled 6 digits with DDIM in 3 steps")
	var first, last float64
	for _, line := range strings.Split(out, "\n") {
		if n, _ := fmt.Sscanf(line, "final loss %f (from %f)", &last, &first); n == 2 {
			break
		}
	}
	assert.Less(t, last, first, out)
	for _, path := range []string{images, plot} {
		png, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG")), "%s is a PNG", path)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	_, err := execute(t, "run", "--task", "vision")
	assert.ErrorContains(t, err, `--task must be spirals, gnn or diffusion, got "vision"`)
	_, err = execute(t, "run", "--task", "gnn", "--blocks", "1")
	assert.ErrorContains(t, err, "--blocks and --block-size at least 2")
	_, err = execute(t, "run", "--task", "diffusion", "--hidden", "12")
	assert.ErrorContains(t, err, "--hidden must be a positive multiple of 8 for the UNet's group norms (got 12)")
	_, err = execute(t, "run", "--task", "diffusion", "--sample-steps", "2000")
	assert.ErrorContains(t, err, "--sample-steps 2000 is more than the 1000 training timesteps")
	_, err = execute(t, "run", "--steps", "0")
	assert.ErrorContains(t, err, "--steps")
	_, err = execute(t, "run", "--lr", "-1")
	assert.ErrorContains(t, err, "--lr must be a positive number")
	_, err = execute(t, "run", "--device", "tpu")
	assert.ErrorContains(t, err, "device tpu:0 is not available: no backend \"tpu\" is compiled in")
}

func TestOpsManifest(t *testing.T) {
	out, err := execute(t, "ops", "--json")
	require.NoError(t, err)
	var m core.Manifest
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	assert.Equal(t, core.Version, m.Version)
	byName := map[string]core.ManifestOp{}
	for _, op := range m.Ops {
		byName[op.Name] = op
	}
	require.Contains(t, byName, "conv2d")
	want := []string{"cpu"}
	if webgputest.Present(t) {
		want = []string{"webgpu", "cpu"} // an adapter exists here: conv2d has a WGSL kernel
	}
	assert.Equal(t, want, byName["conv2d"].Backends)
	assert.True(t, byName["conv2d"].Differentiable)

	out, err = execute(t, "ops", "softmax")
	require.NoError(t, err)
	assert.Contains(t, out, "attr  axis")
	_, err = execute(t, "ops", "nosuchop")
	assert.ErrorContains(t, err, `unknown op "nosuchop"`)
}

// TestOpsCategories: --category offers the registry's categories, and
// filters by them.
func TestOpsCategories(t *testing.T) {
	out, err := execute(t, "ops", "--help")
	require.NoError(t, err)
	assert.Contains(t, out, "only ops of this category (activation, attention, binary,")
	assert.NotContains(t, out, "neural")
	out, err = execute(t, "ops", "--category", "norm")
	require.NoError(t, err)
	assert.Contains(t, out, "layer_norm")
	assert.NotContains(t, out, "softmax")
	_, err = execute(t, "ops", "--category", "neural")
	assert.ErrorContains(t, err, `unknown category "neural": the categories are activation, attention,`)
}

func TestDoctor(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the disk kernel cache, not the user's
	t.Setenv("WEBTENSOR_TUNE", "off")
	// misspelt (and split, so core/config's scan of the tree for the names
	// the code reads does not take it for one)
	t.Setenv("WEBTENSOR_"+"DEVCE", "cuda")
	out, err := execute(t, "doctor")
	require.NoError(t, err)
	assert.Contains(t, out, "webtensor "+core.Version)
	assert.Contains(t, out, "cpu")
	assert.Contains(t, out, "default device: cpu")
	assert.Contains(t, out, "webgpu adapters:")
	assert.NotContains(t, out, "smoke test FAILED")
	assert.Contains(t, out, "WEBTENSOR_TUNE=off")
	assert.Contains(t, out, "WEBTENSOR_"+"DEVCE is not a webtensor setting")
	assert.Contains(t, out, "CPU fallbacks:")
	if _, err := core.BackendFor(core.Device{Kind: "cuda"}); err == nil {
		assert.Regexp(t, `GPU: .*compute capability`, out)
	} else {
		assert.Regexp(t, `cuda +absent +cuda: `, out)
	}
	if webgputest.Present(t) {
		assert.Regexp(t, `webgpu:0 ok .*\n\s+smoke test passed: 10 ops`, out)
		assert.Regexp(t, `disk cache .*webtensor.*: \d+ hits, \d+ misses, \d+ corrupt, \d+ writes, hit ratio`, out)
		assert.Contains(t, out, "limits: buffer")
	}
}

func TestConfigListsSettings(t *testing.T) {
	t.Setenv("WEBTENSOR_CUDA_SYNC", "1")
	out, err := execute(t, "config")
	require.NoError(t, err)
	assert.Regexp(t, `WEBTENSOR_CUDA_SYNC +1 `, out)
	assert.Regexp(t, `WEBTENSOR_NO_DISK_CACHE +0 \(default\)`, out)
	md, err := execute(t, "config", "--markdown")
	require.NoError(t, err)
	assert.Contains(t, md, "| `WEBTENSOR_DEVICE` |")
}

func TestIRShowTracesAndOptimises(t *testing.T) {
	for _, model := range []string{"mlp", "transformer", "gcn"} {
		out, err := execute(t, "ir", "show", "--model", model)
		require.NoError(t, err, out)
		assert.Contains(t, out, "# "+model+", captured:")
		assert.Contains(t, out, "# after the passes:")
		assert.Contains(t, out, "return %")
	}
	_, err := execute(t, "ir", "show", "--model", "rnn")
	assert.ErrorContains(t, err, `--model must be mlp, transformer or gcn, got "rnn"`)
}

// Help offers only devices that exist: the flags name the kinds compiled in,
// and the help of every command that takes a device ends with the devices
// that open here and the reason each other kind does not; no absent device
// is offered with an index (cuda:0 on a machine without CUDA).
func TestHelpOffersOnlyDevicesThatExist(t *testing.T) {
	ok, failed := core.Devices()
	var here []string
	for _, d := range ok {
		here = append(here, d.String())
	}
	kinds := core.BackendKinds()
	require.Contains(t, kinds, "cuda", "the CLI compiles the CUDA backend in")
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"ir", "show", "--help"}} {
		out, err := execute(t, args...)
		require.NoError(t, err, out)
		assert.Contains(t, out, "compiled in: "+strings.Join(kinds, ", ")+" (best first)", args)
		var open string
		for _, line := range strings.Split(out, "\n") {
			if rest, found := strings.CutPrefix(strings.TrimSpace(line), "open here:"); found {
				open = strings.TrimSpace(rest)
			}
		}
		names := strings.Split(open, ", ")
		for i := range names {
			names[i], _, _ = strings.Cut(names[i], " (")
		}
		assert.Equal(t, here, names, "%v: open here: %q", args, open)
		for k := range failed {
			assert.Regexp(t, `absent: +`+k+`: `, out, args)
			assert.NotRegexp(t, `\b`+k+`:\d`, out, "%v offers an absent %s device", args, k)
		}
		if args[0] != "--help" {
			assert.Contains(t, out, "--device string", args)
			assert.Contains(t, out, "device: cuda, webgpu or cpu, with :N", args)
		}
	}
	out, err := execute(t, "ops", "--help")
	require.NoError(t, err)
	assert.NotContains(t, out, "open here:", "ops takes no device")
}
