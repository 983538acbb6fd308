package diffuse

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/core/safetensors"
	"github.com/webtensor/webtensor/internal/reftest"
	"github.com/webtensor/webtensor/nn"
)

// The helpers every reference test shares: the files diffusers' scripts in
// testdata/ wrote, the noise they drew, the comparison, and the loops that
// run a check on the CPU and on WebGPU.

// refTensors are the tensors of a reference file, with the noise
// replays diffuse's pipeline tests draw from them.
type refTensors struct{ reftest.Refs }

// readRefs reads testdata/<base>.json into meta and returns the tensors of
// testdata/<base>.safetensors.
func readRefs(t testing.TB, base string, meta any) refTensors {
	t.Helper()
	return refTensors{reftest.ReadRefs(t, base, meta)}
}

// stackedNoise hands out the rows of tensor name (every draw of a run,
// stacked along the first axis) in order and counts the draws.
func (r *refTensors) stackedNoise(name string, draws int, k *int) Noise {
	st := r.File.Tensors[name]
	return func(shape core.Shape, dtype core.DType, d core.Device) (*core.Tensor, error) {
		if *k >= draws {
			return nil, fmt.Errorf("draw %d: diffusers drew only %d times", *k, draws)
		}
		n := len(st.Data) / st.Shape[0]
		x := safetensors.Tensor{DType: st.DType, Shape: st.Shape[1:], Data: st.Data[*k*n : (*k+1)*n]}.ToTensor(d)
		*k++
		return x, x.Err()
	}
}

// replayNoise hands out the tensors prefix/noise_0, noise_1, ... in order
// and counts the draws.
func (r *refTensors) replayNoise(t *testing.T, prefix string, draws int, k *int) Noise {
	return func(shape core.Shape, dtype core.DType, d core.Device) (*core.Tensor, error) {
		if *k >= draws {
			return nil, fmt.Errorf("draw %d: diffusers drew only %d times", *k, draws)
		}
		x := r.Get(t, fmt.Sprintf("%s/noise_%d", prefix, *k), d)
		*k++
		return x, x.Err()
	}
}

// refScheduler is the scheduler a reference run recorded: its config's
// JSON, with eta set.
func refScheduler(t *testing.T, config string, eta float64) Scheduler {
	cfg, err := ParseConfig([]byte(config))
	require.NoError(t, err)
	cfg.Eta = eta
	s, err := New(cfg.Class, cfg)
	require.NoError(t, err)
	return s
}

// unetRefs are a UNet family's reference outputs (testdata/unet_refs for
// UNet2DModel, cond_refs for UNet2DConditionModel): each of Models on its
// reference sample at every one of Timesteps, and at PerBatch, one
// timestep a sample; and diffusers' pipeline runs on the first model.
type unetRefs struct {
	Timesteps []float64              `json:"timesteps"`
	PerBatch  []float64              `json:"per_batch"`
	Models    []string               `json:"models"`
	Pipelines map[string]pipelineRun `json:"pipelines"`
	refTensors
}

// pipelineRun is a recorded pipeline run: its settings (those a pipeline
// has no use for are zero) and how many noise tensors it drew.
type pipelineRun struct {
	Steps           int     `json:"steps"`
	GuidanceScale   float64 `json:"guidance_scale"`
	ImagesPerPrompt int     `json:"images_per_prompt"`
	NoiseDraws      int     `json:"noise_draws"`
	Scheduler       string  `json:"scheduler"`
	Eta             float64 `json:"eta"`
}

// loadUNetRefs reads the references testdata/<base>.json and .safetensors.
func loadUNetRefs(t testing.TB, base string) *unetRefs {
	t.Helper()
	var r unetRefs
	r.refTensors = readRefs(t, base, &r)
	require.Len(t, r.Models, 2)
	return &r
}

// checkTimesteps compares model name's outputs, at (a timestep for the
// batch) and perBatch (one a sample), with diffusers' on its reference
// sample and returns the worst error relative to the largest output.
func (r *unetRefs) checkTimesteps(t *testing.T, name string, dev core.Device, tol float64,
	at func(*core.Tensor, float64) (*core.Tensor, error), perBatch func(x, ts *core.Tensor) (*core.Tensor, error)) float64 {
	x := r.Get(t, name+"/sample", dev)
	worst := 0.0
	for _, ts := range r.Timesteps {
		out, err := at(x, ts)
		require.NoError(t, err)
		e := reftest.RelMaxErr(t, out, r.Get(t, fmt.Sprintf("%s/out_%d", name, int(ts)), core.CPU))
		require.Less(t, e, tol, "%s at t=%v", name, ts)
		worst = math.Max(worst, e)
	}
	per := core.FromFloat64s(core.I64, core.Shape{len(r.PerBatch)}, r.PerBatch, dev)
	out, err := perBatch(x, per)
	require.NoError(t, err)
	e := reftest.RelMaxErr(t, out, r.Get(t, name+"/out_per_batch", core.CPU))
	require.Less(t, e, tol, "%s at per-batch timesteps %v", name, r.PerBatch)
	return math.Max(worst, e)
}

