package webgpu

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/webtensor/webtensor/wgsl"
)

// tuner picks a kernel variant per (op, shape class) by timing each
// candidate once on this device, and remembers the winner on disk so the
// measurement happens once per machine, not once per process. A corrupt or
// foreign cache file is ignored and rewritten.
type tuner struct {
	mu       sync.Mutex
	device   string
	fallback string // variant used when measuring is off or pointless
	path     string
	loaded   bool
	choices  map[string]tuneRecord
	history  map[string][]tuneRecord // earlier decisions per key, for rollback
	sync     func() error
	policy   Policy
	software bool
}

// tuneRecord is one decision and the timings behind it (nanoseconds).
type tuneRecord struct {
	Variant string           `json:"variant"`
	Timings map[string]int64 `json:"timings_ns,omitempty"`
	// Set when a policy was asked: its name, what it proposed and why,
	// whether the proposal measured faster and was kept, and any error.
	Policy   string `json:"policy,omitempty"`
	Proposed string `json:"proposed,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Kept     bool   `json:"kept,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Policy proposes kernel variants: given the device and a workload, which
// variant to try. The tuner times the proposal against its current choice
// and keeps it only when it is faster. A WebAssembly policy loaded by
// package plugins (plugins.Policy) satisfies this interface.
type Policy interface {
	PolicyName() string
	Decide(request, reply any) error
}

// PolicyRequest is what a policy is asked.
type PolicyRequest struct {
	Device   string         `json:"device"`
	Software bool           `json:"software"`
	Kind     string         `json:"kind"`
	Class    string         `json:"class"`
	Workload map[string]int `json:"workload"`
	Variants []string       `json:"variants"`
	Current  string         `json:"current"`
}

// PolicyReply is a policy's proposal.
type PolicyReply struct {
	Variant string `json:"variant"`
	Reason  string `json:"reason"`
}

// SetPolicy makes the tuner ask p about workloads it has not decided yet;
// nil goes back to timing every variant.
func (b *Backend) SetPolicy(p Policy) {
	b.tuner.mu.Lock()
	defer b.tuner.mu.Unlock()
	b.tuner.policy = p
}

// RollbackTuning undoes the latest decision for key ("matmul|<class>"):
// the previous one comes back, or, when there was none, the device's
// default variant is pinned. It returns the decision now in force.
func (b *Backend) RollbackTuning(key string) (tuneRecord, error) {
	t := &b.tuner
	t.mu.Lock()
	defer t.mu.Unlock()
	t.load()
	if _, ok := t.choices[key]; !ok {
		return tuneRecord{}, fmt.Errorf("webgpu: no tuning decision for %q to roll back", key)
	}
	var rec tuneRecord
	if h := t.history[key]; len(h) > 0 {
		rec, t.history[key] = h[len(h)-1], h[:len(h)-1]
	} else {
		rec = tuneRecord{Variant: t.fallback, Reason: "rolled back to the device default"}
	}
	t.choices[key] = rec
	t.save()
	return rec, nil
}

type tuneFile struct {
	Device  string                `json:"device"`
	Kernels string                `json:"kernels"` // wgsl.Fingerprint of the kernels measured
	Choices map[string]tuneRecord `json:"choices"`
}

// tuneCachePath is one file per device, so two adapters never overwrite
// each other's decisions.
func tuneCachePath(device string) string {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserCacheDir(); err != nil {
			return ""
		}
	}
	sum := sha256.Sum256([]byte(device))
	return filepath.Join(dir, "webtensor", fmt.Sprintf("webgpu-tuning-%x.json", sum[:6]))
}

func (t *tuner) load() {
	if t.loaded {
		return
	}
	t.loaded = true
	t.choices = map[string]tuneRecord{}
	t.history = map[string][]tuneRecord{}
	if os.Getenv("WEBTENSOR_TUNE") == "off" {
		return
	}
	t.path = tuneCachePath(t.device)
	raw, err := os.ReadFile(t.path)
	if err != nil {
		return
	}
	var f tuneFile
	if json.Unmarshal(raw, &f) != nil || f.Device != t.device || f.Kernels != wgsl.Fingerprint() {
		return // corrupt, another device's, or measured with other kernels: decide afresh
	}
	for k, v := range f.Choices {
		t.choices[k] = v
	}
}

// save writes the cache through a temporary file and a rename, so two
// processes never leave a half-written file behind.
func (t *tuner) save() {
	if t.path == "" {
		return
	}
	raw, err := json.MarshalIndent(tuneFile{Device: t.device, Kernels: wgsl.Fingerprint(), Choices: t.choices}, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(t.path), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), "tuning-*.json")
	if err != nil {
		return
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), t.path) != nil {
		os.Remove(tmp.Name())
	}
}

