package auto

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/webtensor/webtensor/core"
	"github.com/webtensor/webtensor/nn"
)

// A proposal is kept only when it measured better by the margin; what
// the policy claimed does not matter, and a rejected proposal leaves the
// state exactly as it found it.
func TestKeepsOnlyMeasuredWins(t *testing.T) {
	dir := t.TempDir()
	fw, s := newFramework(t, dir)
	w := newFakeWorkload("fake", s)
	cases := []struct {
		p    Proposal
		want string
	}{
		{prop("fake.speed", "slow", 5), Rejected},   // a lie: 30% worse
		{prop("fake.speed", "same", 0.5), Rejected}, // no effect
		{prop("fake.speed", "fast", 0.01), Kept},    // modest claim, 20% better
		{prop("fake.speed", "slow", 0.2), Rejected}, // worse than the kept state
	}
	for _, c := range cases {
		before := hash(t, fw)
		d, err := fw.Evaluate("test", "test.scripted", c.p, Trial{Workloads: []Workload{w}})
		require.NoError(t, err)
		assert.Equal(t, c.want, d.Verdict, "%s: %s", c.p.What, d.Reason)
		assert.Equal(t, before, d.StateBefore)
		assert.Equal(t, hash(t, fw), d.StateAfter)
		require.NotNil(t, d.Trial)
		assert.Len(t, d.Trial.A, DefaultConfig().Runs)
		if c.want == Kept {
			assert.NotEqual(t, d.StateBefore, d.StateAfter)
			assert.InDelta(t, 0.2, d.Trial.Gain, 0.03)
			assert.Less(t, d.Trial.P, 0.01)
			require.Len(t, d.Canary, 1)
		} else {
			assert.Equal(t, d.StateBefore, d.StateAfter, "a rejected proposal leaves the state as it was")
		}
	}
	assert.Equal(t, "fast", s.value)

	// The journal is JSON lines, one per decision, each with its proposal,
	// measurements, verdict and state hashes.
	f, err := os.Open(filepath.Join(dir, "decisions.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var lines []map[string]any
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		lines = append(lines, m)
	}
	require.Len(t, lines, 4)
	for _, key := range []string{"id", "proposal", "trial", "verdict", "reason", "state_before", "state_after"} {
		assert.Contains(t, lines[2], key)
	}
	assert.Equal(t, 5.0, lines[0]["proposal"].(map[string]any)["expected_gain"], "the claim is recorded, never trusted")
}

// Proposals that name unknown settings, offered-nowhere values, nothing,
// or a gain that is not a number are recorded as invalid and change
// nothing.
func TestInvalidProposals(t *testing.T) {
	fw, s := newFramework(t, t.TempDir())
	w := newFakeWorkload("fake", s)
	bad := []Proposal{
		prop("no.such", "1", 0.5),
		prop("fake.speed", "warp", 0.5),
		{What: "nothing", Change: map[string]string{}},
		{What: "nan", ExpectedGain: math.NaN(), Change: change("fake.speed", "fast")},
		prop("fake.speed", "base", 0.5),
	}
	before := hash(t, fw)
	for _, p := range bad {
		d, err := fw.Evaluate("test", "", p, Trial{Workloads: []Workload{w}})
		require.NoError(t, err)
		assert.Equal(t, Invalid, d.Verdict, p.What)
		assert.NotEmpty(t, d.Reason)
	}
	assert.Equal(t, before, hash(t, fw))
	assert.Zero(t, w.calls, "nothing invalid is measured")
}

// A change that wins on the canary but regresses another instance of the
// rollout is rolled back automatically; so is one whose canary run does
// not confirm the trial.
func TestCanaryRollsBackRegressions(t *testing.T) {
	fw, s := newFramework(t, t.TempDir())
	canary := newFakeWorkload("canary", s)
	other := newFakeWorkload("other", s)
	other.scale = map[string]float64{"base": 1, "fast": 1.25}
	before := hash(t, fw)
	d, err := fw.Evaluate("test", "", prop("fake.speed", "fast", 0.2), Trial{Workloads: []Workload{canary, other}})
	require.NoError(t, err)
	assert.Equal(t, RolledBack, d.Verdict, d.Reason)
	assert.Contains(t, d.Reason, "other")
	require.Len(t, d.Canary, 2)
	assert.Less(t, d.Canary[1].Gain, -0.2)
	assert.Equal(t, before, hash(t, fw))
	assert.Equal(t, "base", s.value)

	// The trial wins, then the effect vanishes (the machine changed, the
	// first runs were lucky): the canary does not confirm it.
	fading := newFakeWorkload("fading", s)
	runs := DefaultConfig().Runs
	fading.after = func(calls int, kpi float64) float64 {
		if calls > 2*(runs+1) && s.value == "fast" {
			return kpi / 0.8
		}
		return kpi
	}
	d, err = fw.Evaluate("test", "", prop("fake.speed", "fast", 0.2), Trial{Workloads: []Workload{fading}})
	require.NoError(t, err)
	assert.Equal(t, RolledBack, d.Verdict, d.Reason)
	assert.Greater(t, d.Trial.Gain, 0.15)
	assert.Contains(t, d.Reason, "did not confirm")
	assert.Equal(t, before, hash(t, fw))
}

// A guard that fails rejects the change before anything is timed.
func TestGuardRejects(t *testing.T) {
	fw, s := newFramework(t, t.TempDir())
	w := newFakeWorkload("fake", s)
	guard := func() (GuardResult, error) {
		return GuardResult{Metric: 0.5, Limit: 0.9, OK: s.value != "fast"}, nil
	}
	d, err := fw.Evaluate("test", "", prop("fake.speed", "fast", 0.2), Trial{Workloads: []Workload{w}, Guard: guard})
	require.NoError(t, err)
	assert.Equal(t, Rejected, d.Verdict)
	assert.Contains(t, d.Reason, "guard")
	assert.Zero(t, w.calls)
	assert.Equal(t, "base", s.value)
}

// rollbackFixture is a framework whose state has all three kinds of
// component: settings, a kernel cache file and a model's weights.
func rollbackFixture(t *testing.T, dir string) (*Framework, *fakeSpeed, *KernelAgent, *nn.Linear) {
	t.Helper()
	fw, s := newFramework(t, dir)
	ka, err := NewKernelAgent(fw, scripted{})
	require.NoError(t, err)
	core.ManualSeed(3)
	lin, err := nn.NewLinear(8, 4)
	require.NoError(t, err)
	guard := AccuracyGuard(func() (float64, error) { return 1, nil }, 0)
	_, err = NewQuantAgent(fw, scripted{}, "tiny", lin, guard)
	require.NoError(t, err)
	return fw, s, ka, lin
}

// Rollback restores the exact earlier state - settings, the kernel cache
// on disk and the weights - checked by hashing each; it works from
// another process (a fresh framework on the same folder) too, and a
// decision cannot be rolled back twice.
func TestRollbackRestoresExactState(t *testing.T) {
	dir := t.TempDir()
	fw, s, ka, lin := rollbackFixture(t, dir)
	w := newFakeWorkload("fake", s)
	weights0, err := lin.Weight.Tensor().Bytes()
	require.NoError(t, err)
	cache0, _ := os.ReadFile(filepath.Join(dir, KernelCacheFile))
	h0 := hash(t, fw)

	commit := func(p Proposal) error { return rememberWinners(ka.cache, w.Name(), p.Change) }
	p := Proposal{What: "fast and int8", ExpectedGain: 0.2, Change: map[string]string{"fake.speed": "fast", "quant.tiny": "int8"}}
	d1, err := fw.Evaluate("test", "", p, Trial{Workloads: []Workload{w}, Commit: commit})
	require.NoError(t, err)
	require.Equal(t, Kept, d1.Verdict, d1.Reason)
	weights1, err := lin.Weight.Tensor().Bytes()
	require.NoError(t, err)
	assert.NotEqual(t, weights0, weights1, "int8 changed the weights")
	cached, err := ka.Cached("fake")
	require.NoError(t, err)
	assert.Equal(t, "fast", cached["fake.speed"])
	h1 := hash(t, fw)
	assert.NotEqual(t, h0, h1)

	r, err := fw.Rollback(d1.ID)
	require.NoError(t, err)
	assert.Equal(t, Undone, r.Verdict)
	assert.Equal(t, h0, hash(t, fw))
	assert.Equal(t, h0, r.StateAfter)
	assert.Greater(t, r.Seconds, 0.0)
	weightsBack, err := lin.Weight.Tensor().Bytes()
	require.NoError(t, err)
	assert.Equal(t, weights0, weightsBack)
	cacheBack, _ := os.ReadFile(filepath.Join(dir, KernelCacheFile))
	assert.Equal(t, cache0, cacheBack)
	assert.Equal(t, "base", s.value)
	_, err = fw.Rollback(d1.ID)
	assert.ErrorContains(t, err, "already rolled back")

	// Keep it again, then roll it back from a fresh framework on the folder.
	d2, err := fw.Evaluate("test", "", p, Trial{Workloads: []Workload{w}, Commit: commit})
	require.NoError(t, err)
	require.Equal(t, Kept, d2.Verdict, d2.Reason)
	fw2, s2, _, lin2 := rollbackFixture(t, dir)
	require.NoError(t, fw2.Settings().Apply(map[string]string{"fake.speed": "fast", "quant.tiny": "int8"}))
	assert.Equal(t, hash(t, fw), hash(t, fw2), "the same state in the second process")
	_, err = fw2.Rollback(d2.ID)
	require.NoError(t, err)
	assert.Equal(t, h0, hash(t, fw2))
	assert.Equal(t, "base", s2.value)
	w2, err := lin2.Weight.Tensor().Bytes()
	require.NoError(t, err)
	assert.Equal(t, weights0, w2)

	// Rejected decisions and unknown ids have nothing to roll back.
	d3, err := fw2.Evaluate("test", "", prop("fake.speed", "slow", 1), Trial{Workloads: []Workload{w}})
	require.NoError(t, err)
	require.Equal(t, Rejected, d3.Verdict)
	_, err = fw2.Rollback(d3.ID)
	assert.ErrorContains(t, err, "not kept")
	_, err = fw2.Rollback("d9999")
	assert.ErrorContains(t, err, `no decision "d9999"`)
}

// Rolling back an earlier decision undoes the later ones with it, and the
// record names them.
func TestRollbackUndoesLaterDecisions(t *testing.T) {
	fw, s, _, _ := rollbackFixture(t, t.TempDir())
	w := newFakeWorkload("fake", s)
	h0 := hash(t, fw)
	d1, err := fw.Evaluate("test", "", prop("fake.speed", "fast", 0.2), Trial{Workloads: []Workload{w}})
	require.NoError(t, err)
	require.Equal(t, Kept, d1.Verdict)
	d2, err := fw.Evaluate("test", "", prop("quant.tiny", "bf16", 0.5), Trial{Workloads: []Workload{w}})
	require.NoError(t, err)
	require.Equal(t, Rejected, d2.Verdict, "bf16 does not change the fake KPI")
	s.effect["base"] = 0.6 // make the next change a win: back to base is now faster
	d3, err := fw.Evaluate("test", "", Proposal{What: "both", Change: map[string]string{"fake.speed": "base", "quant.tiny": "f16"}}, Trial{Workloads: []Workload{w}})
	require.NoError(t, err)
	require.Equal(t, Kept, d3.Verdict, d3.Reason)
	r, err := fw.Rollback(d1.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{d3.ID}, r.Undid)
	assert.Equal(t, h0, hash(t, fw))
	_, err = fw.Rollback(d3.ID)
	assert.ErrorContains(t, err, "already rolled back")
}

func TestMannWhitney(t *testing.T) {
	low := []float64{1, 2, 3, 4, 5}
	high := []float64{6, 7, 8, 9, 10}
	assert.Less(t, mannWhitneyLess(low, high), 0.01)
	assert.Greater(t, mannWhitneyLess(high, low), 0.99)
	assert.InDelta(t, 0.5, mannWhitneyLess(low, low), 0.15)
	assert.Equal(t, 3.0, median([]float64{5, 1, 3}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
}
