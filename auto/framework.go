package auto

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// GuardResult is a check the changed state must pass regardless of the
// KPI, such as accuracy on a validation set staying above a floor.
type GuardResult struct {
	Metric float64 `json:"metric"`
	Limit  float64 `json:"limit"`
	OK     bool    `json:"ok"`
	Detail string  `json:"detail,omitempty"`
}

// Trial is where a proposal is measured. Workloads[0] is the canary
// instance: the A/B test runs on it, then, with the change applied, it is
// measured again, then each further workload (the rollout) is; a
// regression anywhere rolls the change back. Guard, when set, runs with
// the change applied before any timing. Commit, when set, runs once the
// change is kept (to persist it, e.g. in the kernel cache); it is part of
// the decision, so its effect is in the state hash after and a rollback
// undoes it.
type Trial struct {
	Workloads []Workload
	Guard     func() (GuardResult, error)
	Commit    func(p Proposal) error
}

// Config sets how strict the framework is.
type Config struct {
	Runs   int     // A/B runs a side per measurement
	Margin float64 // relative gain a proposal must reach: 0.10 is 10%
	Alpha  float64 // one-sided significance the rank test must reach
}

// DefaultConfig asks for a 10% gain at p <= 0.05 over 9 interleaved runs a
// side: with 9 against 9, complete separation gives p ~ 1e-4, so the
// test is passed by a consistent win and failed by a lucky median.
func DefaultConfig() Config { return Config{Runs: 9, Margin: 0.10, Alpha: 0.05} }

// Framework measures proposals, keeps winners and records every decision.
type Framework struct {
	cfg      Config
	settings *Settings
	state    *State
	journal  *Journal
	// mu guards loaders: the data agent's loader of each name, which its
	// settings reach (data.go).
	mu      sync.Mutex
	loaders map[string]*LoaderWorkload
}

// Open makes a framework whose journal lives in dir. Its state starts
// with its settings; add other components (the kernel cache file, a
// model's weights) with State().Add before deciding anything.
func Open(dir string, cfg Config) (*Framework, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	j, err := OpenJournal(dir)
	if err != nil {
		return nil, err
	}
	fw := &Framework{cfg: cfg, settings: NewSettings(), state: &State{}, journal: j}
	if err := fw.state.Add(fw.settings); err != nil {
		return nil, err
	}
	return fw, nil
}

// Settings are the knobs proposals may turn.
func (fw *Framework) Settings() *Settings { return fw.settings }

// State is what decisions snapshot, hash and restore.
func (fw *Framework) State() *State { return fw.state }

// Journal is the decision log.
func (fw *Framework) Journal() *Journal { return fw.journal }

// Config is the framework's strictness.
func (fw *Framework) Config() Config { return fw.cfg }

// SetConfig changes the strictness of the decisions after it (a caller
// sharing one framework, and so one journal, across calls that ask for
// different run counts or margins).
func (fw *Framework) SetConfig(cfg Config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	fw.cfg = cfg
	return nil
}

func (cfg Config) check() error {
	if cfg.Runs < 3 || cfg.Margin < 0 || cfg.Alpha <= 0 || cfg.Alpha >= 1 {
		return fmt.Errorf("auto: config needs Runs >= 3, Margin >= 0 and 0 < Alpha < 1, got %+v", cfg)
	}
	return nil
}

// Evaluate decides p: it validates it, runs the trial, keeps it or puts
// the state back exactly as it was, and records the decision. The error
// is for the journal itself failing; a failing workload or setting is a
// decision with verdict "error".
func (fw *Framework) Evaluate(agent, policy string, p Proposal, t Trial) (Decision, error) {
	recorded := p
	if math.IsNaN(p.ExpectedGain) || math.IsInf(p.ExpectedGain, 0) {
		recorded.ExpectedGain = 0 // JSON has no NaN; the reason names the value
	}
	d := Decision{ID: fw.journal.nextID(), Time: time.Now().UTC(), Agent: agent, Policy: policy, Proposal: &recorded}
	if len(t.Workloads) > 0 {
		d.Workload = t.Workloads[0].Name()
	}
	before, err := fw.state.Snapshot()
	if err != nil {
		return d, err
	}
	d.StateBefore = before.Hash()
	if err := fw.journal.saveSnapshot(d.ID, before); err != nil {
		return d, fmt.Errorf("auto: saving the snapshot before %s: %w", d.ID, err)
	}
	verdict, reason, err := fw.trial(&d, p, t)
	d.Verdict, d.Reason = verdict, reason
	if err != nil {
		d.Verdict, d.Reason = Failed, err.Error()
	}
	if d.Verdict != Kept {
		if rerr := fw.state.Restore(before); rerr != nil {
			d.Reason += "; restoring the earlier state failed: " + rerr.Error()
		}
	}
	after, err := fw.state.Snapshot()
	if err != nil {
		return d, err
	}
	d.StateAfter = after.Hash()
	if d.Verdict != Kept && d.StateAfter != d.StateBefore {
		d.Reason += fmt.Sprintf("; the state after (%.12s) differs from the state before (%.12s)", d.StateAfter, d.StateBefore)
	}
	return d, fw.journal.append(d)
}