// checkEach runs check on dev as a subtest per name and logs the worst
// error each returns, relative to the largest reference value.
func checkEach(t *testing.T, names []string, dev core.Device, check func(t *testing.T, name string, dev core.Device) float64) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Logf("worst error: %.2g of the largest value", check(t, name, dev))
		})
	}
}

// checkEachOnWebGPU is checkEach on the WebGPU device, skipped without an
// adapter.
func checkEachOnWebGPU(t *testing.T, names []string, check func(t *testing.T, name string, dev core.Device) float64) {
	webgputest.Need(t)
	checkEach(t, names, webgputest.Device, check)
}

// sortedKeys are m's keys in order, so that subtests run and log in a
// fixed order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// requireCheckpointNames checks that the model loaded from each testdata
// folder has the checkpoint's state dict, name for name (so nn.Save writes
// a file diffusers loads).
func requireCheckpointNames[M interface{ StateDict() []nn.NamedState }](t *testing.T, load func(string, ...LoadOption) (M, error), folders ...string) {
	t.Helper()
	for _, name := range folders {
		dir := filepath.Join("testdata", name)
		m, err := load(dir)
		require.NoError(t, err)
		f, err := safetensors.ReadFile(filepath.Join(dir, modelFile))
		require.NoError(t, err)
		var got []string
		for _, s := range m.StateDict() {
			got = append(got, s.Name)
		}
		want := append([]string(nil), f.Names...)
		sort.Strings(want)
		sort.Strings(got)
		require.Equal(t, want, got, name)
	}
}

// editedCheckpoint copies the model folder testdata/<name> into a
// temporary directory, letting editConfig change config.json's text (it
// must change something) and edit the tensors.
func editedCheckpoint(t *testing.T, name string, editConfig func(string) string, edit func(map[string]safetensors.Tensor)) string {
	t.Helper()
	src := filepath.Join("testdata", name)
	dir := t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	if editConfig != nil {
		edited := editConfig(string(cfg))
		require.NotEqual(t, string(cfg), edited, "the config edit changed nothing")
		cfg = []byte(edited)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644))
	f, err := safetensors.ReadFile(filepath.Join(src, modelFile))
	require.NoError(t, err)
	tensors := map[string]safetensors.Tensor{}
	for k, v := range f.Tensors {
		tensors[k] = v
	}
	if edit != nil {
		edit(tensors)
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, modelFile), tensors, f.Metadata))
	return dir
}

// replaceOnce is a config edit: the first old in the text becomes new.
func replaceOnce(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

// checkpointEdit is one change to a model folder (config.json's text, the
// tensors; either may be nil) and the errors its loader must give.
type checkpointEdit struct {
	config  func(string) string
	tensors func(map[string]safetensors.Tensor)
	want    []string
}

// missingTensor drops tensor name; the loader must name it and the shape
// it wants.
func missingTensor(name string, want ...int) checkpointEdit {
	return checkpointEdit{tensors: func(m map[string]safetensors.Tensor) { delete(m, name) },
		want: []string{fmt.Sprintf("tensor %s is missing (want shape %v)", name, want)}}
}

// misshapenTensor gives tensor name another shape over the same data; the
// loader must name both shapes.
func misshapenTensor(name string, shape, want []int) checkpointEdit {
	return checkpointEdit{tensors: func(m map[string]safetensors.Tensor) {
		w := m[name]
		m[name] = safetensors.Tensor{DType: w.DType, Shape: core.Shape(shape), Data: w.Data}
	}, want: []string{fmt.Sprintf("tensor %s has shape %v, want %v", name, shape, want)}}
}

// strayTensor adds a tensor name holding a copy of tensor like; the loader
// must refuse it as no parameter of the model.
func strayTensor(name, like string) checkpointEdit {
	return checkpointEdit{tensors: func(m map[string]safetensors.Tensor) { m[name] = m[like] },
		want: []string{fmt.Sprintf("tensor %s is not a parameter of the model", name)}}
}

// configMisfit edits config.json so that it disagrees with the weights;
// the loader must list every misfit.
func configMisfit(edit func(string) string, want ...string) checkpointEdit {
	return checkpointEdit{config: edit, want: want}
}

// requireCheckpointErrors loads every edit of testdata/<name> with load and
// checks that each fails with its errors; then that what every loader
// refuses (a folder without config.json, an integer dtype) is refused,
// and that a checkpoint saved in float16 loads as float32.
func requireCheckpointErrors[M interface{ DType() core.DType }](t *testing.T, name string, load func(string, ...LoadOption) (M, error), edits ...checkpointEdit) {
	t.Helper()
	for _, e := range edits {
		_, err := load(editedCheckpoint(t, name, e.config, e.tensors))
		for _, want := range e.want {
			require.ErrorContains(t, err, want)
		}
	}
	_, err := load(t.TempDir())
	require.ErrorContains(t, err, "config.json")
	_, err = load(filepath.Join("testdata", name), WithDType(core.I32))
	require.ErrorContains(t, err, "dtype i32 is not a float dtype")

	half := editedCheckpoint(t, name, nil, func(m map[string]safetensors.Tensor) {
		for k, v := range m {
			m[k], _ = safetensors.FromTensor(v.ToTensor().Cast(core.F16))
		}
	})
	model, err := load(half)
	require.NoError(t, err)
	require.Equal(t, core.F32, model.DType())
}
