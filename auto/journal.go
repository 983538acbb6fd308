package auto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Verdicts a decision can end with.
const (
	Kept       = "kept"        // measured better, rolled out, in force
	Rejected   = "rejected"    // lost its A/B test or broke the guard; never applied beyond the test
	RolledBack = "rolled_back" // won its test but regressed in the canary or rollout; undone automatically
	Invalid    = "invalid"     // named unknown settings or values, or a gain that is not a number
	Failed     = "error"       // the workload or a setting failed; the earlier state was restored
	Undone     = "rollback"    // the record of a Rollback call
)

// Decision is one line of the journal.
type Decision struct {
	ID       string        `json:"id"`
	Time     time.Time     `json:"time"`
	Agent    string        `json:"agent"`
	Workload string        `json:"workload,omitempty"` // the canary workload the proposal was measured on
	Policy   string        `json:"policy,omitempty"`
	Proposal *Proposal     `json:"proposal,omitempty"`
	Trial    *Measurement  `json:"trial,omitempty"`  // the A/B test on the canary instance
	Canary   []Measurement `json:"canary,omitempty"` // re-measured with the change applied: the canary, then each rollout instance
	Guard    *GuardResult  `json:"guard,omitempty"`
	Verdict  string        `json:"verdict"`
	Reason   string        `json:"reason"`
	// The hash of the state (Snapshot.Hash) before the decision and after it.
	StateBefore string `json:"state_before"`
	StateAfter  string `json:"state_after"`
	// Set on a rollback record: the decision undone, the later kept ones it
	// undid with it, and how long the restore took.
	Of      string   `json:"of,omitempty"`
	Undid   []string `json:"undid,omitempty"`
	Seconds float64  `json:"seconds,omitempty"`
}

// Journal is the append-only decision log (decisions.jsonl) and the
// snapshot taken before each decision (snapshots/<id>.json), in one folder.
type Journal struct {
	mu        sync.Mutex
	dir       string
	decisions []Decision
}

// OpenJournal reads dir's journal, creating the folder when needed. A line
// that does not parse is an error naming the file and line: a journal
// silently cut short would make rollbacks lie.
func OpenJournal(dir string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Join(dir, "snapshots"), 0o755); err != nil {
		return nil, fmt.Errorf("auto: journal folder: %w", err)
	}
	j := &Journal{dir: dir}
	f, err := os.Open(j.path())
	if errors.Is(err, os.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auto: journal: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var d Decision
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("auto: %s line %d: %w", j.path(), line, err)
		}
		j.decisions = append(j.decisions, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auto: reading %s: %w", j.path(), err)
	}
	return j, nil
}

func (j *Journal) path() string { return filepath.Join(j.dir, "decisions.jsonl") }

func (j *Journal) snapshotPath(id string) string {
	return filepath.Join(j.dir, "snapshots", id+".json")
}

// Dir is the journal's folder.
func (j *Journal) Dir() string { return j.dir }

// Decisions lists every record, oldest first.
func (j *Journal) Decisions() []Decision {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Decision(nil), j.decisions...)
}

// Find returns the record with id.
func (j *Journal) Find(id string) (Decision, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, d := range j.decisions {
		if d.ID == id {
			return d, true
		}
	}
	return Decision{}, false
}

// nextID numbers decisions in the order they are made, across processes
// sharing the folder.
func (j *Journal) nextID() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return fmt.Sprintf("d%04d", len(j.decisions)+1)
}

// append writes d as one line and keeps it in memory.
func (j *Journal) append(d Decision) error {
	line, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("auto: decision %s: %w", d.ID, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	f, err := os.OpenFile(j.path(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("auto: journal: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("auto: writing decision %s to %s: %w", d.ID, j.path(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("auto: journal: %w", err)
	}
	j.decisions = append(j.decisions, d)
	return nil
}

func (j *Journal) saveSnapshot(id string, s Snapshot) error {
	b, err := encodeSnapshot(s)
	if err != nil {
		return err
	}
	return writeAtomic(j.snapshotPath(id), b)
}

func (j *Journal) loadSnapshot(id string) (Snapshot, error) {
	b, err := os.ReadFile(j.snapshotPath(id))
	if err != nil {
		return nil, fmt.Errorf("auto: the snapshot before %s: %w", id, err)
	}
	s, err := decodeSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("auto: the snapshot before %s (%s): %w", id, j.snapshotPath(id), err)
	}
	return s, nil
}

// active reports, for each kept decision, whether a later rollback undid it.
func (j *Journal) undone() map[string]bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := map[string]bool{}
	for _, d := range j.decisions {
		if d.Verdict == Undone {
			out[d.Of] = true
			for _, u := range d.Undid {
				out[u] = true
			}
		}
	}
	return out
}
