package auto

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/data"
)

// jpegLoader is a loader over 32 real 96x96 JPEG photos in a fresh folder
// (decoded at every read: about a millisecond a record), batch 8, no
// workers, read four batches a run.
func jpegLoader(t *testing.T, name string) *LoaderWorkload {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "photos")
	require.NoError(t, imageFolder(dir, 2, 16, 96, 96, "jpeg", 9))
	ds, err := data.ImageFolder(dir, data.ImageOptions{})
	require.NoError(t, err)
	l, err := data.NewLoader(ds, data.Options{BatchSize: 8, Shuffle: true, Seed: 4})
	require.NoError(t, err)
	w, err := NewLoaderWorkload(name, l, LoaderOptions{})
	require.NoError(t, err)
	require.Equal(t, 4, w.Batches())
	return w
}

// The shipped data policy, on a loader of JPEG photos, proposes caching
// the decoded records; the A/B test keeps it (a copy against a decode),
// under the guard that the batches are the same samples in the same
// order, and the kernel cache remembers it for the loader's name: a
// second process applies it without measuring. Rolling the decision back
// turns the cache off again and removes what was remembered.
func TestDataAgentCachesDecodedImages(t *testing.T) {
	dir := t.TempDir()
	fw, err := Open(dir, DefaultConfig())
	require.NoError(t, err)
	pol := loadPolicy(t, "plugins-wasm/policies/auto", "data")
	a, err := NewDataAgent(fw, pol)
	require.NoError(t, err)
	w := jpegLoader(t, "photos")

	r, err := a.Tune(w)
	require.NoError(t, err)
	require.NotEmpty(t, r.Decisions)
	first := r.Decisions[0]
	assert.Equal(t, "auto.data", first.Policy)
	assert.Equal(t, map[string]string{"data.photos.cache": "on"}, first.Proposal.Change)
	require.Equal(t, Kept, first.Verdict, first.Reason)
	require.NotNil(t, first.Guard)
	assert.True(t, first.Guard.OK)
	assert.Contains(t, first.Guard.Detail, "same samples in the same order")
	assert.Greater(t, first.Trial.Gain, 0.5, "a copy against a JPEG decode")
	assert.Equal(t, data.Pipeline{Workers: 0, Prefetch: 2}, r.Before)
	assert.True(t, r.After.Cache)
	assert.True(t, w.Loader().Pipeline().Cache)
	assert.Greater(t, r.SamplesPerSecAfter, 2*r.SamplesPerSecBefore)
	assert.Equal(t, int64(32), r.Cache.Records)
	for _, d := range r.Decisions {
		assert.NotEqual(t, Failed, d.Verdict, d.Reason)
	}

	fw2, err := Open(dir, DefaultConfig())
	require.NoError(t, err)
	a2, err := NewDataAgent(fw2, pol)
	require.NoError(t, err)
	w2 := jpegLoader(t, "photos")
	r2, err := a2.Apply(w2)
	require.NoError(t, err)
	assert.Equal(t, "on", r2.Cached["data.photos.cache"])
	assert.True(t, w2.Loader().Pipeline().Cache, "the second process applies the winner")

	back, err := fw.Rollback(first.ID)
	require.NoError(t, err)
	assert.Equal(t, first.StateBefore, back.StateAfter)
	assert.False(t, w.Loader().Pipeline().Cache)
	assert.Equal(t, data.CacheStats{}, w.Loader().CacheStats(), "a rollback frees the records the cache held")
	assert.NoFileExists(t, filepath.Join(dir, KernelCacheFile))
}

// unstable is a dataset that never reads a record the same way twice, as
// one with random augmentation would: no pipeline change can be shown to
// keep its samples, so the guard turns every proposal down.
type unstable struct{ calls *atomic.Int64 }

func (u unstable) Len() int { return 16 }
func (u unstable) Fields() []data.Field {
	return []data.Field{{Name: "x", DType: core.I64, Shape: core.Shape{}}}
}
func (u unstable) Read(i int, dst [][]byte) error {
	binary.LittleEndian.PutUint64(dst[0], uint64(u.calls.Add(1)))
	return nil
}

// rounds is a policy answering round k with props[k], then nothing.
type rounds struct {
	props [][]Proposal
	n     int
}

