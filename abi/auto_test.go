//go:build !js

package abi

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/webgpu/webgputest"
)

var (
	policyOnce sync.Once
	policyPath string
	policyErr  error
)

// autoPolicyModule builds the shipped auto policy for wasip1, as make
// plugins does, once per test binary.
func autoPolicyModule(t *testing.T) string {
	t.Helper()
	policyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "abi-auto-policy-")
		if err != nil {
			policyErr = err
			return
		}
		policyPath = filepath.Join(dir, "policy-auto.wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", policyPath, "./plugins-wasm/policies/auto")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if out, err := cmd.CombinedOutput(); err != nil {
			policyErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	require.NoError(t, policyErr)
	return policyPath
}

// pngFolder writes classes x perClass noisy w x h RGB PNGs: records a
// loader decodes at every read.
func pngFolder(t *testing.T, classes, perClass, w, h int) string {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewSource(1))
	for c := range classes {
		dir := filepath.Join(root, fmt.Sprintf("c%d", c))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for i := range perClass {
			img := image.NewRGBA(image.Rect(0, 0, w, h))
			for y := range h {
				for x := range w {
					img.SetRGBA(x, y, color.RGBA{uint8(x * 4), uint8(rng.Intn(256)), uint8(y * 4), 255})
				}
			}
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%03d.png", i)))
			require.NoError(t, err)
			require.NoError(t, png.Encode(f, img))
			require.NoError(t, f.Close())
		}
	}
	return root
}

// auto.tune_loader runs the data agent on a loader handle: on PNGs
// decoded at every read the shipped policy's record cache is kept, the
// loader's pipeline changes in place, the report stays within its bound,
// the journal holds the full records, and auto.rollback undoes it.
// A second call with measure false applies what was kept.
func TestAutoTuneLoader(t *testing.T) {
	policy := autoPolicyModule(t) + "#data"
	dir := t.TempDir()
	ds, err := datasetOpen(`{"format": "images", "path": "` + pngFolder(t, 2, 16, 48, 48) + `"}`)
	require.NoError(t, err)
	l, err := loaderNew(ds, `{"batch_size": 8, "shuffle": true, "seed": 1}`)
	require.NoError(t, err)
	defer loaderFree(l)

	opts := fmt.Sprintf(`{"dir": %q, "policy": %q, "name": "pngs", "runs": 5}`, dir, policy)
	out, err := autoTuneLoader(l, opts)
	require.NoError(t, err)
	assert.Less(t, len(out), AutoReportBytes)
	var r struct {
		Before    map[string]any    `json:"pipeline_before"`
		After     map[string]any    `json:"pipeline_after"`
		Before1   float64           `json:"samples_per_s_before"`
		After1    float64           `json:"samples_per_s_after"`
		Decisions []decisionSummary `json:"decisions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotEmpty(t, r.Decisions, out)
	first := r.Decisions[0]
	assert.Equal(t, "data.pngs.cache=on", first.What)
	require.Equal(t, "kept", first.Verdict, first.Reason)
	assert.Equal(t, false, r.Before["cache"])
	assert.Equal(t, true, r.After["cache"])
	assert.Greater(t, r.After1, r.Before1)
	st, err := loaders.get(l)
	require.NoError(t, err)
	assert.True(t, st.l.Pipeline().Cache, "the handle's loader changed in place")

	j, err := autoJournalJSON(fmt.Sprintf(`{"dir": %q, "ids": [%q]}`, dir, first.ID))
	require.NoError(t, err)
	var recs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(j), &recs))
	require.Len(t, recs, 1)
	assert.Equal(t, "auto.data", recs[0]["policy"])
	assert.Equal(t, true, recs[0]["guard"].(map[string]any)["ok"])

	undo, err := autoRollback(fmt.Sprintf(`{"dir": %q}`, dir), first.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(undo, "d"))
	assert.Less(t, len(undo), AutoRollbackIDBytes)
	assert.False(t, st.l.Pipeline().Cache)
	_, err = autoRollback(fmt.Sprintf(`{"dir": %q}`, dir), first.ID)
	assert.ErrorContains(t, err, "was already rolled back")
	_, err = autoRollback(fmt.Sprintf(`{"dir": %q}`, dir), "d9999")
	assert.ErrorContains(t, err, `no decision "d9999"`)

	// Nothing is remembered after the rollback; measure false applies
	// what the cache holds and measures nothing.
	out, err = autoTuneLoader(l, fmt.Sprintf(`{"dir": %q, "name": "pngs", "measure": false}`, dir))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Empty(t, r.Decisions)
	assert.Equal(t, false, r.After["cache"])
}

func TestAutoErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := autoTuneLoader(987654, `{}`)
	assert.Equal(t, StatusHandle, StatusOf(err))
	ds, err := datasetOpen(`{"format": "npy", "path": "` + npyX + `"}`)
	require.NoError(t, err)
	l, err := loaderNew(ds, `{"batch_size": 2}`)
	require.NoError(t, err)
	defer loaderFree(l)
	_, err = autoTuneLoader(l, fmt.Sprintf(`{"dir": %q, "batchs": 2}`, dir))
	assert.ErrorContains(t, err, `unknown field "batchs"`)
	_, err = autoTuneLoader(l, fmt.Sprintf(`{"dir": %q, "policy": "no/such.wasm#data"}`, dir))
	assert.Equal(t, StatusIO, StatusOf(err), "%v", err)
	_, err = autoTuneLoader(l, fmt.Sprintf(`{"dir": %q, "policy": %q, "name": "bad name"}`, dir, autoPolicyModule(t)+"#data"))
	assert.ErrorContains(t, err, `loader name "bad name"`)
	_, err = autoTuneLoader(l, fmt.Sprintf(`{"dir": %q, "policy": %q}`, dir, autoPolicyModule(t)+"#nope"))
	assert.ErrorContains(t, err, `has no policy "nope"`)
	_, err = autoTuneLoader(l, fmt.Sprintf(`{"dir": %q, "runs": 2, "measure": false}`, dir))
	assert.ErrorContains(t, err, "Runs >= 3")
	_, err = autoJournalJSON(`{"dri": "x"}`)
	assert.ErrorContains(t, err, `unknown field "dri"`)
	_, err = autoTuneGraph(987654, nil, `{}`)
	assert.Equal(t, StatusHandle, StatusOf(err))
}

// auto.tune_graph runs the kernel agent on a traced graph: whatever
// the CPU settings measure here, every decision is reported, the journal
// has it, and the settings in force are the cached winners.
func TestAutoTuneGraph(t *testing.T) {
	dir := t.TempDir()
	x := f32Tensor(t, []int64{4}, 1, 2, 3, 4)
	defer TensorFree(x)
	require.NoError(t, TraceBegin([]int64{x}))
	outs, err := Op("mul", []int64{x, x}, nil, false)
	require.NoError(t, err)
	y := make([]int64, 1)
	outs.Handles(y)
	defer TensorFree(y[0])
	g, err := TraceEnd(y)
	require.NoError(t, err)
	defer GraphFree(g)
	defer SetNumThreads(NumThreads())

	out, err := autoTuneGraph(g, []int64{x}, fmt.Sprintf(`{"dir": %q, "policy": %q, "name": "square", "runs": 3}`, dir, autoPolicyModule(t)+"#kernel"))
	require.NoError(t, err)
	var r struct {
		Workload  string            `json:"workload"`
		Repeat    int               `json:"repeat"`
		Settings  map[string]string `json:"settings"`
		Cached    map[string]string `json:"cached"`
		Decisions []decisionSummary `json:"decisions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Equal(t, "square", r.Workload)
	assert.GreaterOrEqual(t, r.Repeat, 1)
	assert.Contains(t, r.Settings, "cpu.threads")
	for k, v := range r.Cached {
		assert.Equal(t, v, r.Settings[k], "the cached winner %s is in force", k)
	}
	j, err := autoJournalJSON(fmt.Sprintf(`{"dir": %q}`, dir))
	require.NoError(t, err)
	var recs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(j), &recs))
	assert.Len(t, recs, len(r.Decisions))
	for i, d := range r.Decisions {
		assert.Equal(t, d.ID, recs[i]["id"])
		assert.Equal(t, "kernel", recs[i]["agent"])
		if d.Verdict == "kept" {
			_, err := autoRollback(fmt.Sprintf(`{"dir": %q}`, dir), d.ID)
			require.NoError(t, err)
			break
		}
	}
}

