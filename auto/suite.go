package auto

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/webtensor/webtensor/core/config"
)

// DefaultDir is the folder of the journal and the kernel cache: auto/
// under WEBTENSOR_CACHE_DIR, else under $XDG_CACHE_HOME/webtensor, else
// under the user's cache folder - beside the WebGPU kernel cache.
func DefaultDir() (string, error) {
	if d := config.String("WEBTENSOR_CACHE_DIR"); d != "" {
		return filepath.Join(d, "auto"), nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		var err error
		if base, err = os.UserCacheDir(); err != nil {
			return "", fmt.Errorf("auto: no cache folder (set WEBTENSOR_CACHE_DIR): %w", err)
		}
	}
	return filepath.Join(base, "webtensor", "auto"), nil
}

// SuiteRow is one decision of a suite run.
type SuiteRow struct {
	Workload   string  `json:"workload"`
	ID         string  `json:"id"`
	What       string  `json:"what"`
	Expected   float64 `json:"expected_gain"`
	Verdict    string  `json:"verdict"`
	TrialGain  float64 `json:"trial_gain"`
	CanaryGain float64 `json:"canary_gain"`
}

// SuiteReport sums up the agents on a suite of workloads against the
// issue's targets: of the kept proposals, how many improved their KPI by
// at least 10% and how many regressed, both judged on the canary's
// re-measurement (independent of the A/B test that selected them, so a
// lucky trial does not count twice), and how long rollbacks took.
type SuiteReport struct {
	Workloads       int        `json:"workloads"`
	Proposals       int        `json:"proposals"`
	Verdicts        Counts     `json:"verdicts"`
	KeptOver10      int        `json:"kept_over_10pct"`
	KeptRegressed   int        `json:"kept_regressed"`
	RollbackSeconds []float64  `json:"rollback_seconds,omitempty"`
	Rows            []SuiteRow `json:"rows"`
	Seconds         float64    `json:"seconds"`
}

// Counts is decisions per verdict.
type Counts map[string]int

// SuiteJob is one workload of a suite and the agent's run on it.
type SuiteJob struct {
	Workload Workload
	Tune     func() ([]Decision, error)
}

// KernelJobs are the kernel agent's runs on workloads, each its own canary
// (there is no separate rollout).
func KernelJobs(a *KernelAgent, workloads []Workload) []SuiteJob {
	out := make([]SuiteJob, len(workloads))
	for i, w := range workloads {
		out[i] = SuiteJob{Workload: w, Tune: func() ([]Decision, error) { return a.Tune(w) }}
	}
	return out
}

// DataJobs are the data agent's runs on loaders.
func DataJobs(a *DataAgent, loaders []*LoaderWorkload) []SuiteJob {
	out := make([]SuiteJob, len(loaders))
	for i, w := range loaders {
		out[i] = SuiteJob{Workload: w, Tune: func() ([]Decision, error) {
			r, err := a.Tune(w)
			return r.Decisions, err
		}}
	}
	return out
}

// RunSuite runs each job, then, with rollback, rolls every kept decision
// of fw back, newest first, timing each.
func RunSuite(fw *Framework, jobs []SuiteJob, rollback bool) (SuiteReport, error) {
	start := time.Now()
	r := SuiteReport{Workloads: len(jobs), Verdicts: Counts{}}
	var kept []string
	for _, job := range jobs {
		w := job.Workload
		ds, err := job.Tune()
		if err != nil {
			return r, fmt.Errorf("auto: suite workload %s: %w", w.Name(), err)
		}
		for _, d := range ds {
			r.Proposals++
			r.Verdicts[d.Verdict]++
			row := SuiteRow{Workload: w.Name(), ID: d.ID, What: d.Proposal.What, Expected: d.Proposal.ExpectedGain, Verdict: d.Verdict}
			if d.Trial != nil {
				row.TrialGain = d.Trial.Gain
			}
			if len(d.Canary) > 0 {
				row.CanaryGain = d.Canary[0].Gain
			}
			if d.Verdict == Kept {
				kept = append(kept, d.ID)
				if row.CanaryGain >= 0.10 {
					r.KeptOver10++
				}
				if row.CanaryGain < 0 {
					r.KeptRegressed++
				}
			}
			r.Rows = append(r.Rows, row)
		}
	}
	if rollback {
		sort.Sort(sort.Reverse(sort.StringSlice(kept)))
		for _, id := range kept {
			d, err := fw.Rollback(id)
			if err != nil {
				return r, err
			}
			r.RollbackSeconds = append(r.RollbackSeconds, d.Seconds)
		}
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// String is the report as the CLI prints it.
func (r SuiteReport) String() string {
	s := fmt.Sprintf("%-18s %-6s %-34s %9s %9s %9s  %s\n", "WORKLOAD", "ID", "PROPOSAL", "EXPECTED", "TRIAL", "CANARY", "VERDICT")
	for _, row := range r.Rows {
		s += fmt.Sprintf("%-18s %-6s %-34s %8.1f%% %8.1f%% %8.1f%%  %s\n", row.Workload, row.ID, row.What,
			100*row.Expected, 100*row.TrialGain, 100*row.CanaryGain, row.Verdict)
	}
	k := r.Verdicts[Kept]
	share := 0.0
	if k > 0 {
		share = float64(r.KeptOver10) / float64(k)
	}
	s += fmt.Sprintf("\n%d workloads, %d proposals: %v\n", r.Workloads, r.Proposals, map[string]int(r.Verdicts))
	s += fmt.Sprintf("kept: %d; improved their KPI by >= 10%% on re-measurement: %d (%.0f%%); regressed: %d\n", k, r.KeptOver10, 100*share, r.KeptRegressed)
	if len(r.RollbackSeconds) > 0 {
		mx := 0.0
		for _, v := range r.RollbackSeconds {
			mx = max(mx, v)
		}
		s += fmt.Sprintf("rollbacks: %d, slowest %.1f ms\n", len(r.RollbackSeconds), 1000*mx)
	}
	s += fmt.Sprintf("suite time: %.1f s\n", r.Seconds)
	return s
}