func (*rounds) PolicyName() string { return "test.rounds" }
func (r *rounds) Propose(Request) ([]Proposal, error) {
	if r.n >= len(r.props) {
		return nil, nil
	}
	r.n++
	return r.props[r.n-1], nil
}

func TestDataGuardRefusesChangedSamples(t *testing.T) {
	fw, err := Open(t.TempDir(), DefaultConfig())
	require.NoError(t, err)
	a, err := NewDataAgent(fw, &rounds{props: [][]Proposal{{prop("data.aug.workers", "1", 0.5)}}})
	require.NoError(t, err)
	l, err := data.NewLoader(unstable{new(atomic.Int64)}, data.Options{BatchSize: 4})
	require.NoError(t, err)
	w, err := NewLoaderWorkload("aug", l, LoaderOptions{})
	require.NoError(t, err)
	r, err := a.Tune(w)
	require.NoError(t, err)
	require.Len(t, r.Decisions, 1)
	d := r.Decisions[0]
	assert.Equal(t, Rejected, d.Verdict)
	assert.Contains(t, d.Reason, "the guard failed")
	assert.Contains(t, d.Guard.Detail, "same samples in the same order")
	assert.Equal(t, 0, l.Pipeline().Workers, "the rejected change is not in force")
}

// A loader registered after a decision neither changes that decision's
// state hash nor escapes its rollback: its settings are at their
// defaults, which snapshots leave out and restores put back.
func TestDataSettingsRegisteredLater(t *testing.T) {
	dir := t.TempDir()
	fw, err := Open(dir, DefaultConfig())
	require.NoError(t, err)
	a, err := NewDataAgent(fw, &rounds{props: [][]Proposal{{prop("data.first.cache", "on", 0.9)}}})
	require.NoError(t, err)
	first := jpegLoader(t, "first")
	r, err := a.Tune(first)
	require.NoError(t, err)
	require.Len(t, r.Decisions, 1)
	d := r.Decisions[0]
	require.Equal(t, Kept, d.Verdict, d.Reason)

	ds, err := data.FromTensors([]*core.Tensor{core.FromSlice([]float32{1, 2, 3, 4}, core.Shape{4})})
	require.NoError(t, err)
	l, err := data.NewLoader(ds, data.Options{BatchSize: 2, Workers: 1})
	require.NoError(t, err)
	later, err := NewLoaderWorkload("later", l, LoaderOptions{})
	require.NoError(t, err)
	before := hash(t, fw)
	_, err = a.Apply(later)
	require.NoError(t, err)
	assert.Equal(t, before, hash(t, fw), "registering a loader at its defaults changes no hash")
	require.NoError(t, fw.Settings().Apply(map[string]string{"data.later.workers": "0"}))

	back, err := fw.Rollback(d.ID)
	require.NoError(t, err, back.Reason)
	assert.Equal(t, d.StateBefore, back.StateAfter)
	assert.False(t, first.Loader().Pipeline().Cache)
	assert.Equal(t, 1, l.Pipeline().Workers, "the later loader is back at its default")

	_, err = NewLoaderWorkload("a.b", l, LoaderOptions{})
	assert.EqualError(t, err, `auto: loader name "a.b": want 1 to 64 letters, digits, '_', ':' or '-'`)
	_, err = NewLoaderWorkload("x", l, LoaderOptions{Batches: 3})
	assert.EqualError(t, err, "auto: loader x: 3 batches a run, the epoch has 2")
}

// The built-in data workloads make their datasets once, in a folder
// renamed into place, and read the same files on the next open.
func TestBuiltinLoaders(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"data-npy-features", "data-parquet-table"} {
		w, err := BuiltinLoader(name, dir)
		require.NoError(t, err)
		d1, err := w.Digest()
		require.NoError(t, err)
		w2, err := BuiltinLoader(name, dir)
		require.NoError(t, err)
		d2, err := w2.Digest()
		require.NoError(t, err)
		assert.Equal(t, d1, d2, name)
		kpi, err := w.Run()
		require.NoError(t, err)
		assert.Greater(t, kpi, 0.0)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "datasets"))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary folder is left")
	_, err = BuiltinLoader("nope", dir)
	assert.ErrorContains(t, err, `no built-in data workload "nope"`)
}