// On a WebGPU graph the kernel agent tunes kernel variants: the report
// names the variant in force for each hot decision, every decision is in
// the journal, and a kept one is the variant in force.
func TestAutoTuneGraphWebGPU(t *testing.T) {
	dev := webgputest.Need(t)
	t.Setenv("WEBTENSOR_CACHE_DIR", t.TempDir())
	dev.ForgetTuning()
	t.Cleanup(dev.ForgetTuning)
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(2))
	onGPU := func(shape []int64) int64 {
		n := int(shape[0] * shape[1])
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32() - 0.5
		}
		h := f32Tensor(t, shape, v...)
		g, err := TensorToDevice(h, "webgpu", true)
		require.NoError(t, err)
		TensorFree(h)
		return g
	}
	x, w := onGPU([]int64{4, 1024}), onGPU([]int64{1024, 1024})
	defer TensorFree(x)
	defer TensorFree(w)
	require.NoError(t, TraceBegin([]int64{x, w}))
	outs, err := Op("matmul", []int64{x, w}, nil, false)
	require.NoError(t, err)
	y := make([]int64, 1)
	outs.Handles(y)
	defer TensorFree(y[0])
	g, err := TraceEnd(y)
	require.NoError(t, err)
	defer GraphFree(g)

	out, err := autoTuneGraph(g, []int64{x, w}, fmt.Sprintf(`{"dir": %q, "policy": %q, "name": "gemv4", "runs": 5}`, dir, autoPolicyModule(t)+"#kernel"))
	require.NoError(t, err)
	var r struct {
		Device    string            `json:"device"`
		Kernels   map[string]string `json:"kernels"`
		Decisions []decisionSummary `json:"decisions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Contains(t, r.Device, "webgpu")
	var key string
	for k := range r.Kernels {
		if strings.HasPrefix(k, "matmul|") {
			key = k
		}
	}
	require.NotEmpty(t, key, "the product's decision was tuned: %s", out)
	assert.Equal(t, dev.TuningVariant(key), r.Kernels[key], "the report names the variant in force")
	// Which variants the policy proposes depends on how they screened
	// (timings on a shared machine): none may beat the variant in force,
	// so the test asserts what holds either way, not that one was proposed.
	for _, d := range r.Decisions {
		assert.True(t, strings.HasPrefix(d.What, "webgpu."), d.What)
		if d.Verdict == "kept" && strings.HasPrefix(d.What, "webgpu."+key+"=") {
			assert.Equal(t, strings.TrimPrefix(d.What, "webgpu."+key+"="), dev.TuningVariant(key))
		}
	}
	j, err := autoJournalJSON(fmt.Sprintf(`{"dir": %q}`, dir))
	require.NoError(t, err)
	var recs []map[string]any
	require.NoError(t, json.Unmarshal([]byte(j), &recs))
	assert.Len(t, recs, len(r.Decisions))
}