// trial runs the stages of a decision and returns its verdict and reason;
// an error means a workload, setting or guard failed.
func (fw *Framework) trial(d *Decision, p Proposal, t Trial) (string, string, error) {
	if len(t.Workloads) == 0 {
		return Invalid, "the trial has no workload to measure on", nil
	}
	if math.IsNaN(p.ExpectedGain) || math.IsInf(p.ExpectedGain, 0) {
		return Invalid, fmt.Sprintf("expected gain %v is not a number", p.ExpectedGain), nil
	}
	if err := fw.settings.Check(p.Change); err != nil {
		return Invalid, err.Error(), nil
	}
	names := keys(p.Change)
	prev, err := fw.settings.Current(names)
	if err != nil {
		return Invalid, err.Error(), nil
	}
	if noChange(prev, p.Change) {
		return Invalid, fmt.Sprintf("every setting already has the proposed value %v", p.Change), nil
	}
	setA := func() error { return fw.settings.Apply(prev) }
	setB := func() error { return fw.settings.Apply(p.Change) }
	if t.Guard != nil {
		if err := setB(); err != nil {
			return "", "", err
		}
		g, err := t.Guard()
		if err != nil {
			return "", "", fmt.Errorf("guard: %w", err)
		}
		d.Guard = &g
		if !g.OK {
			return Rejected, fmt.Sprintf("the guard failed: %v against limit %v %s", g.Metric, g.Limit, g.Detail), nil
		}
	}
	m, err := MeasureAB(t.Workloads[0], setA, setB, fw.cfg.Runs)
	d.Trial = &m
	if err != nil {
		return "", "", err
	}
	if !m.Wins(fw.cfg.Margin, fw.cfg.Alpha) {
		return Rejected, fmt.Sprintf("gain %.1f%% (p=%.3g) on %s, need %.1f%% at p <= %g (the policy expected %.1f%%)",
			100*m.Gain, m.P, m.Workload, 100*fw.cfg.Margin, fw.cfg.Alpha, 100*p.ExpectedGain), nil
	}
	// Canary: the change in force on one instance, measured afresh; then
	// each rollout instance. Each A/B leaves the change applied (B runs
	// last in the final pair or is re-applied below).
	var lost []string
	for i, w := range t.Workloads {
		c, err := MeasureAB(w, setA, setB, fw.cfg.Runs)
		d.Canary = append(d.Canary, c)
		if err != nil {
			return "", "", err
		}
		switch {
		case i == 0 && !c.Wins(fw.cfg.Margin, fw.cfg.Alpha):
			return RolledBack, fmt.Sprintf("the canary on %s did not confirm the trial: gain %.1f%% (p=%.3g), trial %.1f%%",
				w.Name(), 100*c.Gain, c.P, 100*m.Gain), nil
		case i > 0 && c.Regressed(fw.cfg.Margin, fw.cfg.Alpha):
			lost = append(lost, fmt.Sprintf("%s %.1f%%", w.Name(), 100*c.Gain))
		}
	}
	if len(lost) > 0 {
		return RolledBack, "regressed in the rollout on " + strings.Join(lost, ", "), nil
	}
	if err := setB(); err != nil {
		return "", "", err
	}
	if t.Commit != nil {
		if err := t.Commit(p); err != nil {
			return "", "", fmt.Errorf("commit: %w", err)
		}
	}
	return Kept, fmt.Sprintf("gain %.1f%% (p=%.3g) on %s, confirmed by the canary (%.1f%%) and %d rollout instance(s); the policy expected %.1f%%",
		100*m.Gain, m.P, m.Workload, 100*d.Canary[0].Gain, len(t.Workloads)-1, 100*p.ExpectedGain), nil
}

func noChange(prev, change map[string]string) bool {
	for k, v := range change {
		if prev[k] != v {
			return false
		}
	}
	return true
}

// Rollback restores the state from just before decision id, which must be
// a kept decision not undone yet. Kept decisions made after it are undone
// with it (the state goes back to that moment) and named in the record.
// The restored state is hashed and must equal the recorded hash.
func (fw *Framework) Rollback(id string) (Decision, error) {
	start := time.Now()
	d, ok := fw.journal.Find(id)
	if !ok {
		return Decision{}, fmt.Errorf("auto: no decision %q in %s", id, fw.journal.path())
	}
	if d.Verdict != Kept {
		return Decision{}, fmt.Errorf("auto: decision %s was %s, not kept: there is nothing to roll back", id, d.Verdict)
	}
	undone := fw.journal.undone()
	if undone[id] {
		return Decision{}, fmt.Errorf("auto: decision %s was already rolled back", id)
	}
	snap, err := fw.journal.loadSnapshot(id)
	if err != nil {
		return Decision{}, err
	}
	if h := snap.Hash(); h != d.StateBefore {
		return Decision{}, fmt.Errorf("auto: the snapshot before %s hashes %.12s, the journal recorded %.12s", id, h, d.StateBefore)
	}
	now, err := fw.state.Snapshot()
	if err != nil {
		return Decision{}, err
	}
	if err := fw.state.Restore(snap); err != nil {
		return Decision{}, err
	}
	after, err := fw.state.Snapshot()
	if err != nil {
		return Decision{}, err
	}
	r := Decision{ID: fw.journal.nextID(), Time: time.Now().UTC(), Agent: d.Agent, Verdict: Undone, Of: id,
		StateBefore: now.Hash(), StateAfter: after.Hash(), Seconds: time.Since(start).Seconds()}
	seen := false
	for _, later := range fw.journal.Decisions() {
		if seen && later.Verdict == Kept && !undone[later.ID] {
			r.Undid = append(r.Undid, later.ID)
		}
		seen = seen || later.ID == id
	}
	r.Reason = fmt.Sprintf("restored the state before %s", id)
	var errs []error
	if r.StateAfter != d.StateBefore {
		errs = append(errs, fmt.Errorf("auto: after rolling back %s the state hashes %.12s, want %.12s", id, r.StateAfter, d.StateBefore))
		r.Reason += "; the restored state does not hash as recorded"
	}
	errs = append(errs, fw.journal.append(r))
	return r, errors.Join(errs...)
}