// choose returns the variant for kind and class. Unknown classes are
// decided by measurement: run(v) must perform the real work with variant v
// (the last run leaves a correct result). With a policy set, only its
// proposal and the current default are timed; otherwise every variant is.
func (t *tuner) choose(kind, class string, workload map[string]int, variants []string, current string, run func(v string) error) string {
	key := kind + "|" + class
	t.mu.Lock()
	t.load()
	rec, ok := t.choices[key]
	off := os.Getenv("WEBTENSOR_TUNE") == "off"
	policy := t.policy
	t.mu.Unlock()
	if ok {
		return rec.Variant
	}
	if off || len(variants) < 2 || canBlock() != nil {
		return current
	}
	candidates := variants
	rec = tuneRecord{Timings: map[string]int64{}}
	if policy != nil {
		rec.Policy = policy.PolicyName()
		var reply PolicyReply
		req := PolicyRequest{Device: t.device, Software: t.software, Kind: kind, Class: class, Workload: workload,
			Variants: variants, Current: current}
		switch err := policy.Decide(req, &reply); {
		case err != nil:
			rec.Error = err.Error()
		case !slices.Contains(variants, reply.Variant):
			rec.Error = fmt.Sprintf("proposed %q, not one of %v", reply.Variant, variants)
		default:
			rec.Proposed, rec.Reason = reply.Variant, reply.Reason
			candidates = []string{current, reply.Variant}
			if reply.Variant == current {
				candidates = candidates[:1]
			}
		}
	}
	best := time.Duration(-1)
	for _, v := range candidates {
		d, ok := t.measure(v, run, best)
		if !ok {
			continue
		}
		rec.Timings[v] = d.Nanoseconds()
		if best < 0 || d < best {
			best, rec.Variant = d, v
		}
	}
	if rec.Variant == "" {
		return current
	}
	rec.Kept = rec.Proposed != "" && rec.Variant == rec.Proposed
	t.mu.Lock()
	if prev, ok := t.choices[key]; ok {
		t.history[key] = append(t.history[key], prev)
	}
	t.choices[key] = rec
	t.save()
	t.mu.Unlock()
	return rec.Variant
}

// measure times variant v: one warm-up run (which compiles it), then the
// fastest of three synced runs - the minimum, because on a busy machine
// interference only ever adds time. A variant whose warm-up alone takes
// several times the best so far cannot win; its warm-up time is returned
// without the repeats (a tiled kernel on a software driver would otherwise
// cost seconds).
func (t *tuner) measure(v string, run func(v string) error, best time.Duration) (time.Duration, bool) {
	warm := time.Now()
	if run(v) != nil || t.sync() != nil {
		return 0, false
	}
	if w := time.Since(warm); best > 0 && w > 4*best {
		return w, true
	}
	fastest := time.Duration(-1)
	for range 3 {
		start := time.Now()
		if run(v) != nil || t.sync() != nil {
			return 0, false
		}
		if d := time.Since(start); fastest < 0 || d < fastest {
			fastest = d
		}
	}
	return fastest, true
}

// Tuning reports the decisions made so far, for doctor and tests.
func (b *Backend) Tuning() map[string]tuneRecord {
	b.tuner.mu.Lock()
	defer b.tuner.mu.Unlock()
	b.tuner.load()
	out := make(map[string]tuneRecord, len(b.tuner.choices))
	for k, v := range b.tuner.choices {
		out[k] = v
	}
	return out
}

// ReadTuningFile reads a tuning cache and checks it belongs to device.
func ReadTuningFile(path, device string) (map[string]tuneRecord, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f tuneFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("tuning cache %s is corrupt (it will be rewritten): %w", path, err)
	}
	if !strings.HasPrefix(f.Device, device) {
		return nil, fmt.Errorf("tuning cache %s is for device %q, not %q", path, f.Device, device)
	}
	return f.Choices, nil
}

// ForgetTuning drops the decisions held in memory; the next workload reads
// the cache file again (from $XDG_CACHE_HOME as it is then).
func (b *Backend) ForgetTuning() {
	b.tuner.mu.Lock()
	defer b.tuner.mu.Unlock()
	b.tuner.loaded = false
	b.tuner.choices, b.tuner.history = nil, nil
}

// TuningFile is where this device's decisions are cached ("" when off).
func (b *Backend) TuningFile() string {
	b.tuner.mu.Lock()
	defer b.tuner.mu.Unlock()
	b.tuner.load()
	return b.tuner.path
}
