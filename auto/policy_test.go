package auto

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/backends/cpu"
)

// ownedWorkload is a fake workload with a setting of its own, like a
// graph's fusion switch, whose KPI also depends on the CPU thread count.
type ownedWorkload struct {
	*fakeWorkload
	fused bool
}

func (o *ownedWorkload) OwnSettings() []Setting {
	return []Setting{{Name: "graph.fake.fuse", Choices: []string{"off", "on"},
		Get: func() string {
			if o.fused {
				return "on"
			}
			return "off"
		},
		Set: func(v string) error { o.fused = v == "on"; return nil }}}
}

// Run costs 40% less fused and 20% more on one thread than on more.
func (o *ownedWorkload) Run() (float64, error) {
	kpi, err := o.fakeWorkload.Run()
	if o.fused {
		kpi *= 0.6
	}
	if cpu.NumThreads() == 1 {
		kpi *= 1.2
	}
	return kpi, err
}

// The shipped policy, built as `make plugins` builds it, drives the kernel
// agent: it proposes fusing the graph and one thread for its small ops;
// the first wins and lands in the kernel cache, the second loses, and a
// second process applies the cached winner without measuring.
func TestDefaultPolicyKernelAgent(t *testing.T) {
	dir := t.TempDir()
	fw, s := newFramework(t, dir)
	pol := loadPolicy(t, "plugins-wasm/policies/auto", "kernel")
	assert.Equal(t, "auto.kernel", pol.PolicyName())
	a, err := NewKernelAgent(fw, pol)
	require.NoError(t, err)
	w := &ownedWorkload{fakeWorkload: newFakeWorkload("fake", s)}
	w.op = true
	threads := CPUSettings()[0]
	t.Cleanup(func() { require.NoError(t, threads.Set(threads.Get())) })

	ds, err := a.Tune(w)
	require.NoError(t, err)
	byChange := map[string]Decision{}
	for _, d := range ds {
		for k, v := range d.Proposal.Change {
			byChange[k+"="+v] = d
		}
		assert.Equal(t, "auto.kernel", d.Policy)
		assert.NotEmpty(t, d.Proposal.Why)
	}
	fuse, ok := byChange["graph.fake.fuse=on"]
	require.True(t, ok, "decisions: %+v", ds)
	assert.Equal(t, Kept, fuse.Verdict, fuse.Reason)
	if runtime.GOMAXPROCS(0) > 1 {
		one, ok := byChange["cpu.threads=1"]
		require.True(t, ok, "small ops: the policy proposes one thread; decisions: %+v", ds)
		assert.Equal(t, Rejected, one.Verdict, "one thread measured 20%% slower: %s", one.Reason)
	}
	cached, err := a.Cached("fake")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"graph.fake.fuse": "on"}, cached)

	fw2, s2 := newFramework(t, dir)
	a2, err := NewKernelAgent(fw2, pol)
	require.NoError(t, err)
	w2 := &ownedWorkload{fakeWorkload: newFakeWorkload("fake", s2)}
	require.NoError(t, a2.ApplyCached(w2))
	assert.True(t, w2.fused)

	// The policy learns from the journal: asked again, it does not
	// propose what was already measured and lost.
	ds, err = a.Tune(w)
	require.NoError(t, err)
	for _, d := range ds {
		assert.NotEqual(t, "1", d.Proposal.Change["cpu.threads"], "a rejected change came back: %+v", d)
	}
}

// Hostile policies are contained: one that loops is stopped by the
// deadline, one that traps or eats memory fails, and none of them changes
// the state or the journal; one that floods gets a bounded number of
// proposals measured, one that names nonsense gets invalid decisions, and
// one that lies about its gain loses its A/B test.
func TestHostilePoliciesAreContained(t *testing.T) {
	dir := t.TempDir()
	fw, s := newFramework(t, dir)
	w := newFakeWorkload("fake", s)
	const hostile = "auto/testdata/hostile"
	for _, name := range []string{"loop", "trap", "hog"} {
		t.Run(name, func(t *testing.T) {
			a, err := NewKernelAgent(fw, loadPolicy(t, hostile, name))
			require.NoError(t, err)
			before := hash(t, fw)
			n := len(fw.Journal().Decisions())
			ds, err := a.Tune(w)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "hostile."+name)
			assert.Empty(t, ds)
			assert.Equal(t, before, hash(t, fw))
			assert.Len(t, fw.Journal().Decisions(), n)
		})
	}
	t.Run("flood", func(t *testing.T) {
		a, err := NewKernelAgent(fw, loadPolicy(t, hostile, "flood"))
		require.NoError(t, err)
		ds, err := a.Tune(w)
		require.NoError(t, err)
		assert.Len(t, ds, maxProposals)
		for _, d := range ds {
			assert.Equal(t, Rejected, d.Verdict)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		a, err := NewKernelAgent(fw, loadPolicy(t, hostile, "garbage"))
		require.NoError(t, err)
		ds, err := a.Tune(w)
		require.NoError(t, err)
		require.Len(t, ds, 3)
		for _, d := range ds {
			assert.Equal(t, Invalid, d.Verdict, d.Reason)
		}
	})
	t.Run("liar", func(t *testing.T) {
		a, err := NewKernelAgent(fw, loadPolicy(t, hostile, "liar"))
		require.NoError(t, err)
		before := hash(t, fw)
		ds, err := a.Tune(w)
		require.NoError(t, err)
		require.Len(t, ds, 1)
		assert.Equal(t, Rejected, ds[0].Verdict)
		assert.Equal(t, 9.0, ds[0].Proposal.ExpectedGain)
		assert.Less(t, ds[0].Trial.Gain, -0.2)
		assert.Equal(t, before, hash(t, fw))
	})
	assert.Equal(t, "base", s.value)
	_, err := os.Stat(filepath.Join(dir, KernelCacheFile))
	assert.True(t, os.IsNotExist(err), "no hostile proposal reached the kernel cache")
}
